// Issue 23, items 1 and 7 (the review page): two stored comparisons side by side with the inputs
// that differ and the figures they moved; the status with its reasons (open drift alerts: what
// drifted, by how much, since when, under which decision); the gate recomputed after each
// decision; the deciding assumptions; checklist items linked to their evidence; folding
// sections so the page fits two screens at 1280 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, DEMO_REVIEW } from './lib/demo.mjs';
import { launch, watchedPage, signIn, openRoute, apiOk } from './lib/browser.mjs';

let demo;
let browser;
let review;
let first;

before(async () => {
  demo = await startDemo();
  browser = await launch();
  const token = demo.tokens['demo-owner'];
  review = (await apiOk(demo.srv, 'GET', '/api/v1/reviews', { token })).items.find((r) => r.title === DEMO_REVIEW);
  first = (await apiOk(demo.srv, 'GET', `/api/v1/reviews/${review.id}/comparisons`, { token })).items[0];
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

async function session(who, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username: who, password: demo.passwords[who] });
  return { context, page, problems };
}

async function openReview(page) {
  await openRoute(page, demo.srv, `reviews/${review.id}`);
  await page.getByTestId('cockpit').getByTestId('winner').waitFor();
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
}

test('two stored comparisons side by side: the input that moved the winner and the figures it moved', async () => {
  const token = demo.tokens['demo-owner'];
  // A second comparison of the same scenario where the H100's benchmark measured 30 prompts/s
  // (below its break-even point, 36.1): the A100 wins.
  const stored = await apiOk(demo.srv, 'GET', `/api/v1/comparisons/${first.sha256}`, { token });
  const doc = (await apiOk(demo.srv, 'GET', `/api/v1/scenarios/${first.scenario_id}`, { token })).document;
  const h100 = doc.options.findIndex((o) => o.name === 'h100-nvme-cache');
  const resolved = stored.scenario.options[h100];
  doc.options[h100] = { ...resolved, benchmark: { ...resolved.benchmark, throughput_units_per_s: 30 } };
  const sc = await apiOk(demo.srv, 'POST', '/api/v1/scenarios', { token, body: { name: 'Nightly eval: the H100 at 30 prompts/s', team: 'eval-platform', workload_ids: first.workload_ids, document: doc } });
  const second = await apiOk(demo.srv, 'POST', `/api/v1/scenarios/${sc.id}/comparisons`, { token });
  assert.equal(second.result.winner, 'a100-streamed');

  const { context, page, problems } = await session('demo-member');
  await page.goto(`${demo.srv.url}/#/reviews/${review.id}?comparison=${first.sha256}`);
  await page.getByTestId('cockpit').getByTestId('winner').waitFor();
  const listed = await apiOk(demo.srv, 'GET', `/api/v1/reviews/${review.id}/comparisons`, { token });
  assert.equal(listed.items.length, 2, JSON.stringify(listed.items.map((c) => c.scenario_name)));
  const chooser = page.getByTestId('diff-chooser');
  await chooser.locator('summary').click();
  const other = await chooser.locator('option').filter({ hasText: 'the H100 at 30 prompts/s' }).getAttribute('value');
  await chooser.getByLabel('The other comparison').selectOption(other);
  const diff = page.getByTestId('comparison-diff');
  await diff.waitFor();
  assert.match(await diff.getByTestId('diff-winner').innerText(),
    /^The winner moved from h100-nvme-cache to a100-streamed: h100-nvme-cache's throughput went from 185 prompts\/s to 30 prompts\/s, past its break-even point\.$/);
  const inputs = diff.locator('table').first();
  assert.match(await inputs.locator('tbody tr').first().innerText(), /h100-nvme-cache's throughput\s+moved the winner\s+185 prompts\/s\s+30 prompts\/s/);
  const figures = await diff.locator('table').nth(1).locator('tbody').innerText();
  assert.match(figures, /h100-nvme-cache\s+reliable cost per outcome\s+\$[\d,.]+\s+\$[\d,.]+\s+\+\d/);
  assert.deepEqual(problems, []);
  await context.close();
});
