// Proves the local control plane is real: a ManifestWork on the hub is applied to spoke-1 by the OCM
// work agent, its JSONPaths feedback comes back to the hub, and deleting the work removes the object.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { logTail } from '../../testkit/sandbox/processes.ts';
import type { Sandbox } from '../../testkit/sandbox/sandbox.ts';
import { eventually } from '../../testkit/eventually.ts';
import { testSandbox } from '../../testkit/test-sandbox.ts';

const WORK = { group: 'work.open-cluster-management.io', version: 'v1', plural: 'manifestworks' };

interface FeedbackValue {
  name: string;
  fieldValue: { type: string; string?: string; integer?: number };
}
interface ManifestWorkStatus {
  status?: { resourceStatus?: { manifests?: { statusFeedback?: { values?: FeedbackValue[] } }[] } };
}

let sandbox: Sandbox;
before(async () => {
  sandbox = await testSandbox();
});

test('a ManifestWork on the hub reaches spoke-1 through the real work agent, reports feedback, and is cleaned up', async (t) => {
  for (const s of await sandbox.status()) {
    t.diagnostic(`${s.name}: pid ${s.pid} ${s.ready ? 'ready' : 'NOT READY'} at ${s.endpoint}`);
    assert.ok(s.ready, `${s.name} is not ready (log: ${s.log})`);
  }
  const hubWorks = sandbox.kubeConfig('hub').makeApiClient(CustomObjectsApi);
  const spoke1 = sandbox.kubeConfig('spoke-1').makeApiClient(CoreV1Api);
  const spoke2 = sandbox.kubeConfig('spoke-2').makeApiClient(CoreV1Api);
  const agentLog = (): string => `work-agent/spoke-1 log (${sandbox.logOf('work-agent/spoke-1')}):\n${logTail(sandbox.logOf('work-agent/spoke-1'), 40)}`;
  const name = `smoke-${process.pid}-${Date.now()}`;

  await hubWorks.createNamespacedCustomObject({
    ...WORK,
    namespace: 'spoke-1',
    body: {
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name },
      spec: {
        workload: {
          manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { greeting: 'hello from the hub' } }],
        },
        manifestConfigs: [
          {
            resourceIdentifier: { group: '', resource: 'configmaps', name, namespace: 'default' },
            feedbackRules: [{ type: 'JSONPaths', jsonPaths: [{ name: 'greeting', path: '.data.greeting' }] }],
          },
        ],
      },
    },
  });

  const applied = await eventually(
    async () => (await spoke1.readNamespacedConfigMap({ name, namespace: 'default' })).data,
    { what: `ConfigMap default/${name} on spoke-1`, context: agentLog },
  );
  assert.deepEqual(applied, { greeting: 'hello from the hub' });
  await assert.rejects(spoke2.readNamespacedConfigMap({ name, namespace: 'default' }), (err: { code?: number }) => err.code === 404,
    'the work was addressed to spoke-1 only');

  const feedback = await eventually(
    async () => {
      const work = (await hubWorks.getNamespacedCustomObject({ ...WORK, namespace: 'spoke-1', name })) as ManifestWorkStatus;
      return work.status?.resourceStatus?.manifests?.[0]?.statusFeedback?.values?.find((v) => v.name === 'greeting');
    },
    { what: 'the greeting feedback value in the ManifestWork status on the hub', context: agentLog },
  );
  assert.deepEqual(feedback.fieldValue, { type: 'String', string: 'hello from the hub' });

  await hubWorks.deleteNamespacedCustomObject({ ...WORK, namespace: 'spoke-1', name });
  await eventually(
    async () => {
      try {
        await spoke1.readNamespacedConfigMap({ name, namespace: 'default' });
        return false;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return true;
        throw err;
      }
    },
    { what: `ConfigMap default/${name} to be deleted from spoke-1`, context: agentLog },
  );
});
