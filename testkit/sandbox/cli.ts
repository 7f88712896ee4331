// `npm run local-up | local-down | local-status` — the sandbox as a command.
//   up [--spokes N] [--root DIR] [--spoke-controllers kuadrant,envoy-gateway] [--without-registration]
//                                   start (or check and repair) the sandbox; with the real spoke policy
//                                   controllers (Kuadrant operator on every spoke, Envoy Gateway on spoke-1);
//                                   without OCM registration (when laid out: nothing then marks a cluster
//                                   unavailable, e.g. for ManagedClusters that have no agent)
//   down [--purge] [--root DIR]     stop every process it started; --purge also deletes its data
//   status [--root DIR]             what runs where
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Sandbox } from './sandbox.ts';
import { parseSpokeControllers } from './spokecontrollers.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    spokes: { type: 'string', default: '2' },
    root: { type: 'string' },
    purge: { type: 'boolean', default: false },
    'spoke-controllers': { type: 'string' },
    'without-registration': { type: 'boolean', default: false },
  },
});

async function main(): Promise<number> {
  // Absolute: openssl and the components run in other working directories.
  const root = values.root === undefined ? undefined : resolve(values.root);
  const command = positionals[0] ?? 'status';
  switch (command) {
    case 'up': {
      const spokes = Number(values.spokes);
      if (!Number.isInteger(spokes) || spokes < 1) throw new Error(`--spokes must be a positive integer, got ${values.spokes}`);
      const spokeControllers = values['spoke-controllers'] === undefined ? undefined : parseSpokeControllers(values['spoke-controllers']);
      const sandbox = await Sandbox.up({ root, spokes, spokeControllers, ...(values['without-registration'] ? { registration: false } : {}) });
      for (const c of sandbox.clusters) console.log(`${c.name.padEnd(10)} ${c.server.padEnd(26)} ${c.kubeconfig}`);
      return 0;
    }
    case 'down': {
      const sandbox = Sandbox.attach(root);
      if (!sandbox) {
        console.log('no sandbox recorded; nothing to stop');
        return 0;
      }
      await sandbox.down({ purge: values.purge });
      console.log('sandbox stopped');
      return 0;
    }
    case 'status': {
      const sandbox = Sandbox.attach(root);
      if (!sandbox) {
        console.log('no sandbox recorded (run `npm run local-up`)');
        return 1;
      }
      let healthy = true;
      for (const s of await sandbox.status()) {
        const state = s.ready ? 'ready' : s.running ? 'running, not ready' : 'stopped';
        healthy &&= s.ready;
        console.log(`${s.name.padEnd(26)} pid ${String(s.pid ?? '-').padEnd(8)} ${state.padEnd(18)} ${s.endpoint}  log ${s.log}`);
      }
      return healthy ? 0 : 1;
    }
    default:
      throw new Error(`unknown command ${command}: use up, down or status`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
