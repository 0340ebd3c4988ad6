// The chart series: a benchmark's duty cycle over time (downsampled, idle stretches marked)
// and GPU-hours per week by team and class — bounded, declared parameters only, team-scoped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv;
let as;
before(async () => ({ srv, as } = await evidenceServer()));
after(async () => srv?.stop());

test('telemetry series: points, idle stretches by the documented rule, bounds and scoping', async () => {
  const wl = await makeWorkload(as, 'ana', { team: 'vision', name: 'series-wl', kind: 'training', class: 'production' });
  const offer = await makeOffer(as, { name: 'a100-series', instance_type: 'gpu_1x_a100', gpu_model: 'A100-80GB', gpus_per_instance: 1, price_per_hour: 1.29 });
  const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: wl.id, offer_id: offer.id, measured_at: '2024-03-13T08:00:00Z', throughput_units_per_s: 10 } });
  assert.equal(b.status, 201, b.text);
  const up = await as('ana', 'POST', `/benchmarks/${b.json.id}/telemetry?format=nvidia-smi`, text(sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv')));
  assert.equal(up.status, 201, up.text);

  const s = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry/series`);
  assert.equal(s.status, 200, s.text);
  assert.equal(s.json.samples, 7);
  assert.equal(s.json.points.length, 7, 'fewer samples than points: one point per sample');
  assert.deepEqual(s.json.points.map((p) => Math.round(100 * p.duty_cycle_mean)), [0, 0, 28, 32, 30, 26, 0]);
  assert.equal(s.json.idle_below, 0.05);
  assert.equal(s.json.idle_min_s, 10);
  // 07:04:28.836 and :33.838 idle, busy again at :38.839 → one stretch of 10.003 s; the last
  // sample (idle, input ends) lasts 0 s and is under the 10 s minimum.
  assert.equal(s.json.idle_stretches.length, 1, JSON.stringify(s.json.idle_stretches));
  const st = s.json.idle_stretches[0];
  assert.equal(st.samples, 2);
  assert.ok(Math.abs(st.duration_s - 10.003) < 1e-6, st.duration_s);
  assert.equal(s.json.idle_stretches_total, 1);

  const all = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry/series?idle_min_s=0&points=2`);
  assert.equal(all.status, 200, all.text);
  assert.equal(all.json.points.length, 2, 'downsampled to at most ?points=');
  assert.equal(all.json.points.reduce((n, p) => n + p.samples, 0), 7);
  assert.equal(all.json.idle_stretches.length, 2);
  const busier = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry/series?idle_below=0.3`);
  assert.equal(busier.json.idle_stretches.length, 1);
  assert.equal(busier.json.idle_stretches[0].samples, 3, 'the threshold is the caller\'s: 28% is idle below 30%');

  for (const [q, pointer] of [['points=1', '?points'], ['points=2001', '?points'], ['points=3.5', '?points'], ['idle_below=0', '?idle_below'], ['idle_min_s=-1', '?idle_min_s']]) {
    const r = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry/series?${q}`);
    assert.equal(r.status, 422, q);
    assert.equal(r.json.errors[0].pointer, pointer, q);
  }
  assert.equal((await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry/series?limit=5`)).status, 422, 'undeclared parameter');
  assert.equal((await as('bob', 'GET', `/benchmarks/${b.json.id}/telemetry/series`)).status, 404, 'another team\'s benchmark is not revealed');
  assert.equal((await as('aud', 'GET', `/benchmarks/${b.json.id}/telemetry/series`)).status, 200);
  const none = await as('owner1', 'GET', '/benchmarks/00000000-0000-4000-8000-000000000000/telemetry/series');
  assert.equal(none.status, 404);
});

test('usage series: GPU-hours per bucket by team and class, aligned, scoped, bounded', async () => {
  const runs = (team, klass, rows) => JSON.stringify(rows.map(([id, start, hours, gpus]) => ({
    external_id: `${team}-${id}`, cluster: 'c-series', team, workload_class: klass, submitted_at: start, started_at: start,
    ended_at: new Date(Date.parse(start) + hours * 3600e3).toISOString(), gpus, state: 'COMPLETED',
  })));
  const a = await as('ana', 'POST', '/runs', text(runs('vision', 'production', [[1, '2025-01-06T10:00:00Z', 2, 4], [2, '2025-01-08T10:00:00Z', 1, 2], [3, '2025-01-20T10:00:00Z', 3, 1]]), 'application/json'));
  assert.equal(a.status, 201, a.text);
  const b = await as('bob', 'POST', '/runs', text(runs('nlp', 'exploratory', [[1, '2025-01-13T10:00:00Z', 5, 2]]), 'application/json'));
  assert.equal(b.status, 201, b.text);

  const w = await as('owner1', 'GET', '/reports/usage/series?bucket=week&from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
  assert.equal(w.status, 200, w.text);
  assert.deepEqual(w.json.buckets, ['2025-01-06', '2025-01-13', '2025-01-20'], 'contiguous ISO weeks (Monday)');
  assert.equal(w.json.truncated, false);
  const vision = w.json.groups.find((g) => g.team === 'vision');
  assert.deepEqual(vision.gpu_hours, [10, 0, 3]);
  assert.deepEqual(vision.runs, [2, 0, 1]);
  assert.equal(vision.workload_class, 'production');
  assert.deepEqual(w.json.groups.find((g) => g.team === 'nlp').gpu_hours, [0, 10, 0]);

  const mine = await as('ana', 'GET', '/reports/usage/series?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
  assert.equal(mine.status, 200, mine.text);
  assert.equal(mine.json.bucket, 'week', 'week by default');
  assert.deepEqual(mine.json.groups.map((g) => g.team), ['vision'], 'a team member sees their team only');
  const m = await as('owner1', 'GET', '/reports/usage/series?bucket=month&team=nlp&from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
  assert.deepEqual(m.json.buckets, ['2025-01-01']);
  assert.deepEqual(m.json.groups.map((g) => [g.team, g.gpu_hours]), [['nlp', [10]]]);
  const d = await as('owner1', 'GET', '/reports/usage/series?bucket=day&from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
  assert.equal(d.json.buckets.length, 15, '6 Jan to 20 Jan');

  assert.equal((await as('owner1', 'GET', '/reports/usage/series?bucket=year')).json.errors[0].pointer, '?bucket');
  assert.equal((await as('owner1', 'GET', '/reports/usage/series?from=soon')).json.errors[0].pointer, '?from');
  assert.equal((await as('owner1', 'GET', '/reports/usage/series?group_by=team')).status, 422, 'undeclared parameter');
});
