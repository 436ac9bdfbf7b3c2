// Headless Debian Chromium (SwiftShader WebGPU) driven by playwright-core, against a Vite dev server.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';

export const CHROMIUM = process.env.PIPLAY_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Where the browser tests write their screenshots (git-ignored). */
export const SHOTS = new URL('../test/screenshots/', import.meta.url).pathname;

const FLAGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--enable-unsafe-swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--enable-features=Vulkan',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Opens the app at `url` and waits until its WebGPU self-test has run (the page is then ready to use). */
export async function ready(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('gpu-status')?.dataset.selftest !== undefined, null, {
    timeout: 90_000,
  });
}

export interface BrowserSession {
  server: ViteDevServer;
  browser: Browser;
  url: string;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function startBrowserSession(): Promise<BrowserSession> {
  // No file watching and no HMR: an edit elsewhere in the tree must not reload the page mid-test.
  const server = await createServer({
    server: { host: '127.0.0.1', port: 0, hmr: false, watch: null },
    logLevel: 'error',
    clearScreen: false,
  });
  await server.listen();
  const addr = server.httpServer!.address();
  const port = typeof addr === 'object' && addr ? addr.port : 5173;
  const url = `http://127.0.0.1:${port}/`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // playwright adds --headless and a fresh temporary profile (--user-data-dir) itself.
    args: FLAGS,
    headless: true,
  });
  const errors: string[] = [];
  return {
    server,
    browser,
    url,
    async newPage() {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      page.on('pageerror', (e) => errors.push(e.message));
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
