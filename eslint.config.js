import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const APPS_IMPORT = {
  group: ['@tally/api', '@tally/worker', '@tally/agent', '@tally/dashboard', '**/apps/*/**'],
  message: 'libs never import apps',
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'libs/db/src/generated/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    // Node's own resolution (package exports conditions included) for import-x/no-cycle.
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/consistent-type-definitions': ['error', 'type'],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/unbound-method': 'off' },
  },
  {
    // The dashboard runs in the browser (DOM types come from its own tsconfig): no Node built-ins,
    // and of the server's packages only the browser-safe contracts as values (the rest as types),
    // so nothing node-only reaches the bundle.
    files: ['apps/dashboard/src/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'dashboard code runs in the browser: no Node built-ins' },
            {
              group: ['@tally/*', '!@tally/contracts'],
              allowTypeImports: true,
              message: 'server packages carry node-only code: import their types only',
            },
          ],
        },
      ],
    },
  },
  {
    // Module boundaries (docs/adr/0014-module-boundaries-in-eslint.md): apps import libs, libs never
    // import apps.
    files: ['libs/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [APPS_IMPORT] }],
    },
  },
  {
    // The capacity model is pure: no other package of this repo, no Node built-ins.
    files: ['libs/capacity/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            APPS_IMPORT,
            { group: ['@tally/*', '**/libs/*/**'], message: 'libs/capacity imports no other package of this repo' },
            { group: ['node:*'], message: 'libs/capacity is pure: no Node built-ins' },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
