// The sandbox the integration and e2e tiers share. `hack/test.sh` starts it before the tests and stops
// it after; a test file run on its own starts it here (and `npm run local-down -- --root …` stops it).
import { join } from 'node:path';
import { repoRoot } from './sandbox/layout.ts';
import { logTail } from './sandbox/processes.ts';
import { Sandbox } from './sandbox/sandbox.ts';

export const testSandboxRoot = process.env.POLICY_SYNC_SANDBOX_ROOT ?? join(repoRoot, '.local', 'test-sandbox');

export function testSandbox(): Promise<Sandbox> {
  return Sandbox.up({ root: testSandboxRoot, log: () => undefined });
}

/** The tail of every spoke's work-agent log, for failure messages of tests that wait on the agents. */
export function workAgentLogs(sandbox: Sandbox, lines = 10): string {
  return sandbox.spokes.map((s) => `work-agent/${s.name}:\n${logTail(sandbox.logOf(`work-agent/${s.name}`), lines)}`).join('\n');
}
