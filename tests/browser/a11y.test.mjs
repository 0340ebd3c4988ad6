// Accessibility, checked by axe-core (npm, devDependencies) on every main page for each role,
// at 1280×800 and in a narrow window: no serious or critical violation, and no page wider than
// the window. axe runs through page.evaluate (the DevTools protocol), so the page's strict CSP
// stays in force for the page itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { mintToken } from '../integration/lib/cli.mjs';
import { addOwner, buildEvidence, createReview, postDecision, record } from '../integration/ledger.lib.mjs';
import { api, startServer } from '../integration/lib/harness.mjs';
import { launch, watchedPage, sidewaysProblems, createUser, signIn, openRoute, readData } from './lib/browser.mjs';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let srv;
let browser;
let users;
let routes;
let benchmark;

before(async () => {
  srv = await startServer();
  browser = await launch();
  const admin = { token: mintToken(srv, 'admin') };
  const pavel = await addOwner(srv, 'pavel');
  const ev = await buildEvidence(srv.url, admin, pavel);
  const review = await createReview(srv.url, pavel, [ev.workloadId], { title: 'Evaluation capacity' });
  const d = await postDecision(srv.url, pavel, record(pavel, review.id, { comparison_sha256: [ev.comparison.sha256], chosen_option: ev.result.winner }));
  assert.equal(d.status, 201, d.text);
  users = {
    owner: await createUser(srv, { username: 'olga', role: 'owner' }),
    team: await createUser(srv, { username: 'tariq', role: 'team', teams: [ev.team] }),
    auditor: await createUser(srv, { username: 'aude', role: 'auditor' }),
    admin: await createUser(srv, { username: 'adam', role: 'admin' }),
  };
  const common = ['compare', 'account'];
  const review_ = `reviews/${review.id}`;
  const decision = `decisions/${d.json.id}`;
  // A benchmark's view with its duty-cycle chart (real nvidia-smi samples attached).
  const benchId = Object.values(ev.benchmarkIds)[0];
  const tele = await api(srv.url, 'POST', `/api/v1/benchmarks/${benchId}/telemetry?format=nvidia-smi&force=true`, {
    token: pavel.token, body: readData('samples/nvidia-smi/nesi_a100_nounits_l5_timeseries.csv'), headers: { 'Content-Type': 'text/csv' },
  });
  assert.equal(tele.status, 201, tele.text);
  benchmark = `evidence/benchmarks/${benchId}`;
  routes = {
    owner: [...common, 'reviews', review_, decision, 'evidence/workloads', 'evidence/benchmarks', benchmark, 'evidence/usage', 'evidence/upload', 'evidence/runs', 'evidence/uploads', `evidence/uploads/${tele.json.id}`, 'alerts', 'audit'],
    team: [...common, 'evidence/workloads', benchmark, 'evidence/upload', 'evidence/uploads', `evidence/uploads/${tele.json.id}`, 'reviews', review_, decision],
    auditor: [...common, 'audit', 'reviews', review_, decision, 'evidence/runs'],
    admin: [...common, 'admin', 'audit'],
  };
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

async function axe(page) {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
}

for (const [name, viewport] of [['1280×800', { width: 1280, height: 800 }], ['narrow', { width: 400, height: 800 }]]) {
  test(`no serious accessibility violation on any main page of any role (${name})`, async () => {
    const found = [];
    for (const [role, user] of Object.entries(users)) {
      const context = await browser.newContext({ viewport });
      const { page, problems } = await watchedPage(context);
      await signIn(page, srv, user);
      for (const route of routes[role]) {
        await openRoute(page, srv, route);
        if (route === 'compare') {
          await page.getByLabel('…or start from a stored scenario').selectOption({ index: 1 });
          await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('"options"'));
          await page.getByRole('button', { name: 'Compare', exact: true }).click();
          await page.getByTestId('winner').waitFor();
        }
        await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
        if (route === benchmark) await page.locator('figure[data-chart="duty-cycle"][data-drawn="true"]').waitFor();
        for (const v of await axe(page)) {
          if (v.impact === 'serious' || v.impact === 'critical') found.push(`${role} #/${route}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.join(', ')}`);
        }
        const overflow = await page.evaluate(() => {
          const over = document.documentElement.scrollWidth - window.innerWidth;
          // The innermost element that sticks out, to say where.
          const out = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
            .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > window.innerWidth + 1));
          const name = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''}`;
          const widest = [...document.querySelectorAll('body *')].map((e) => [e, Math.max(e.getBoundingClientRect().right, e.scrollWidth + e.getBoundingClientRect().left)])
            .sort((a, b) => b[1] - a[1]).slice(0, 4).map(([e, r]) => `${name(e)}:${Math.round(r)}`);
          const where = [...out.slice(0, 2).map(name), ...widest].join(', ');
          return { over, where };
        });
        if (overflow.over > 1) found.push(`${role} #/${route}: the page is ${overflow.over}px wider than the window (${overflow.where})`);
        // Every action is within the window, or in a box that scrolls by itself (a wide table).
        for (const p of (await sidewaysProblems(page)).filter((x) => !x.startsWith('the page is'))) found.push(`${role} #/${route}: ${p}`);
      }
      assert.deepEqual(problems, [], role);
      await context.close();
    }
    assert.deepEqual(found, []);
  });
}

test('the keyboard reaches the review cockpit\'s comparison menu, and focus is visible', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page } = await watchedPage(context);
  await signIn(page, srv, users.owner);
  await openRoute(page, srv, routes.owner[3]);
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement && document.activeElement.id === 'review-comparison');
  }
  assert.ok(reached, 'Tab reaches the comparison menu');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none');
  await context.close();
});

test('keyboard only: the owner opens the decision form, registers a key and signs; focus stays where the action is', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await watchedPage(context, { folds: 'closed' });
  await signIn(page, srv, users.owner);
  await openRoute(page, srv, routes.owner[3]);
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  const focused = () => page.evaluate(() => {
    const e = document.activeElement;
    return e ? `${e.tagName.toLowerCase()}|${e.id}|${(e.textContent || '').trim().slice(0, 40)}|${e.name || ''}` : '';
  });
  async function tabTo(test, limit = 200) {
    for (let i = 0; i < limit; i++) {
      await page.keyboard.press('Tab');
      if (test(await focused())) return;
    }
    assert.fail(`Tab never reached it (last: ${await focused()})`);
  }
  // The fold of the decision form: Enter opens it and focus stays on it.
  await tabTo((f) => f.startsWith('summary|') && f.includes('Record a decision'));
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('details[data-fold=decision-form]').getAttribute('open'), '');
  assert.match(await focused(), /^summary\|.*Record a decision/);
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none');
  // The password the key's registration asks for, then Sign and submit, all from the keyboard.
  await tabTo((f) => f.endsWith('|key-password'));
  await page.keyboard.type(users.owner.password);
  await tabTo((f) => f.startsWith('button|') && f.includes('Sign and submit'));
  await page.keyboard.press('Enter');
  // The receipt takes the focus: the leaf index and the verified inclusion are where it is.
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'receipt-title', null, { timeout: 30_000 });
  assert.match(await focused(), /^h3\|receipt-title\|Decision signed and logged/);
  const box = await page.evaluate(() => { const r = document.activeElement.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, h: window.innerHeight }; });
  assert.ok(box.top >= 0 && box.bottom <= box.h, `the receipt heading is in view: ${JSON.stringify(box)}`);
  assert.deepEqual(problems, []);
  await context.close();
});
