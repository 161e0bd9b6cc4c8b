// The console in a real browser: Debian's chromium driven by playwright-core. Screenshots go to
// packages/server/test-artifacts/ (gitignored); TURNKIT_UPDATE_SCREENSHOTS=1 also writes the ones
// docs/console.md and docs/reference/console.md show.

import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testLog } from '../../../test-log.js';
import { startServer, type TestServer, TOKEN, waitForStatus } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = new URL('../test-artifacts/', import.meta.url);
const DOCS = new URL('../../../docs/images/', import.meta.url);

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does.`);
  t = await startServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  await mkdir(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function screenshot(page: Page, name: string, element?: Locator): Promise<void> {
  const path = new URL(`${name}.png`, ARTIFACTS);
  await (element ?? page).screenshot({ path: path.pathname });
  if (process.env.TURNKIT_UPDATE_SCREENSHOTS === '1') {
    await mkdir(DOCS, { recursive: true });
    await copyFile(path, new URL(`console-${name}.png`, DOCS));
  }
}

/** A fresh browser context that records layout shifts not caused by input. */
async function newContext(width = 1280, height = 900): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width, height } });
  // Runs in the page (a string: the test program has no DOM types).
  await context.addInitScript(`
    window.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shift += entry.value;
    }).observe({ type: 'layout-shift', buffered: true });
  `);
  return context;
}

async function signIn(context: BrowserContext, token = TOKEN): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${t.url}/console`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('domcontentloaded');
  // The token went in a POST body: never in a URL, so never in history or a proxy's log.
  expect(page.url()).not.toContain(token);
  return page;
}

const submitParked = async (input: string): Promise<string> => {
  const id = await t.store.submit({ agent: 'support', input });
  await waitForStatus(t.store, id, 'awaiting_approval');
  return id;
};

const status = (page: Page) => page.locator('[data-panel="summary"] .badge');

