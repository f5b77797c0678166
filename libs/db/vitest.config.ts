import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC rather than esbuild: Nest's DI needs the decorator metadata esbuild does not emit.
export default defineConfig({
  plugins: [
    swc.vite({
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { decoratorMetadata: true, legacyDecorator: true },
        target: 'es2023',
      },
    }),
  ],
  test: {
    root: import.meta.dirname,
    include: ['src/**/*.spec.ts'],
    exclude: ['**/node_modules/**', '**/generated/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
