import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

/** The model folders under public/models/ (those with a config.json). */
function embeddedModels(root: string): string[] {
  const dir = join(root, 'public', 'models');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'config.json')))
    .map((d) => d.name)
    .sort();
}

/**
 * Serves /models/index.json (the embedded model names) in development and writes it into the build, unless
 * public/models/index.json exists already. The page lists these as "embedded default" models. In
 * development a missing file under /models/ answers 404 rather than the app's index.html.
 */
function modelIndex(): Plugin {
  let root = process.cwd();
  return {
    name: 'piplay-model-index',
    configResolved(c) {
      root = c.root;
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(req.url?.split('?')[0] ?? '');
        if (!path.startsWith('/models/')) return next();
        if (path === '/models/index.json' && !existsSync(join(root, 'public', 'models', 'index.json'))) {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(embeddedModels(root)));
          return;
        }
        // A missing model file is a 404 (not the SPA's index.html): loaders probe optional files.
        if (path.includes('..') || !existsSync(join(root, 'public', path))) {
          res.statusCode = 404;
          res.end('not found');
          return;
        }
        next();
      });
    },
    generateBundle() {
      if (existsSync(join(root, 'public', 'models', 'index.json'))) return;
      this.emitFile({ type: 'asset', fileName: 'models/index.json', source: JSON.stringify(embeddedModels(root)) });
    },
  };
}

export default defineConfig({
  plugins: [modelIndex()],
  // The engine runs in a module worker; shaders are bundled as raw text (src/gpu/host/browser.ts).
  worker: { format: 'es' },
  // Pre-bundle what the worker imports lazily, so the dev server never re-optimises (and reloads the page,
  // ending a run) when a run first loads a tokenizer.
  optimizeDeps: { include: ['@huggingface/transformers', 'comlink', 'idb-keyval', 'uplot'] },
  server: { host: '127.0.0.1', port: 5173 },
  build: { target: 'es2022' },
});
