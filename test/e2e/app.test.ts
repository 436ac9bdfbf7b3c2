// The browser app end to end, in headless Chromium on SwiftShader WebGPU: a tiny π-Play run (the 'smoke'
// preset on a new random tiny model) shows its examiner questions with their construction paths, the
// student's rollouts and the teacher-vs-student heatmap; it saves a checkpoint on demand, stops, and after
// a page reload resumes from the checkpoint and finishes. A toy pretraining from the Pretrain tab stores a
// base model that self-play can start from. Also: the clear messages for no WebGPU, a lost
// device, a bad model id, a model too large for the GPU and a corpus file with errors. Screenshots of each
// view land in test/screenshots/.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readZip } from '../../src/worker/zip.ts';
import { hasChromium, ready, startBrowserSession, type BrowserSession } from '../../scripts/browser.ts';

const SHOTS = new URL('../screenshots/', import.meta.url).pathname;

async function phase(page: Page): Promise<string | undefined> {
  return page.evaluate(() => document.body.dataset.phase);
}

async function waitPhase(page: Page, want: string[], timeout: number): Promise<string> {
  await page.waitForFunction((w) => w.includes(document.body.dataset.phase ?? ''), want, { timeout, polling: 250 });
  return (await phase(page))!;
}

async function tab(page: Page, id: string): Promise<void> {
  await page.click(`[data-tab="${id}"]`);
  await page.waitForTimeout(150);
}

