/**
 * The end-to-end rig: a real Plinth (embedded PostgreSQL, this test file's database) listening
 * on a loopback port, and Debian's Chromium driven by playwright-core. Without
 * /usr/bin/chromium the e2e files are skipped with a clear message, unless
 * PLINTH_REQUIRE_BROWSER=1 (CI), where a missing browser fails the run.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { createTestEnv, type TestEnv } from '../helpers/context.js';
import { ROOT_DIR } from '../../src/paths.js';

export const CHROMIUM = '/usr/bin/chromium';
export const hasBrowser = existsSync(CHROMIUM);
const required = process.env.PLINTH_REQUIRE_BROWSER === '1';

/** Says clearly why the browser tests do not run; with PLINTH_REQUIRE_BROWSER=1 that is a failure. */
export function browserGate(file: string): boolean {
  if (hasBrowser) return true;
  if (required) throw new Error(`PLINTH_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing: install it (apt-get install -y chromium)`);
  console.warn(`SKIPPED ${file}: end-to-end console tests need ${CHROMIUM} (apt-get install -y chromium).`);
  return false;
}

const ARTIFACTS = path.join(ROOT_DIR, 'test-artifacts', 'e2e');
const DOC_IMAGES = path.join(ROOT_DIR, 'docs', 'images');
const refreshDocs = process.env.PLINTH_DOC_SCREENSHOTS === '1';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Debian's Chromium, headless, with the flags this machine needs (no sandbox, no network chatter). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}

export interface Rig {
  env: TestEnv;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * `hostname`: the name the browser uses (still served on 127.0.0.1). WebAuthn needs a name, not
 * an IP address, as relying party id: the passkey tests use `localhost`, and a name of the kind
 * a deployment has (`console.plinth.test`), which Chromium resolves to 127.0.0.1 and, served
 * over plain HTTP here, treats as a secure context (a deployment serves it over HTTPS).
 */
export async function startRig(extraEnv: Record<string, string> = {}, opts: { hostname?: string } = {}): Promise<Rig> {
  const port = await freePort();
  const base = `http://${opts.hostname ?? '127.0.0.1'}:${port}`;
  const env = await createTestEnv({ PUBLIC_URL: base, RATE_LIMIT_SCALE: '100', LOG_LEVEL: 'warn', ...extraEnv });
  await env.app.listen({ port, host: '127.0.0.1' });
  const name = opts.hostname;
  const mapped = name && name !== 'localhost' && name !== '127.0.0.1';
  const browser = await launchChromium(mapped ? [`--host-resolver-rules=MAP ${name} 127.0.0.1`, `--unsafely-treat-insecure-origin-as-secure=${base}`] : []);
  return {
    env,
    base,
    browser,
    async close() {
      await browser.close();
      await env.close();
    },
  };
}

export interface PageProblems {
  /** Console errors and CSP violations seen on the page (a strict CSP must never bite). */
  errors: string[];
}

export async function openPage(rig: Rig, viewport = { width: 1280, height: 800 }): Promise<{ page: Page; problems: PageProblems }> {
  const context = await rig.browser.newContext({ viewport, baseURL: rig.base, colorScheme: 'light', acceptDownloads: true });
  const page = await context.newPage();
  const problems: PageProblems = { errors: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.errors.push(m.text());
  });
  page.on('pageerror', (e) => problems.errors.push(String(e)));
  return { page, problems };
}

/** Signs in through the form (the session arrives as cookies). */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/_/#/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/**
 * axe-core on the current screen: no serious or critical violation (WCAG 2 A/AA rules). Run
 * through the DevTools protocol, so the page's CSP need not allow it.
 */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: unknown[] }> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, resultTypes: ['violations'] });
    return r.violations;
  })) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`), `axe on ${screen}`).toEqual([]);
}

/** The page is no wider than the window (no horizontal scroll); names what sticks out when it is. */
export async function expectNoHorizontalScroll(page: Page, screen: string): Promise<void> {
  const [scroll, client, culprits] = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The outermost elements that stick out, to name them when the check fails.
    const out = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > width + 1 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > width + 1));
    return [document.documentElement.scrollWidth, width, out.slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`).join(', ')] as const;
  });
  expect(scroll, `horizontal scroll on ${screen} at ${client}px (${culprits})`).toBeLessThanOrEqual(client);
}

/** A screenshot as a test artefact; with PLINTH_DOC_SCREENSHOTS=1 also the docs' copy. */
export async function shot(page: Page, name: string, opts: { doc?: boolean } = {}): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  // Toasts of earlier steps would cover the screen; hidden for the picture only.
  const toasts = page.locator('.toasts');
  await toasts.evaluate((el: HTMLElement) => (el.style.visibility = 'hidden')).catch(() => undefined);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  if (opts.doc && refreshDocs) {
    mkdirSync(DOC_IMAGES, { recursive: true });
    await page.screenshot({ path: path.join(DOC_IMAGES, `console-${name}.png`) });
  }
  await toasts.evaluate((el: HTMLElement) => (el.style.visibility = '')).catch(() => undefined);
}
