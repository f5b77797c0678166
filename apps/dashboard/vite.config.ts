import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The API serves this build at /dashboard (apps/api/src/dashboard); `npm run build:dashboard` writes it.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    // livekit-client is loaded on demand (Watch); its chunk alone is larger than Vite's default warning size.
    chunkSizeWarningLimit: 1024,
  },
});