describe.skipIf(!hasChromium)('browser app (headless Chromium, SwiftShader)', () => {
  let s: BrowserSession;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startBrowserSession();
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it('starts the engine worker on WebGPU and computes a correct matmul', async () => {
    const page = await s.newPage();
    await ready(page, s.url);
    expect(await page.locator('#gpu-status').getAttribute('data-selftest')).toBe('pass');
    expect(await page.locator('#gpu-status').getAttribute('class')).toContain('ok');
    await page.screenshot({ path: `${SHOTS}boot.png` });
    await page.close();
  }, 120_000);

  it('runs a smoke π-Play run, shows every view, saves, reloads and resumes', async () => {
    const page = await s.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`${e.message}\n${e.stack ?? ''}`));
    await ready(page, s.url);
    await page.screenshot({ path: `${SHOTS}setup.png`, fullPage: true });

    // The smoke preset with two iterations (so that a stopped run has something left to resume).
    await page.selectOption('#preset', 'smoke');
    await page.fill('#opt-iterations', '2');
    await expect.poll(() => page.locator('.model-estimate .estimate').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator('.model-estimate').textContent()).toMatch(/parameters/);
    await page.click('button.start');
    await waitPhase(page, ['running'], 60_000);
    // Pause and resume (the run waits at the next step boundary).
    await page.click('button.pause');
    await waitPhase(page, ['paused'], 10_000);
    expect(await page.locator('button.resume').isEnabled()).toBe(true);
    await page.click('button.resume');
    await waitPhase(page, ['running'], 10_000);

    // Examiner: questions with their construction path (source document first).
    await page.waitForFunction(() => document.querySelector('[data-tab="examiner"] .count')?.textContent !== '', null, {
      timeout: 120_000,
    });
    await tab(page, 'examiner');
    await page.waitForSelector('#panel-examiner .question-card .qcp-path .qcp-node.source', { timeout: 10_000 });
    expect(await page.locator('#panel-examiner .question-card').count()).toBeGreaterThan(0);
    expect(await page.locator('#panel-examiner .qcp-node.final').first().textContent()).toMatch(/answer/);

    // Student: rollouts of a question (they come in the student stage).
    await page.waitForFunction(() => document.querySelector('[data-tab="student"] .count')?.textContent !== '', null, {
      timeout: 180_000,
    });
    await tab(page, 'student');
    await page.waitForSelector('#panel-student .rollout', { timeout: 10_000 });
    expect(await page.locator('#panel-student .rollout .verdict').first().textContent()).toMatch(/correct|wrong/);
    expect(await page.locator('#panel-student .rollout .adv').first().textContent()).toMatch(/A [+−±]\d/);

    // Heatmap: policy tokens coloured by real, finite per-token KL values; tool tokens masked.
    await tab(page, 'heatmap');
    await page.waitForSelector('#panel-heatmap .tok.policy', { timeout: 10_000 });
    const kls = await page.$$eval('#panel-heatmap .tok.policy', (els) => els.map((e) => e.getAttribute('title') ?? ''));
    expect(kls.length).toBeGreaterThan(0);
    const values = kls.map((t) => /KL (\S+)/.exec(t)?.[1]).filter((v): v is string => v !== undefined);
    expect(values.length).toBe(kls.length);
    expect(values.every((v) => v !== '–' && !/NaN|∞/.test(v))).toBe(true);
    expect(await page.locator('#panel-heatmap .tok.policy[style*="background"]').count()).toBe(kls.length);
    // Keyboard: focus the first policy token and move with the arrow key; the detail shows both top-K lists.
    await page.check('input[name="heat-mode"][value="diff"]');
    await page.locator('#panel-heatmap .tok[tabindex="0"]').focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.i)).toBe(
      await page.locator('#panel-heatmap .tok.active').getAttribute('data-i'),
    );
    await page.locator('#panel-heatmap .tok.policy').first().hover();
    await page.waitForSelector('#panel-heatmap .token-detail table.topk tbody tr', { timeout: 5_000 });
    expect(await page.locator('#panel-heatmap .token-detail').textContent()).toMatch(/teacher/);
    await page.locator('#work').screenshot({ path: `${SHOTS}heatmap.png` });

    // A checkpoint on demand, then stop (which checkpoints too).
    await page.click('button.save');
    await page.click('button.stop');
    await waitPhase(page, ['stopped', 'finished'], 240_000);

    await tab(page, 'examiner');
    await page.locator('#work').screenshot({ path: `${SHOTS}examiner.png` });
    await tab(page, 'student');
    await page.locator('#work').screenshot({ path: `${SHOTS}student.png` });
    await tab(page, 'charts');
    await page.waitForSelector('#panel-charts .chart canvas', { timeout: 10_000 });
    expect(await page.locator('#panel-charts .chart[data-chart="kl"]').count()).toBe(1);
    await page.locator('#work').screenshot({ path: `${SHOTS}charts.png` });
    await tab(page, 'log');
    expect(await page.locator('#panel-log').textContent()).toMatch(/checkpoint saved/);

    // Reload: the stored run is offered and listed; resume it and let it finish.
    await ready(page, s.url);
    const row = page.locator('#checkpoints .ckpt').first();
    await row.waitFor({ timeout: 10_000 });
    expect(await row.textContent()).toMatch(/next: iteration/);
    await page.locator('#checkpoints').screenshot({ path: `${SHOTS}checkpoints.png` });
    await row.locator('button[data-act="resume"]').click();
    await waitPhase(page, ['running'], 60_000);
    await tab(page, 'log');
    await page.waitForFunction(() => /resumed at/.test(document.getElementById('panel-log')?.textContent ?? ''), null, {
      timeout: 60_000,
    });

    // The GPU device is lost mid-run: a clear message offers to resume from the last checkpoint.
    await page.evaluate(() =>
      (window as unknown as { __piplay: { loseDevice(): Promise<void> } }).__piplay.loseDevice(),
    );
    const lost = page.getByRole('alert').filter({ hasText: 'The GPU device was lost' });
    await lost.waitFor({ timeout: 20_000 });
    await page.screenshot({ path: `${SHOTS}device-lost.png` });
    await waitPhase(page, ['failed', 'stopped'], 60_000);
    await page.waitForTimeout(500);
    // The loss is explained once, not again as a run error.
    expect((await page.getByRole('alert').allTextContents()).filter((t) => !/GPU device was lost/.test(t))).toEqual([]);
    await lost.getByRole('button', { name: /Resume from checkpoint/ }).click();
    await waitPhase(page, ['running'], 60_000);
    expect(await waitPhase(page, ['finished', 'failed'], 300_000)).toBe('finished');
    await tab(page, 'charts');
    expect(await page.locator('#panel-charts .chart').count()).toBeGreaterThan(3);
    await page.locator('#work').screenshot({ path: `${SHOTS}resumed.png` });

    // Export the run's student as an HF model folder (zip), then import that zip as a model.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('#checkpoints .ckpt button[data-act="export"]').first().click(),
    ]);
    const zipPath = join(mkdtempSync(join(tmpdir(), 'piplay-e2e-')), download.suggestedFilename());
    await download.saveAs(zipPath);
    const files = (await readZip(new Uint8Array(readFileSync(zipPath)))).map((e) => e.name.split('/').pop());
    expect(files.sort()).toEqual([
      'README.md',
      'config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    await page.locator('#checkpoints .import-zip').setInputFiles(zipPath);
    await page.locator('#checkpoints .ckpt', { hasText: 'imported' }).waitFor({ timeout: 20_000 });
    await page.locator('#checkpoints .ckpt', { hasText: 'imported' }).locator('button[data-act="use"]').click();
    await expect
      .poll(() => page.locator('.model-estimate').textContent(), { timeout: 10_000 })
      .toMatch(/\d+(\.\d)?k parameters/);

    // Narrow screens: one column, nothing cut off.
    await page.setViewportSize({ width: 760, height: 1000 });
    await tab(page, 'student');
    await page.screenshot({ path: `${SHOTS}narrow.png`, fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(760);
    expect(errors).toEqual([]);
    await page.close();
  }, 600_000);

  it('explains a bad model id, a model too large for the GPU and a corpus file with errors', async () => {
    const page = await s.newPage();
    await ready(page, s.url);
    // A bad Hugging Face id (refused before any network request).
    await page.fill('.hub-id', 'not a model id');
    await page.click('.hub-check');
    await expect
      .poll(() => page.locator('.model-estimate').textContent(), { timeout: 10_000 })
      .toMatch(/not a Hugging Face model id/);
    // A model folder whose MLP weight alone exceeds SwiftShader's 1 GiB buffer limit, refused from config.json
    // (a vocabulary matrix that large is split into row shards instead, so it is the MLP that is too wide).
    const huge = {
      architectures: ['Qwen2ForCausalLM'],
      hidden_size: 2048,
      intermediate_size: 140000,
      num_attention_heads: 16,
      num_key_value_heads: 16,
      num_hidden_layers: 2,
      vocab_size: 32000,
      tie_word_embeddings: true,
    };
    const dir = join(mkdtempSync(join(tmpdir(), 'piplay-e2e-')), 'huge-model');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(huge));
    writeFileSync(join(dir, 'model.safetensors'), Buffer.alloc(8));
    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    writeFileSync(join(dir, 'tokenizer_config.json'), '{}');
    await page.locator('.model-folder').setInputFiles(dir);
    await expect
      .poll(() => page.locator('.model-estimate').textContent(), { timeout: 10_000 })
      .toMatch(/Too large for this GPU.*largest buffer/s);
    await page.screenshot({ path: `${SHOTS}too-large.png` });
    // A corpus file with an error on line 2.
    await page.locator('.corpus-file').setInputFiles({
      name: 'bad.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from('{"id":"a","title":"A","text":"x"}\n{"id":"b","title":"B"}\n'),
    });
    await expect
      .poll(() => page.locator('.corpus-status').textContent(), { timeout: 10_000 })
      .toMatch(/bad\.jsonl:2: missing field "text"/);
    await page.screenshot({ path: `${SHOTS}corpus-error.png` });
    await page.close();
  }, 180_000);

  it('pretrains a toy base model from the UI, stores it and offers it as the base model', async () => {
    const page = await s.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`${e.message}\n${e.stack ?? ''}`));
    await ready(page, s.url);
    await tab(page, 'pretrain');
    // Toy settings: one small world trains the tokenizer, three steps of one 1024-token row.
    await page.click('#panel-pretrain details summary');
    const toy: Record<string, string> = {
      steps: '3',
      batch: '1',
      seq: '1024',
      lr: '0.01',
      hidden: '16',
      layers: '1',
      vocab: '512',
      worldSize: '20',
      tokenizerWorlds: '1',
      logEvery: '1',
      name: 'toy-base',
    };
    for (const [k, v] of Object.entries(toy)) await page.fill(`#pt-${k}`, v);
    // Every value the progress bar shows, from the start.
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { __progress: number[] }).__progress = seen;
      new MutationObserver(() => {
        const v = document.querySelector('#progress .bar')?.getAttribute('aria-valuenow');
        if (v !== null && v !== undefined && Number(v) !== seen.at(-1)) seen.push(Number(v));
      }).observe(document.getElementById('progress')!, { childList: true, subtree: true, attributes: true });
    });
    await page.click('.pretrain-start');
    await waitPhase(page, ['running'], 30_000);
    expect(await page.evaluate(() => document.body.dataset.job)).toBe('pretrain');
    // One job at a time: the self-play controls wait, and Pause does not apply.
    expect(await page.locator('button.start').isEnabled()).toBe(false);
    expect(await page.locator('button.pause').isEnabled()).toBe(false);
    expect(await waitPhase(page, ['finished', 'failed'], 120_000)).toBe('finished');
    const seen = await page.evaluate(() => (window as unknown as { __progress: number[] }).__progress);
    expect(seen.at(-1)).toBe(3);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.every((v, i) => i === 0 || v > seen[i - 1]!)).toBe(true);
    expect(await page.locator('#progress').textContent()).toMatch(
      /pre-training.*3 \/ 3 · loss \d+\.\d{3} · \d+ tokens\/s/s,
    );
    // The loss curve has a point per logged step; the summary names the stored model.
    await expect
      .poll(() => page.locator('#panel-pretrain .pretrain-chart').getAttribute('data-points'), { timeout: 5_000 })
      .toBe('3');
    expect(await page.locator('#panel-pretrain .pretrain-chart canvas').count()).toBe(1);
    const summary = page.locator('#panel-pretrain .pretrain-done');
    await summary.waitFor({ timeout: 5_000 });
    expect(await summary.textContent()).toMatch(
      /Stored as toy-base.*parameters.*tokens seen\s*3\.1k.*final loss\s*\d+\.\d{3}/s,
    );
    const row = page.locator('#checkpoints .ckpt[data-name="toy-base"]');
    await row.waitFor({ timeout: 10_000 });
    expect(await row.textContent()).toMatch(/pretrained here · model folder/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SHOTS}pretrain.png`, fullPage: true });

    // The same name again is refused (nothing is replaced). Continuing the embedded model (its shape fixed by
    // its config), Stop ends a long pretraining and stores nothing.
    await page.click('.pretrain-start');
    await expect
      .poll(() => page.locator('#panel-pretrain .form-error').textContent(), { timeout: 10_000 })
      .toMatch(/'toy-base' exists already/);
    await page.fill('#pt-name', '');
    await page.fill('#pt-steps', '5000');
    await page.fill('#pt-seq', '512');
    const embedded = await page.locator('#pt-from option[value^="embedded:"]').first().getAttribute('value');
    await page.selectOption('#pt-from', embedded!);
    expect(await page.locator('#pt-hidden').isDisabled()).toBe(true);
    await page.click('.pretrain-start');
    await waitPhase(page, ['running'], 30_000);
    await page.waitForFunction(
      () => Number(document.querySelector('#progress .bar')?.getAttribute('aria-valuenow')) >= 1,
      null,
      { timeout: 60_000, polling: 100 },
    );
    await page.click('.pretrain-stop');
    expect(await waitPhase(page, ['stopped'], 30_000)).toBe('stopped');
    expect(await page.locator('#checkpoints .ckpt').count()).toBe(1);

    // The stored model is a base model for self-play.
    await row.locator('button[data-act="use"]').click();
    await expect
      .poll(() => page.locator('.model-estimate').textContent(), { timeout: 10_000 })
      .toMatch(/\d+(\.\d)?k parameters/);
    expect(await page.locator('.checkpoint-choice .ckpt-name').textContent()).toBe('toy-base');
    expect(errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('tells the user clearly when WebGPU is missing', async () => {
    const page = await s.newPage();
    await page.addInitScript(() => {
      delete (Navigator.prototype as { gpu?: unknown }).gpu;
    });
    await page.goto(s.url);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 30_000 });
    expect(await alert.textContent()).toMatch(/WebGPU is not available.*chrome:\/\/flags/s);
    await page.screenshot({ path: `${SHOTS}no-webgpu.png` });
    await page.close();
  }, 60_000);
});
