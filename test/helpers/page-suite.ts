// A vitest suite that drives one page of the app in headless Chromium (the session from scripts/browser.ts).
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ready, SHOTS, startBrowserSession, type BrowserSession } from '../../scripts/browser.ts';

/**
 * The hooks of a suite that drives one page: before its tests a fresh browser session (a new profile) and a
 * page at the app, ready, handed to `opened` (the screenshots folder made); after them the session closed.
 * Returns the page's uncaught errors, collected as they come.
 */
export function pageForSuite(opened: (session: BrowserSession, page: Page) => void): string[] {
  const errors: string[] = [];
  let session: BrowserSession | undefined;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    session = await startBrowserSession();
    const page = await session.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await ready(page, session.url);
    opened(session, page);
  }, 120_000);
  afterAll(async () => {
    await session?.close();
  });
  return errors;
}
