import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint.layers.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.local/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test()/describe() return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      eqeqeq: ['error', 'always'],
    },
  },
  { files: ['src/**/*.ts'], plugins: { layers: layersPlugin }, rules: { 'layers/contract': 'error' } },
  { files: ['testkit/**/*.ts'], plugins: { layers: layersPlugin }, rules: { 'layers/testkit': 'error' } },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
