import { defineConfig } from 'vite';

export default defineConfig({
  // The engine runs in a module worker; shaders are bundled as raw text (src/gpu/host/browser.ts).
  worker: { format: 'es' },
  server: { host: '127.0.0.1', port: 5173 },
  build: { target: 'es2022' },
});
