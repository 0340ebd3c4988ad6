// Browser-test helpers: headless Chromium through playwright-core against the real server
// (tests/integration/lib/harness.mjs), users made through the API with an admin token, and a
// watcher that records every CSP violation and console error a page produces.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { api, dataDir, projectDir } from '../../integration/lib/harness.mjs';
import { mintToken } from '../../integration/lib/cli.mjs';

export { dataDir };
export const resultsDir = path.join(projectDir, 'test-results');

const CHROMIUM = process.env.CAPLEDGER_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test does this)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

// A page that records CSP violations (the DOM event and Chromium's console report) and
// console errors into `problems`, so any test can assert there were none.
//
// The review page folds its sections (details.fold, closed at first). Tests that read or fill
// what is inside them get every fold opened as it appears (folds: 'open', the default);
// tests of the folding itself ask for { folds: 'closed' }.
export async function watchedPage(context, { folds = 'open' } = {}) {
  const page = await context.newPage();
  const problems = [];
  if (folds === 'open') {
    await page.addInitScript(() => {
      const openAll = () => document.querySelectorAll('details.fold:not([open])').forEach((d) => { d.open = true; });
      new MutationObserver(openAll).observe(document, { childList: true, subtree: true });
    });
  }
  await page.exposeFunction('__cspViolation', (v) => problems.push(`CSP: ${v}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  page.on('console', (msg) => {
    const text = msg.text();
    // Chromium logs every HTTP error status as "Failed to load resource"; an expected 401 (the
    // first GET /me before signing in), a 422 a test provokes or a 429 the page waits out (the
    // engine's one comparison per user) is not a fault of the page.
    if (/^Failed to load resource: the server responded with a status of (401|403|404|409|422|429)/.test(text)) return;
    if (msg.type() === 'error' || /Content Security Policy/i.test(text)) problems.push(`console ${msg.type()}: ${text}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return { page, problems };
}

export async function adminToken(srv) {
  srv.adminToken ??= mintToken(srv, 'admin', 'browser-tests');
  return srv.adminToken;
}

export async function apiOk(srv, method, urlPath, opts = {}) {
  const token = opts.token ?? await adminToken(srv);
  const r = await api(srv.url, method, urlPath, { ...opts, token });
  if (r.status >= 400) throw new Error(`${method} ${urlPath} → ${r.status}: ${r.text}`);
  return r.json;
}

export async function createTeam(srv, name) {
  return apiOk(srv, 'POST', '/api/v1/teams', { body: { name } });
}

export async function createUser(srv, { username, role, teams = [], password = `pw-${username}-0123456789` }) {
  await apiOk(srv, 'POST', '/api/v1/users', { body: { username, password, role, teams } });
  return { username, password, role, teams };
}

export async function signIn(page, srv, user) {
  await page.goto(`${srv.url}/#/login`);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('current-user').waitFor();
  // The landing page drawn (its route set): a page the test goes to next is not drawn twice,
  // once more by the landing's own hashchange, which emptied what the test had typed.
  await page.locator('[data-route]').waitFor({ state: 'attached' });
}

// Opens #/route and waits until the page has rendered and no API request is in flight.
export async function openRoute(page, srv, route) {
  await page.goto(`${srv.url}/#/${route}`);
  await page.locator(`main[data-route="${route}"]`).waitFor({ state: 'attached' });
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
}

export function readData(rel) {
  return fs.readFileSync(path.join(dataDir, rel), 'utf8');
}

// A chart figure (static/js/charts.js) drawn by Chart.js with data: the figure says it was
// drawn, its canvas has painted pixels, and its text summary is there. Returns the summary.
export async function drawnChart(page, id) {
  const fig = page.locator(`figure[data-chart="${id}"]`);
  await fig.and(page.locator('[data-drawn="true"]')).waitFor();
  const painted = await fig.locator('canvas').evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return { n, w: c.width, h: c.height, label: c.getAttribute('aria-label') };
  });
  if (!(painted.w > 0 && painted.h > 0 && painted.n > 500)) throw new Error(`chart ${id} is empty: ${JSON.stringify(painted)}`);
  const summary = (await fig.locator('.chart-summary').innerText()).trim();
  if (!summary || summary !== painted.label) throw new Error(`chart ${id}: summary ${summary} vs label ${painted.label}`);
  return summary;
}

// At a narrow width: the page's horizontal overflow and the actions (buttons, links, fields,
// fold summaries) that lie outside the window, unless a box of their own scrolls them (a wide
// table): what a phone user could only reach by scrolling the page sideways.
export async function sidewaysProblems(page) {
  return page.evaluate(() => {
    const out = [];
    const over = document.documentElement.scrollWidth - window.innerWidth;
    if (over > 1) out.push(`the page is ${over}px wider than the window`);
    const scrollsItself = (e) => {
      for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
        if (/(auto|scroll)/.test(getComputedStyle(p).overflowX)) return true;
      }
      return false;
    };
    for (const e of document.querySelectorAll('main button, main a[href], main input, main select, main textarea, main summary')) {
      if (!e.getClientRects().length || scrollsItself(e)) continue;
      const r = e.getBoundingClientRect();
      if (r.left < -1 || r.right > window.innerWidth + 1) out.push(`${e.tagName.toLowerCase()} "${(e.textContent || e.getAttribute('aria-label') || e.name || '').trim().slice(0, 40)}" outside the window`);
    }
    return out.slice(0, 5);
  });
}
