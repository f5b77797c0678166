// npm run build: bundles the api, worker and agent (and the migration and node-leave CLIs) into
// dist/<name>.js, plain JavaScript that `node` runs without a TypeScript compiler.
//
// SWC compiles each TypeScript file (Nest's dependency injection needs the decorator metadata that
// esbuild does not emit); esbuild bundles the workspace libs into each entry point and leaves
// every npm package external, so production hosts install dist/package.json's dependencies only
// (`npm install --omit=dev --prefix dist`, see scripts/install/host.sh).
//
// Source files locate repository files (the dashboard build, prisma/, deploy/workers) relative to
// their own location; in the bundle, import.meta.url/dirname are rewritten to the original source
// path under the repository root, so those lookups resolve exactly as they do from source.
import { transform } from '@swc/core';
import console from 'node:console';
import process from 'node:process';
import { build } from 'esbuild';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');

const allEntries = {
  api: 'apps/api/src/main.ts',
  worker: 'apps/worker/src/main.ts',
  agent: 'apps/agent/src/main.ts',
  'agent-leave': 'apps/agent/src/leave.ts',
  migrate: 'libs/db/src/migrate/cli.ts',
  'redis-acl': 'apps/api/src/cluster/redis-acl.cli.ts',
};
// `node scripts/build.mjs agent agent-leave` builds only those (a joined node runs only the agent).
const wanted = process.argv.slice(2);
for (const name of wanted)
  if (!(name in allEntries)) throw new Error(`unknown entry ${name}; one of ${Object.keys(allEntries).join(', ')}`);
const entries = wanted.length === 0 ? allEntries : Object.fromEntries(wanted.map((name) => [name, allEntries[name]]));

/** @type {import('esbuild').Plugin} */
const swcTypeScript = {
  name: 'swc-typescript',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      const sourceDir = JSON.stringify(relative(root, dirname(args.path)));
      const sourceFile = JSON.stringify(relative(root, args.path));
      const located = source
        .replaceAll('import.meta.dirname', `__tallyPath(${sourceDir})`)
        .replaceAll('import.meta.filename', `__tallyPath(${sourceFile})`)
        .replaceAll('import.meta.url', `__tallyUrl(${sourceFile})`);
      const { code } = await transform(located, {
        filename: args.path,
        sourceMaps: false,
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { decoratorMetadata: true, legacyDecorator: true, useDefineForClassFields: false },
          target: 'es2023',
          keepClassNames: true,
        },
        module: { type: 'es6' },
      });
      return { contents: code, loader: 'js' };
    });
  },
};

/** Every bare import that is not a workspace lib stays an import of the installed package. */
/** @type {import('esbuild').Plugin} */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@tally/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

// dist/<name>.js sits one level below the repository root.
const banner = [
  "import { fileURLToPath as __tallyFileURLToPath } from 'node:url';",
  "const __tallyRoot = new URL('../', import.meta.url);",
  'const __tallyUrl = (path) => new URL(path, __tallyRoot).href;',
  'const __tallyPath = (path) => __tallyFileURLToPath(new URL(path, __tallyRoot));',
].join('\n');

// dist/node_modules (the production install) stays: it changes only with package.json. A full build
// clears every bundle; a partial one (one Nx project's `build`) replaces only its own, so the
// projects' builds do not undo each other.
await mkdir(outdir, { recursive: true });
const bundles = new Set(Object.keys(entries).map((name) => `${name}.js`));
const replaced = (file) => (wanted.length === 0 ? file.endsWith('.js') : bundles.has(file));
for (const file of await readdir(outdir)) if (replaced(file)) await rm(join(outdir, file));
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  banner: { js: banner },
  plugins: [externalPackages, swcTypeScript],
  logLevel: 'warning',
  legalComments: 'none',
});

const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const runtimePackage = `${JSON.stringify({ name: 'tally-runtime', version: pkg.version, private: true, type: 'module', dependencies: pkg.dependencies }, null, 2)}\n`;
await writeFile(join(outdir, 'package.json'), runtimePackage);
// A production install that lacks a dependency, or holds another version, would shadow the right
// one (two copies of @nestjs/core break dependency injection): drop it; the bundles then use the
// checkout's node_modules until the installer installs again.
const installed = async (name) =>
  JSON.parse(await readFile(join(outdir, 'node_modules', name, 'package.json'), 'utf8').catch(() => '{}')).version;
const stale = await Promise.all(Object.entries(pkg.dependencies).map(async ([name, version]) => (await installed(name)) !== version));
if (stale.some(Boolean)) {
  await rm(join(outdir, 'node_modules'), { recursive: true, force: true });
  await rm(join(outdir, 'package-lock.json'), { force: true });
}
console.log(`built ${Object.keys(entries).join(', ')} into ${relative(process.cwd(), outdir) || '.'}`);
