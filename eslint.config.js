import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import { createProjectGraphAsync } from '@nx/devkit';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// @nx/enforce-module-boundaries reads Nx's cached project graph and skips itself, with only a
// warning, when there is none (a fresh clone) or lints against a stale one (a project just added):
// bring the graph up to date before any file is linted, so the rule always runs on the real graph.
await createProjectGraphAsync({ exitOnError: true });

// Apps are not importable packages (no exports), so Nx cannot resolve an import of one by name and
// leaves it out of the graph: the names themselves are banned in libs.
const APPS_IMPORT = {
  group: ['@tally/api', '@tally/worker', '@tally/agent', '@tally/dashboard', '**/apps/*/**'],
  message: 'libs never import apps',
};

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.nx/**', 'libs/db/src/generated/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX, '@nx': nx },
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
    // Module boundaries between the Nx projects (the npm workspaces; docs/adr/0029-nx-workspace.md),
    // from the tags in each package.json: apps import libs, libs never import apps, and
    // libs/capacity (scope:core, the pure capacity model) imports no other project. Projects import
    // each other by package name, never by relative path. The cross-process e2e tests under
    // apps/*/test start the other apps from their sources and share their harnesses, so they are
    // left out.
    files: ['apps/**/*.{ts,tsx}', 'libs/**/*.ts'],
    ignores: ['apps/*/test/**'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          // Spec files of these libs use libs/testing, which builds its stack from them.
          ignoredCircularDependencies: [['@tally/nodes', '@tally/testing']],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'scope:core', onlyDependOnLibsWithTags: [] },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [APPS_IMPORT] }] },
  },
  {
    // The capacity model is pure: no Node built-ins either (other projects: scope:core above).
    files: ['libs/capacity/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [APPS_IMPORT, { group: ['node:*'], message: 'libs/capacity is pure: no Node built-ins' }] },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
);
