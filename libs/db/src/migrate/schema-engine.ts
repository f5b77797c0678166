import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory, type ErrorRegistry } from '@prisma/driver-adapter-utils';
import pm from '@prisma/migrate';
import * as runtime from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { SchemaEngineWasm as SchemaEngine } from '@prisma/migrate';
import type { MigrationAdapterFactory } from './migration-adapter-factory.js';

const { SchemaEngineWasm } = pm;

// @types/node does not declare the WebAssembly global (it lives in lib.dom); only what is used here.
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
};

export type { SchemaEngine };
export type RawSchemaEngine = runtime.SchemaEngine;
/** [path, content] pairs, the shape the engine and Prisma's schema loader use. */
export type SchemaFiles = [string, string][];

// The constructor is TypeScript-private; the public `setup` looks for the .wasm file inside
// @prisma/internals, which does not ship it.
const SchemaEngineWasmConstructor = SchemaEngineWasm as unknown as new (options: {
  engine: RawSchemaEngine;
  errorRegistry: ErrorRegistry;
}) => SchemaEngine;

let engineClass: Promise<typeof runtime.SchemaEngine> | undefined;

/**
 * The wasm glue keeps one module-level instance, so it is instantiated once per process and every
 * engine is created from it (as Prisma's own loader does).
 */
const loadEngineClass = (): Promise<typeof runtime.SchemaEngine> => {
  engineClass ??= (async () => {
    const gluePath = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(join(dirname(gluePath), 'schema_engine_bg.wasm'));
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
      './schema_engine_bg.js': withUnrefTimers(runtime),
    });
    runtime.__wbg_set_wasm(instance.exports);
    (instance.exports['__wbindgen_start'] as () => void)();
    return runtime.SchemaEngine;
  })();
  return engineClass;
};

/**
 * The engine arms a 10 s timer around its advisory lock and never clears it (the glue imports no
 * clearTimeout), which kept every `deploy` process alive for 10 s after it finished. Unref'd
 * timers still fire while the lock query is pending, because its socket keeps the process up.
 */
const withUnrefTimers = (glue: typeof runtime): Record<string, unknown> => {
  const imports: Record<string, unknown> = { ...glue };
  for (const name of Object.keys(imports).filter((key) => key.startsWith('__wbg_setTimeout_'))) {
    imports[name] = (callback: () => void, ms: number) => setTimeout(callback, ms >>> 0).unref();
  }
  return imports;
};

export type LoadedSchemaEngine = { engine: SchemaEngine; raw: RawSchemaEngine };

export const loadSchemaEngine = async (schemaFiles: SchemaFiles, adapterFactory: MigrationAdapterFactory): Promise<LoadedSchemaEngine> => {
  const SchemaEngineClass = await loadEngineClass();
  const adapter = bindMigrationAwareSqlAdapterFactory(adapterFactory);
  const raw = await SchemaEngineClass.new({ datamodels: schemaFiles }, () => undefined, adapter);
  return { engine: new SchemaEngineWasmConstructor({ engine: raw, errorRegistry: adapter.errorRegistry }), raw };
};
