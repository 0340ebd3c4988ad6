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
  // The demo's first comparison of the review (the A100 against the H100 with its cache).
  first = (await apiOk(demo.srv, 'GET', `/api/v1/reviews/${review.id}/comparisons?limit=50`, { token })).items
    .find((c) => c.scenario_name === 'Nightly eval: A100 streamed vs H100 with NVMe cache');
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

async function session(who, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const { page, problems } = await watchedPage(context, { folds: 'closed' });
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
  const be = stored.result.break_even.find((e) => e.input === `/options/${h100}/benchmark/throughput_units_per_s`);
  assert.ok(be && be.flips_at > 30, JSON.stringify(stored.result.break_even));
  doc.options[h100] = { ...resolved, benchmark: { ...resolved.benchmark, throughput_units_per_s: 30 } };
  const sc = await apiOk(demo.srv, 'POST', '/api/v1/scenarios', { token, body: { name: 'Nightly eval: the H100 at 30 prompts/s', team: 'eval-platform', workload_ids: first.workload_ids, document: doc } });
  const second = await apiOk(demo.srv, 'POST', `/api/v1/scenarios/${sc.id}/comparisons`, { token });
  assert.equal(second.result.winner, be.new_winner);

  const { context, page, problems } = await session('demo-member');
  await page.goto(`${demo.srv.url}/#/reviews/${review.id}?comparison=${first.sha256}`);
  await page.getByTestId('cockpit').getByTestId('winner').waitFor();
  const chooser = page.getByTestId('diff-chooser');
  await chooser.locator('summary').click();
  const other = await chooser.locator('option').filter({ hasText: 'the H100 at 30 prompts/s' }).getAttribute('value');
  await chooser.getByLabel('The other comparison').selectOption(other);
  const diff = page.getByTestId('comparison-diff');
  await diff.waitFor();
  assert.match(await diff.getByTestId('diff-winner').innerText(),
    new RegExp(`^The winner moved from h100-nvme-cache to ${be.new_winner}: h100-nvme-cache's throughput went from 185 prompts/s to 30 prompts/s, past its break-even point\\.$`));
  const inputs = diff.locator('table').first();
  assert.match(await inputs.locator('tbody tr').first().innerText(), /h100-nvme-cache's throughput\s+moved the winner\s+185 prompts\/s\s+30 prompts\/s/);
  const figures = await diff.locator('table').nth(1).locator('tbody').innerText();
  assert.match(figures, /h100-nvme-cache\s+reliable cost per outcome\s+\$[\d,.]+\s+\$[\d,.]+\s+\+\d/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the page fits two screens at 1280 px, its sections fold and open from the keyboard', async () => {
  const { context, page, problems } = await session('demo-owner');
  await openReview(page);
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const parts = await page.evaluate(() => [...document.querySelector('main').children].map((c) => `${c.tagName}.${c.className}:${Math.round(c.getBoundingClientRect().height)}`).join(' '));
  assert.ok(height <= 1600, `the review page is ${height} px tall at 1280: ${parts}`);
  const folds = page.locator('main details.fold');
  assert.ok(await folds.count() >= 6);
  const decisions = page.locator('details[data-fold=decisions]');
  await decisions.locator('summary').focus();
  await page.keyboard.press('Enter');
  assert.equal(await decisions.getAttribute('open'), '');
  await decisions.locator('.decisions tbody tr').first().waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('the status says why: each drift alert with what, how much, since when and under which decision', async () => {
  const { context, page, problems } = await session('demo-owner');
  await openReview(page);
  const story = page.getByTestId('review-story');
  assert.match(await story.getByTestId('story-status').innerText(), /^Status: needs decision — current decision: revise h100-nvme-cache · signed .* by demo-owner\.$/);
  const reasons = story.getByTestId('story-reasons').locator('li');
  await reasons.first().waitFor();
  const alerts = (await apiOk(demo.srv, 'GET', '/api/v1/alerts', { token: demo.tokens['demo-owner'] })).items.filter((a) => a.review_id === review.id && a.status !== 'resolved');
  assert.equal(await story.locator('li[data-alert]').count(), alerts.length);
  const text = await story.getByTestId('story-reasons').textContent();
  assert.match(text, /GPU utilisation: the decision assumed 1, observed 0\.55 \(-45%, threshold 25%\) over 1 measurement, open since \d{4}-\d\d-\d\d \d\d:\d\d UTC, against the current decision\./);
  assert.match(text, /throughput: the decision assumed 185, observed 112 \(-39%, threshold 25%\)/);
  // The deciding assumptions: the break-even nearest to today's values, in words.
  const deciding = await story.getByTestId('deciding-assumptions').innerText();
  assert.match(deciding, /The deciding assumptions[\s\S]*If h100-nvme-cache's throughput fell from 185 prompts\/s to [\d.]+ prompts\/s, a100-streamed would win\. That is \d+% from today's value\./);
  // Checklist items link to the evidence that covers them.
  await page.locator('details[data-fold=checklist] > summary').click();
  const links = page.locator('.checklist li[data-item] .evidence-links a');
  await links.first().waitFor();
  const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.ok(hrefs.some((x) => x.startsWith('#/evidence/benchmarks/')), hrefs.join(' '));
  assert.ok(hrefs.some((x) => x.startsWith('#/evidence/uploads/')), hrefs.join(' '));
  assert.deepEqual(problems, []);
  await context.close();
});

test('after a signed advance: the alerts are still open under it until resolved, and the gate speaks of the next decision', async () => {
  const { addOwner, record, postDecision } = await import('../integration/ledger.lib.mjs');
  const olga = await addOwner(demo.srv, 'olga');
  // An advance if the gate lets one through on this comparison, else a revise: either way a
  // signed decision the page must not speak of as still to come.
  let rec = record(olga, review.id, {
    decision: 'advance', chosen_option: 'h100-nvme-cache', comparison_sha256: [first.sha256],
    justification: null, accepted_by: 'Head of ML platform',
  });
  let r = await postDecision(demo.srv.url, olga, rec);
  if (r.status === 422) {
    rec = record(olga, review.id, { decision: 'revise', chosen_option: 'h100-nvme-cache', comparison_sha256: [first.sha256], justification: 'the boundary test comes first' });
    r = await postDecision(demo.srv.url, olga, rec);
  }
  assert.equal(r.status, 201, r.text);
  const kind = rec.decision;

  const { context, page, problems } = await session('demo-owner');
  await openReview(page);
  const story = page.getByTestId('review-story');
  assert.match(await story.getByTestId('story-status').innerText(), new RegExp(`current decision: ${kind} h100-nvme-cache · signed .* by olga`));
  const stale = story.locator('li.stale-alert');
  await stale.first().waitFor();
  const open = (await apiOk(demo.srv, 'GET', '/api/v1/alerts', { token: demo.tokens['demo-owner'] })).items.filter((a) => a.review_id === review.id && a.status !== 'resolved');
  assert.equal(await story.locator('li[data-alert]').count(), open.length);
  assert.equal(await stale.count(), open.filter((a) => a.decision_id && a.decision_id !== r.json.id).length);
  assert.match(await stale.first().innerText(), /raised against an earlier decision \(revise h100-nvme-cache · signed .* by demo-owner\): still open under the current one/);
  await page.locator('details[data-fold=checklist] > summary').click();
  const gate = page.getByTestId('gate-verdict');
  await gate.waitFor();
  assert.doesNotMatch(await page.locator('main').innerText(), /Gate: an advance would be refused/);
  assert.match(await gate.innerText(), new RegExp(`^The current decision, ${kind} h100-nvme-cache · signed .* by olga, passed the gate when it was signed\\. What follows is about the next one\\.\\n+Gate: a new advance superseding the current decision would (pass|be refused)`));
  // Resolving one from the story records which decision answered it.
  // Counted before the click: the story may redraw before a count taken after it.
  const staleBefore = await stale.count();
  await stale.first().getByRole('button', { name: 'Resolve: the current decision answers it' }).click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=story-reasons] li.stale-alert').length === n, staleBefore - 1);
  const alerts = await apiOk(demo.srv, 'GET', '/api/v1/alerts', { token: demo.tokens['demo-owner'] });
  const resolved = alerts.items.filter((a) => a.status === 'resolved' && a.review_id === review.id && /^answered by/.test(a.note || ''));
  assert.equal(resolved.length, 1);
  assert.match(resolved[0].note, new RegExp(`^answered by the decision ${kind} h100-nvme-cache · signed .* by olga$`));
  assert.deepEqual(problems, []);
  await context.close();
});
