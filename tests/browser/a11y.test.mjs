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
import { launch, watchedPage, createUser, signIn, openRoute, readData } from './lib/browser.mjs';

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
    owner: [...common, 'reviews', review_, decision, 'evidence/workloads', 'evidence/benchmarks', benchmark, 'evidence/usage', 'evidence/upload', 'alerts', 'audit'],
    team: [...common, 'evidence/workloads', benchmark, 'evidence/upload', 'reviews', review_, decision],
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
