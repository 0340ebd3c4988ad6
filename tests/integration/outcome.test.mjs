// Realised against predicted (issue 21, item 5) and the track record (item 6): a workload with a
// WCKey rule, sacct runs before and after a decision whose chosen option then costs 35 % more per
// completed run. The outcome's figures equal a recomputation here (from the lines sent and the
// stored comparison), the drift alert fires once, the review reads "needs decision", and the
// track record counts the decision outside its threshold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, buildEvidence, createReview, postDecision, record } from './ledger.lib.mjs';

let srv, admin, olga, auditor;
const call = (method, p, who, body, headers) => api(srv.url, method, p, { token: who.token, body, headers });

before(async () => {
  srv = await startServer();
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  auditor = addUser(srv, 'audrey', 'auditor');
});
after(async () => { await srv?.stop(); });

const COMPUTE = ['useful', 'input_stall', 'other_idle', 'setup', 'checkpoint_and_interruption', 'failed_attempts', 'unused_reservation'];
const HEADER = 'JobID|Account|State|Submit|Start|End|AllocTRES|WCKey|Partition';
const sacctTime = (ms) => new Date(ms).toISOString().slice(0, 19); // UTC, no offset (sacct prints local time; ?tz= defaults to UTC)

test('a decision scored against the runs after it: figures recomputed, one alert, needs decision, the track record', async () => {
  const full = await buildEvidence(srv.url, admin, olga, { seed: 21 });
  const chosen = 'h100-on-demand';
  // the workload's runs are those with WCKey llm7b; the cluster map prices partition gpu at the chosen offer
  const w = await call('GET', `/api/v1/workloads/${full.workloadId}`, olga);
  const patch = await call('PATCH', `/api/v1/workloads/${full.workloadId}`, olga, { runs_match: { wckey: 'llm7b' } }, { 'Content-Type': 'application/merge-patch+json', 'If-Match': w.headers.etag });
  assert.equal(patch.status, 200, patch.text);
  const map = await call('PUT', '/api/v1/clusters/fox', olga, { partitions: [{ partition: 'gpu', offer_id: full.offerIds[chosen] }] });
  assert.equal(map.status, 200, map.text);
  const pricePerGpuHour = 55.0 / 8;

  // Before the decision: 10 cheap runs of the workload (not counted).
  const t0 = Date.now() - 3 * 86_400_000;
  const before = [];
  for (let i = 0; i < 10; i++) before.push(`b${i}|${full.team}|COMPLETED|${sacctTime(t0 + i * 60_000)}|${sacctTime(t0 + i * 60_000 + 60_000)}|${sacctTime(t0 + i * 60_000 + 3_660_000)}|gres/gpu=8|llm7b|gpu`);
  assert.equal((await call('POST', '/api/v1/runs?cluster=fox', olga, [HEADER, ...before].join('\n') + '\n', { 'Content-Type': 'text/csv' })).status, 201);

  const rv = await createReview(srv.url, olga, [full.workloadId], { title: 'scored decision' });
  assert.equal(rv.outcome_threshold, 0.2);
  const dec = await postDecision(srv.url, olga, record(olga, rv.id, { decision: 'advance', chosen_option: chosen, comparison_sha256: [full.comparison.sha256] }));
  assert.equal(dec.status, 201, dec.text);
  const decidedAt = Date.parse(dec.json.received_at);

  // The prediction for the chosen option, from the stored comparison itself.
  const option = full.result.options.find((o) => o.name === chosen);
  const predicted = COMPUTE.reduce((s, k) => s + (option.breakdown[k] || 0), 0);
  assert.ok(predicted > 0);
  // After: 30 runs (24 completed), each long enough that the cost per completed run is 1.35 × predicted.
  const n = 30;
  const completedWanted = 24;
  const durationS = Math.round(1.35 * predicted * completedWanted / (n * 8 * pricePerGpuHour) * 3600);
  const after = [];
  const t1 = decidedAt + 5_000;
  for (let i = 0; i < n; i++) {
    const sub = t1 + i * 1000;
    after.push({ id: `a${i}`, state: i < completedWanted ? 'COMPLETED' : 'FAILED', sub, start: sub + 30_000, end: sub + 30_000 + durationS * 1000 });
  }
  // and runs of the same team without the WCKey, and of another key: not the workload's
  after.push({ id: 'x1', state: 'COMPLETED', sub: t1, start: t1 + 1000, end: t1 + 1000 + 36_000_000, wckey: '' });
  after.push({ id: 'x2', state: 'COMPLETED', sub: t1, start: t1 + 1000, end: t1 + 1000 + 36_000_000, wckey: 'other' });
  const lines = after.map((r) => `${r.id}|${full.team}|${r.state}|${sacctTime(r.sub)}|${sacctTime(r.start)}|${sacctTime(r.end)}|gres/gpu=8|${r.wckey ?? 'llm7b'}|gpu`);
  const up = await call('POST', '/api/v1/runs?cluster=fox', olga, [HEADER, ...lines].join('\n') + '\n', { 'Content-Type': 'text/csv' });
  assert.equal(up.status, 201, up.text);

  // Independently: GPU-hours of the 30 runs at the map's price, over the completed ones.
  const mine = after.filter((r) => r.wckey === undefined);
  const gh = mine.reduce((s, r) => s + 8 * (Math.floor(r.end / 1000) - Math.floor(r.start / 1000)) / 3600, 0);
  const cost = gh * pricePerGpuHour;
  const realised = cost / completedWanted;
  const error = realised / predicted - 1;
  assert.ok(Math.abs(error - 0.35) < 0.01, `the runs were built to cost 35 % more: ${error}`);

  const o = await call('GET', `/api/v1/decisions/${dec.json.id}/outcome`, olga);
  assert.equal(o.status, 200, o.text);
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
  assert.equal(o.json.realised.runs, n);
  assert.equal(o.json.realised.completed, completedWanted);
  close(o.json.realised.gpu_hours, gh, 'GPU-hours');
  close(o.json.realised.cost, cost, 'cost');
  close(o.json.realised.cost_per_completed, realised, 'cost per completed run');
  assert.equal(o.json.realised.currency, 'USD');
  close(o.json.predicted.compute_cost_per_outcome, predicted, 'predicted compute');
  close(o.json.predicted.expected_cost_per_outcome, option.expected_cost_per_outcome, 'predicted expected');
  close(o.json.error, error, 'error');
  assert.equal(o.json.verdict, 'drift');
  assert.equal(o.json.window.from, dec.json.received_at);
  assert.equal(o.json.window.until, null);
  assert.deepEqual(o.json.workloads.map((x) => x.matched_by), ['runs_match']);
  assert.ok(o.json.run_uploads.includes(up.json.id));
  const monthSum = o.json.realised.months.reduce((s, m) => s + m.runs, 0);
  assert.equal(monthSum, n);

  // The alert fires once; the review needs a decision again.
  const sweep = await call('POST', '/api/v1/alerts/sweep', olga);
  assert.equal(sweep.status, 200, sweep.text);
  let alerts = (await call('GET', `/api/v1/alerts?review=${rv.id}`, olga)).json.items.filter((a) => a.metric === 'cost_per_outcome');
  assert.equal(alerts.length, 1);
  close(alerts[0].assumed, predicted, 'alert assumed');
  close(alerts[0].observed, realised, 'alert observed');
  assert.equal(alerts[0].threshold, 0.2);
  assert.equal(alerts[0].sample_size, n);
  assert.match(alerts[0].message, /realised compute cost per completed run since the decision/);
  await call('POST', '/api/v1/alerts/sweep', olga);
  alerts = (await call('GET', `/api/v1/alerts?review=${rv.id}`, olga)).json.items.filter((a) => a.metric === 'cost_per_outcome');
  assert.equal(alerts.length, 1, 'once');
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, olga)).json.status, 'needs decision');

  // The track record: olga made one decision, outside its threshold, error 35 %.
  const tr = await call('GET', '/api/v1/reports/decisions', auditor);
  assert.equal(tr.status, 200, tr.text);
  const byOwner = tr.json.owners.find((x) => x.owner === 'olga');
  assert.equal(byOwner.decisions, 1);
  assert.equal(byOwner.scored, 1);
  assert.equal(byOwner.within_threshold, 0);
  assert.equal(byOwner.share_within_threshold, 0);
  close(byOwner.median_error, error, 'median error');
  const byTeam = tr.json.teams.find((x) => x.team === full.team);
  assert.equal(byTeam.decisions, 1);

  // A later decision closes the first one's window: its outcome no longer counts runs after it.
  const again = await postDecision(srv.url, olga, record(olga, rv.id, { decision: 'revise', supersedes: dec.json.id }));
  assert.equal(again.status, 201, again.text);
  const closed = await call('GET', `/api/v1/decisions/${dec.json.id}/outcome`, olga);
  assert.equal(closed.json.window.until, again.json.received_at);
  const until = Date.parse(again.json.received_at);
  assert.equal(closed.json.realised.runs, mine.filter((r) => Math.floor(r.sub / 1000) * 1000 < until).length);
});

