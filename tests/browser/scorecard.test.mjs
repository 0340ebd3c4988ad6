// The scorecard (issue 21, items 5 and 6): a decision scored against the runs after it, on the
// decision page and the review page, and the track record on the Reviews page — the figures the
// page shows are the outcome route's, which tests/integration/outcome.test.mjs recomputes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mintToken } from '../integration/lib/cli.mjs';
import { addOwner, buildEvidence, createReview, postDecision, record, runsOf } from '../integration/ledger.lib.mjs';
import { launch, watchedPage, signIn, openRoute } from './lib/browser.mjs';
import { api, startServer } from '../integration/lib/harness.mjs';

let srv, browser, owner, ownerToken, dec, rv;
const sacctTime = (ms) => new Date(ms).toISOString().slice(0, 19);

before(async () => {
  srv = await startServer();
  browser = await launch();
  const admin = { token: mintToken(srv, 'admin') };
  const me = await addOwner(srv, 'olga'); // a registered signing key
  owner = { username: 'olga', password: me.password };
  ownerToken = me.token;
  const ev = await buildEvidence(srv.url, admin, me, { seed: 31 });
  const as = (method, p, body, headers) => api(srv.url, method, p, { token: ownerToken, body, headers });
  const w = await as('GET', `/api/v1/workloads/${ev.workloadId}`);
  assert.equal((await as('PATCH', `/api/v1/workloads/${ev.workloadId}`, { runs_match: { wckey: 'llm7b' } }, { 'Content-Type': 'application/merge-patch+json', 'If-Match': w.headers.etag })).status, 200);
  assert.equal((await as('PUT', '/api/v1/clusters/fox', { partitions: [{ partition: 'gpu', offer_id: ev.offerIds['h100-on-demand'] }] })).status, 200);
  rv = await createReview(srv.url, me, [ev.workloadId], { title: 'scorecard review' });
  dec = await postDecision(srv.url, me, record(me, rv.id, { decision: 'advance', chosen_option: 'h100-on-demand', comparison_sha256: [ev.comparison.sha256] }));
  assert.equal(dec.status, 201, dec.text);
  // 24 runs after it, 20 completed, each 10 h on 8 GPUs at 55/8 per GPU-hour
  const t1 = Date.parse(dec.json.received_at) + 5000;
  const lines = ['JobID|Account|State|Submit|Start|End|AllocTRES|WCKey|Partition'];
  for (let i = 0; i < 24; i++) lines.push(`s${i}|${ev.team}|${i < 20 ? 'COMPLETED' : 'FAILED'}|${sacctTime(t1 + i * 1000)}|${sacctTime(t1 + i * 1000 + 1000)}|${sacctTime(t1 + i * 1000 + 1000 + 36_000_000)}|gres/gpu=8|llm7b|gpu`);
  assert.equal((await as('POST', '/api/v1/runs?cluster=fox', lines.join('\n') + '\n', { 'Content-Type': 'text/csv' })).status, 201);
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('the decision page and the review page show the scorecard; the Reviews page the track record', async () => {
  const o = (await api(srv.url, 'GET', `/api/v1/decisions/${dec.json.id}/outcome`, { token: ownerToken })).json;
  const realised = 24 * 10 * 8 * (55 / 8) / 20;
  assert.ok(Math.abs(o.realised.cost_per_completed - realised) < 1e-6);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, owner);

  await openRoute(page, srv, `decisions/${dec.json.id}`);
  const card = page.getByTestId('scorecard');
  await card.locator('[data-testid=scorecard-verdict]').waitFor();
  assert.equal(await card.getAttribute('data-verdict'), o.verdict);
  const money = (x) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: Math.abs(x) >= 10000 ? 0 : 2, maximumFractionDigits: Math.abs(x) >= 10000 ? 0 : 2 }).format(x);
  assert.equal(await card.getByTestId('scorecard-realised').textContent(), money(realised));
  assert.equal(await card.getByTestId('scorecard-predicted').textContent(), money(o.predicted.compute_cost_per_outcome));
  assert.equal(await card.getByTestId('scorecard-runs').textContent(), '24 (20)');
  assert.match(await card.getByTestId('scorecard-verdict').textContent(), new RegExp(o.verdict === 'drift' ? 'over the prediction' : 'within the prediction'));
  assert.doesNotMatch(await card.textContent(), /null|undefined|NaN/);

  await openRoute(page, srv, `reviews/${rv.id}`);
  const onReview = page.getByTestId('scorecard');
  await onReview.locator('[data-testid=scorecard-verdict]').waitFor();
  assert.equal(await onReview.getByTestId('scorecard-realised').textContent(), money(realised));

  await openRoute(page, srv, 'reviews');
  const tr = page.getByTestId('track-record');
  await tr.getByTestId('track-owners').waitFor();
  const row = tr.getByTestId('track-owners').locator('tbody tr').first();
  assert.equal(await row.locator('td').nth(0).textContent(), 'olga');
  assert.equal(await row.locator('td').nth(1).textContent(), '1');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the review page shows typed assumptions against the stored evidence, and the contradicted item', async () => {
  const admin = { token: mintToken(srv, 'admin') };
  const me = { name: 'olga', token: ownerToken };
  const ev = await buildEvidence(srv.url, admin, me, { seed: 32 });
  const as = (method, p, body) => api(srv.url, method, p, { token: ownerToken, body, timeoutMs: 60_000 });
  assert.equal((await as('POST', '/api/v1/runs?cluster=onprem2', runsOf(ev.team, 'onprem2', 200, { state: (i) => (i < 120 ? 'FAILED' : 'COMPLETED') }))).status, 201);
  const h100 = { gpu_model: 'H100-80GB', gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', currency: 'USD', quota_gpus: 64, available: true, storage_price_gb_month: 0.08, egress_price_gb: 0.09, orchestration_overhead: 0.05, price_per_hour: 40 };
  const bench = { instances: 2, throughput_units_per_s: 310000, gpu_duty_cycle: 0.86, input_stall_fraction: 0.04, setup_s: 1200, checkpoint_write_s: 90, restart_s: 300, checkpoint_interval_s: 3600, queue_wait_s: 1800, transfer_gb: 0, failure_probability: 0.01 };
  const sc = await as('POST', '/api/v1/scenarios', { name: 'typed q', team: ev.team, workload_ids: [ev.workloadId], document: { workload: ev.workloadId, assumptions: { engineer_rate_per_hour: 110, engineer_blocked_fraction: 0.2, failure_progress_fraction: 0.5, trials: 2000, seed: 32 }, options: [{ name: 'h100-on-demand', benchmark: ev.benchmarkIds['h100-on-demand'] }, { name: 'h100-discount', offer: h100, benchmark: bench }] } });
  assert.equal(sc.status, 201, sc.text);
  const cmp = await as('POST', `/api/v1/scenarios/${sc.json.id}/comparisons`);
  const review = await createReview(srv.url, me, [ev.workloadId], { title: 'typed against evidence' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, owner);
  await page.goto(`${srv.url}/#/reviews/${review.id}?comparison=${cmp.json.sha256}`);
  const table = page.getByTestId('typed-vs-evidence');
  await table.waitFor();
  const row = table.locator('tr[data-assumption="/options/1/benchmark/failure_probability"]');
  assert.equal(await row.locator('td').nth(2).textContent(), '0.01');
  assert.equal(await row.locator('td').nth(3).textContent(), String(Number((120 / 225).toPrecision(4))));
  assert.equal(await row.locator('td').nth(4).textContent(), '225');
  assert.match(await row.getByTestId('changes-winner').textContent(), /h100-on-demand — changes the winner/);
  const item = page.locator('[data-testid=checklist-box] li[data-item="failure and rerun rate"]');
  assert.equal(await item.getAttribute('data-status'), 'contradicted');
  assert.match(await item.textContent(), /contradicted by the stored evidence/);
  assert.deepEqual(problems, []);
  await context.close();
});