describe('the console in chromium', () => {
  it('finds a parked turn, shows the input that will run, approves it and watches it reach stopped', async () => {
    const id = await submitParked('Please refund order A-17 (49.90 EUR), it arrived broken.');
    await t.store.submit({ agent: 'support', input: 'Where is my order B-2?' });
    const context = await newContext();
    const page = await signIn(context);
    const row = page.locator(`tr[data-turn="${id}"]`);
    await expect(row.locator('.badge').textContent()).resolves.toBe('waiting for you');
    await page.locator('tr.row-waiting').first().waitFor();
    await screenshot(page, 'list');

    await row.getByRole('link', { name: id }).click();
    await page.locator('#timeline li').first().waitFor();
    const input = page.getByLabel('input of call_1', { exact: true });
    expect(await input.textContent()).toBe(JSON.stringify({ order: 'A-17', amount: 49.9, currency: 'EUR' }, null, 2));
    expect(await page.locator('.diagram').getAttribute('data-current')).toBe('awaiting_approval');
    await page.locator('#timeline li[data-seq="7"]').waitFor();
    await screenshot(page, 'parked');
    await screenshot(page, 'machine', page.locator('.diagram'));

    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('[data-panel="summary"] .badge[data-status="stopped"]').waitFor();
    expect(await page.locator('.diagram').getAttribute('data-current')).toBe('stopped');
    await page.getByText('Done: refunded 49.9 EUR for A-17.').first().waitFor();
    expect(await page.locator('#timeline .event-status .badge').last().textContent()).toBe('stopped');
    // The stream appended what happened after the page loaded: the transcript is the stored one,
    // each message once, and the timeline has every log entry once, in order.
    const stored = await t.store.get(id);
    const bubbles = page.locator('[data-panel="transcript"] li.msg');
    await expect.poll(() => bubbles.count()).toBe(stored?.transcript.length);
    expect(await bubbles.last().textContent()).toBe('modelDone: refunded 49.9 EUR for A-17.');
    const seqs = await page
      .locator('#timeline li')
      .evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-seq'))));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(await page.locator('[data-panel="parked"]').textContent()).toContain('Nothing is waiting for a person.');
    // Events streamed in after the page loaded; nothing moved that was already on screen.
    const shift = await page.evaluate<number>('window.__shift');
    testLog('layout shift while the approved turn ran to its end:', shift);
    expect(shift).toBeLessThan(0.01);
    await screenshot(page, 'stopped');
    await context.close();
  });

  it("a turn of many agents: the child's parked call names its agents, and the page shows which agent ran which calls", async () => {
    const id = await t.store.submit({ agent: 'desk', input: 'Please refund order D-4 (12 EUR).' });
    await waitForStatus(t.store, id, 'awaiting_approval');
    const context = await newContext();
    const page = await signIn(context);
    await page.goto(`${t.url}/console/turns/${encodeURIComponent(id)}`);
    const parked = page.locator('[data-panel="parked"] form.parked');
    expect(await parked.locator('.agent-path').textContent()).toBe('agent desk › support');
    // The child's messages are in the timeline under their agents.
    await page.locator('#timeline li.event-child').first().waitFor();
    expect(await page.locator('#timeline li.event-child .agent').first().textContent()).toBe('desk › support');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('[data-panel="summary"] .badge[data-status="stopped"]').waitFor();
    await page.reload();
    const child = page.locator('[data-panel="agents"] li.child');
    expect(await child.locator('.agent').textContent()).toBe('desk › support');
    expect(await child.locator('.calls li').textContent()).toBe('refund call_1 ok');
    await screenshot(page, 'agents', page.locator('[data-panel="agents"]'));
    await context.close();
  });

  it('rejects with a reason using only the keyboard; the reason reaches the transcript', async () => {
    const id = await submitParked('Refund order C-9, 120 EUR.');
    const context = await newContext();
    const page = await signIn(context);
    await page.goto(`${t.url}/console/turns/${id}`);
    // Tab from the top of the page to Reject: every control is reachable in order.
    let label: string | null = null;
    for (let i = 0; i < 30 && label !== 'Reject'; i += 1) {
      await page.keyboard.press('Tab');
      label = await page.evaluate<string | null>('document.activeElement?.textContent ?? null');
    }
    expect(label).toBe('Reject');
    await page.keyboard.press('Enter');
    // The second step asks for the reason; the field has the focus, and Enter rejects.
    await page.getByRole('heading', { name: 'Reject call_1?' }).waitFor();
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('name') ?? null")).toBe('reason');
    await page.keyboard.type('C-9 was refunded last week');
    await page.keyboard.press('Enter');
    await page.locator('[data-panel="summary"] .badge[data-status="stopped"]').waitFor();
    await page.locator('[data-panel="transcript"]').getByText('C-9 was refunded last week').first().waitFor();
    expect(await status(page).textContent()).toBe('stopped');
    await context.close();
  });

  it('the list shows each turn’s input and what a waiting turn asks to run', async () => {
    const id = await submitParked('Please refund order Q-42 (19.90 EUR).');
    const context = await newContext();
    const page = await signIn(context);
    const row = page.locator(`tr[data-turn="${id}"]`);
    expect(await row.locator('.row-input').textContent()).toBe('Please refund order Q-42 (19.90 EUR).');
    expect(await row.locator('.row-asks').textContent()).toBe(
      'asks to run refund {"order":"Q-42","amount":19.9,"currency":"EUR"}',
    );
    // Live: a new turn's row comes with its input too.
    const later = await submitParked('Refund order Q-43, 5 EUR.');
    await page.locator(`tr[data-turn="${later}"] .row-asks`).waitFor();
    expect(await page.locator(`tr[data-turn="${later}"] .row-input`).textContent()).toBe('Refund order Q-43, 5 EUR.');
    await context.close();
  });

  it('Reject with an empty reason decides nothing: it asks again for the reason, and Back leaves the call waiting', async () => {
    const id = await submitParked('Refund order R-1, 30 EUR.');
    const context = await newContext();
    const page = await signIn(context);
    await page.goto(`${t.url}/console/turns/${id}`);
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    await page.getByRole('heading', { name: 'Reject call_1?' }).waitFor();
    // The field is required: the browser does not send an empty reason.
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    expect(await page.getByRole('heading', { name: 'Reject call_1?' }).count()).toBe(1);
    expect(
      await page
        .locator('#reason')
        .evaluate((el) => (el as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing),
    ).toBe(true);
    // Sent anyway (spaces only, past the browser's check), the server asks again and stores nothing.
    await page.locator('#reason').evaluate((el) => el.removeAttribute('required'));
    await page.locator('#reason').fill('   ');
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    await page.getByText('Write the reason the model reads, then Reject.').waitFor();
    expect((await t.store.get(id))?.decisions).toEqual([]);
    await page.getByRole('link', { name: 'Back to the turn' }).click();
    await page.locator('[data-panel="summary"] .badge[data-status="awaiting_approval"]').waitFor();
    expect((await t.store.get(id))?.parked.map((p) => p.call.id)).toEqual(['call_1']);
    await context.close();
  });

  it('a failed turn’s page says it ended, not that no worker took it; the timeline starts with the turn', async () => {
    // No worker has the agent 'billing': the worker that takes the turn fails it (unknown_agent).
    const failed = await t.store.submit({ agent: 'billing', input: 'Send me my invoices.' });
    await waitForStatus(t.store, failed, 'failed');
    const context = await newContext();
    const page = await signIn(context);
    await page.goto(`${t.url}/console/turns/${failed}`);
    const transcript = page.locator('[data-panel="transcript"]');
    expect(await transcript.textContent()).toContain('No messages: the turn ended (failed) before its first one');
    expect(await transcript.textContent()).not.toContain('has not taken');

    const id = await submitParked('Refund order T-1, 3 EUR.');
    await page.goto(`${t.url}/console/turns/${id}`);
    await page.locator('#timeline li').first().waitFor();
    const kinds = await page.locator('#timeline li .kind').allTextContents();
    expect(kinds.indexOf('turn started')).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf('turn started')).toBeLessThan(kinds.indexOf('model reply'));
    await context.close();
  });

  it('updates the list live: a new turn appears and the waiting badge counts it', async () => {
    const context = await newContext();
    const page = await signIn(context);
    const before = await page.locator('[data-panel="waiting"]').textContent();
    const id = await submitParked('Refund order L-1, 9 EUR.');
    await page.locator(`tr[data-turn="${id}"] .badge-waiting`).waitFor();
    const after = await page.locator('[data-panel="waiting"]').textContent();
    expect(after).not.toBe(before);
    expect(after).toMatch(/^\d+ waiting for you$/);
    await context.close();
  });

  it('follows a thread live: its parked turn is decided elsewhere, and the page shows it stopped', async () => {
    const id = await t.store.submit({ agent: 'support', input: 'Refund order H-1, 5 EUR.', thread: 'browser-live' });
    await waitForStatus(t.store, id, 'awaiting_approval');
    const context = await newContext();
    const page = await signIn(context);
    await page.goto(`${t.url}/console/threads/browser-live`);
    await page.locator(`[data-panel="turns"] tr[data-turn="${id}"] .badge-waiting`).waitFor();
    expect(await page.locator('[data-panel="parked"] .tool').textContent()).toBe('refund');
    await t.store.decide(id, { call_1: { type: 'approve' } });
    // No reload: the stream re-renders the turns, what waits and the transcript.
    await page.locator(`[data-panel="turns"] tr[data-turn="${id}"] .badge[data-status="stopped"]`).waitFor();
    await page.locator('[data-panel="transcript"]').getByText('Done: refunded 5 EUR for H-1.').waitFor();
    expect(await page.locator('[data-panel="parked"]').textContent()).toContain('Nothing is waiting for a person.');
    await context.close();
  });

  it('reads at 360 px wide without sideways scrolling', async () => {
    const id = await submitParked('Refund order N-360, 7.50 EUR.');
    const context = await newContext(360, 780);
    const page = await signIn(context);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(page, 'list-360');
    await page.goto(`${t.url}/console/turns/${id}`);
    await page.locator('#timeline li').first().waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(page, 'turn-360');
    await context.close();
  });

  it('shows nothing to a wrong token', async () => {
    const id = await submitParked('Refund order W-1, 1 EUR.');
    const context = await newContext();
    const page = await signIn(context, 'not-the-token-not-the-token-not');
    expect(await page.getByRole('alert').textContent()).toContain('not the server');
    await page.goto(`${t.url}/console/turns/${id}`);
    expect(new URL(page.url()).pathname).toBe('/console/login');
    const text = await page.content();
    expect(text).not.toContain(id);
    expect(text).not.toContain('A-17');
    await context.close();
  });
});