test('runs on a partition no map prices, and CPU-only runs: no cost per completed run is made up', async () => {
  // A third of the workload's GPU-hours run on a partition the map does not price. Dividing the
  // priced cost by every completed run read a third cheaper than what happened (here "within"
  // for a 35 % overrun); and CPU-only steps under the same WCKey (gpus 0) counted as runs and as
  // completed outcomes.
  const full = await buildEvidence(srv.url, admin, olga, { seed: 22 });
  const chosen = 'h100-on-demand';
  const w = await call('GET', `/api/v1/workloads/${full.workloadId}`, olga);
  assert.equal((await call('PATCH', `/api/v1/workloads/${full.workloadId}`, olga, { runs_match: { wckey: 'llm7b-u' } }, { 'Content-Type': 'application/merge-patch+json', 'If-Match': w.headers.etag })).status, 200);
  assert.equal((await call('PUT', '/api/v1/clusters/ufox', olga, { partitions: [{ partition: 'gpu', offer_id: full.offerIds[chosen] }] })).status, 200);
  const rv = await createReview(srv.url, olga, [full.workloadId], { title: 'partly unpriced' });
  const dec = await postDecision(srv.url, olga, record(olga, rv.id, { decision: 'advance', chosen_option: chosen, comparison_sha256: [full.comparison.sha256] }));
  assert.equal(dec.status, 201, dec.text);
  const option = full.result.options.find((o) => o.name === chosen);
  const predicted = COMPUTE.reduce((s, k) => s + (option.breakdown[k] || 0), 0);
  const iso = (ms) => new Date(ms).toISOString();
  const t1 = Date.parse(dec.json.received_at) + 5_000;
  // 30 GPU runs, all completed, each 1.35 × predicted in GPU cost at the map's price; every third
  // on partition 'debug' (no map entry); and 10 CPU-only runs, completed
  const hours = 1.35 * predicted / (8 * 55.0 / 8);
  const runs = [];
  for (let i = 0; i < 30; i++) runs.push({ external_id: `u${i}`, team: full.team, wckey: 'llm7b-u', partition: i % 3 === 0 ? 'debug' : 'gpu', submitted_at: iso(t1 + i * 1000), started_at: iso(t1 + i * 1000 + 1000), ended_at: iso(t1 + i * 1000 + 1000 + Math.round(hours * 3600) * 1000), gpus: 8, state: 'COMPLETED' });
  for (let i = 0; i < 10; i++) runs.push({ external_id: `c${i}`, team: full.team, wckey: 'llm7b-u', partition: 'gpu', submitted_at: iso(t1 + i * 1000), started_at: iso(t1 + i * 1000 + 1000), ended_at: iso(t1 + i * 1000 + 61_000), gpus: 0, state: 'COMPLETED' });
  assert.equal((await call('POST', '/api/v1/runs?cluster=ufox', olga, runs)).status, 201);
  const o = await call('GET', `/api/v1/decisions/${dec.json.id}/outcome`, olga);
  assert.equal(o.status, 200, o.text);
  assert.equal(o.json.realised.runs, 30, 'GPU runs only');
  assert.equal(o.json.realised.completed, 30, 'a CPU-only step is not an outcome');
  assert.equal(o.json.realised.unpriced_runs, 10);
  const gh = runs.filter((r) => r.gpus > 0 && r.partition === 'debug').reduce((s, r) => s + 8 * (Date.parse(r.ended_at) - Date.parse(r.started_at)) / 3_600_000, 0);
  assert.ok(Math.abs(o.json.realised.unpriced_gpu_hours - gh) < 1e-9);
  assert.equal(o.json.verdict, 'not_comparable', o.json.reason);
  assert.match(o.json.reason, /10 runs .* no cluster map prices/);
  assert.equal(o.json.realised.cost_per_completed, null);
  assert.equal(o.json.error, null);
  assert.equal(o.json.realised.months[0].cost_per_completed, null);
  // mapping the partition prices every hour: the 35 % overrun is a drift
  assert.equal((await call('PUT', '/api/v1/clusters/ufox', olga, { partitions: [{ partition: 'gpu', offer_id: full.offerIds[chosen] }, { partition: 'debug', offer_id: full.offerIds[chosen] }] })).status, 200);
  const mapped = await call('GET', `/api/v1/decisions/${dec.json.id}/outcome`, olga);
  assert.equal(mapped.json.verdict, 'drift', mapped.json.reason);
  assert.ok(Math.abs(mapped.json.error - 0.35) < 0.01, `${mapped.json.error}`);
});
