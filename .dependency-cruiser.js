// Import cycles (docs/architecture.md, "Layers"): none, type-only imports included. The layer contract itself is
// eslint's (eslint.layers.js); this refuses only a cycle, which a rule that sees one file at a time cannot.
// `npm run lint` (lint:cycles) runs it over src, testkit and test; test/unit/importcycles.test.ts proves it
// catches a cycle and runs it over the same trees, so the unit tests refuse one too.
// Not eslint-plugin-import-x's no-cycle: that rule skips `import type` by design, with no option to count it,
// and a cycle of types alone still ties two modules together (the plan ↔ status cycle cut in issue 30 was one).
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'An import cycle: move what both sides need into a module they both import.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Keep `import type` edges (TypeScript would erase them before dependency-cruiser looked otherwise).
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
};
