// hack/gen-chart.ts, without kubectl or helm: how objects become Helm template text (tokens, escaping), the
// release namespace substitution, and the values' defaults read from the kustomize bases. That the committed
// chart is what the generator writes, and what helm makes of it, is test/integration/helm.test.ts's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { Templater, aggregationSelectors, defaultsOf, isAggregatedPart, replaceValue } from '../../hack/gen-chart.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

test('tokens become template expressions where they stand: inline, a subtree, map entries, list items', () => {
  const t = new Templater();
  const text = stringify({
    metadata: { namespace: t.inline('.Release.Namespace'), labels: { a: 'b', [t.entries('include "l" .')]: null } },
    spec: {
      replicas: t.inline('.Values.replicas'),
      args: ['hub', `--log-level=${t.inline('.Values.logLevel')}`, t.items('.Values.extraArgs')],
      resources: t.block('.Values.resources'),
    },
  });
  assert.equal(
    t.render(text),
    [
      'metadata:',
      '  namespace: {{ .Release.Namespace }}',
      '  labels:',
      '    a: b',
      '    {{- include "l" . | nindent 4 }}',
      'spec:',
      '  replicas: {{ .Values.replicas }}',
      '  args:',
      '    - hub',
      '    - --log-level={{ .Values.logLevel }}',
      '    {{- with .Values.extraArgs }}',
      '    {{- toYaml . | nindent 4 }}',
      '    {{- end }}',
      '  resources:',
      '    {{- toYaml .Values.resources | nindent 4 }}',
      '',
    ].join('\n'),
  );
});

test('braces already in the sources are escaped, so that Helm renders them as they were', () => {
  const t = new Templater();
  assert.equal(t.render('args: [--log-level={{LOG_LEVEL}}]\n'), 'args: [--log-level={{ "{{" }}LOG_LEVEL{{ "}}" }}]\n');
  assert.equal(t.render('summary: "{{ $labels.cluster }} is down"\n'), 'summary: "{{ "{{" }} $labels.cluster {{ "}}" }} is down"\n');
});

test('a token that is not where its kind may stand is refused', () => {
  const t = new Templater();
  const block = t.block('.Values.x');
  assert.throws(() => t.render(`a: [${block}]\n`), /not where a block token may stand/);
});

test('the release namespace replaces whole values only, not substrings, and leaves the source alone', () => {
  const source = { metadata: { namespace: 'policy-sync-system' }, subjects: [{ namespace: 'policy-sync-system' }], note: 'in policy-sync-system' };
  const out = replaceValue(source, 'policy-sync-system', 'NS');
  assert.deepEqual(out, { metadata: { namespace: 'NS' }, subjects: [{ namespace: 'NS' }], note: 'in policy-sync-system' });
  assert.equal(source.metadata.namespace, 'policy-sync-system');
});

test('the values default to what the kustomize bases say', () => {
  const hub = [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'policy-sync-hub' },
      spec: { replicas: 3, template: { spec: { containers: [{ name: 'hub', image: 'registry:5000/x/policy-sync:1.2.3', resources: { limits: { memory: '1Gi' } } }] } } },
    },
  ] as KubeObject[];
  const addon = [
    { apiVersion: 'v1alpha1', kind: 'AddOnDeploymentConfig', metadata: { name: 'a' }, spec: { customizedVariables: [{ name: 'LOG_LEVEL', value: 'debug' }], nodePlacement: { tolerations: [] } } },
    { apiVersion: 'v1beta2', kind: 'ManagedClusterSet', metadata: { name: 'mine' } },
  ] as KubeObject[];
  assert.deepEqual(defaultsOf(hub, addon), {
    imageRepository: 'registry:5000/x/policy-sync',
    replicas: 3,
    resources: { limits: { memory: '1Gi' } },
    addonLogLevel: 'debug',
    nodePlacement: { tolerations: [] },
    clusterSet: 'mine',
  });
  assert.throws(() => defaultsOf([], addon), /expected one Deployment policy-sync-hub/);
});

test('the ClusterRoles an aggregated ClusterRole folds in are told apart (the chart puts them in a List Helm deletes last)', () => {
  const aggregated = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'policy-sync-hub-policies' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'policysync.kuadrant.io/aggregate-to-hub': 'true' } }] },
  } as KubeObject;
  const part = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'p', labels: { 'policysync.kuadrant.io/aggregate-to-hub': 'true' } } } as KubeObject;
  const other = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'policy-sync-hub', labels: { 'app.kubernetes.io/part-of': 'policy-sync' } } } as KubeObject;
  const selectors = aggregationSelectors([aggregated, part, other]);
  assert.deepEqual(selectors, [{ 'policysync.kuadrant.io/aggregate-to-hub': 'true' }]);
  assert.deepEqual([aggregated, part, other].map((o) => isAggregatedPart(o, selectors)), [false, true, false]);
  assert.equal(isAggregatedPart({ ...part, kind: 'Role' }, selectors), false, 'only ClusterRoles are aggregated');
});
