// Inputs from evidence (issue 21, item 3): a scenario's benchmark.queue_wait_from, failure_from,
// utilization_from and throughput_from become plain figures in the resolved (hashed) scenario,
// with what they came from. Expected figures are computed here: the percentiles by PostgreSQL's
// own percentile_cont run by this test over the rows it sent, the rates and the throughput
// spread by hand.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { psql } from './lib/harness.mjs';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as, offer, workload;
before(async () => {
  ({ srv, as } = await evidenceServer());
  offer = await makeOffer(as, { gpu_model: 'A100-80GB', price_per_hour: 32, gpus_per_instance: 8 });
  workload = await makeWorkload(as, 'ana', { team: 'vision', name: 'vit-l', kind: 'training', class: 'production', target_units: 1e9, unit: 'images', memory_required_gb: 30, runs_match: { wckey: 'vit' } });
});
after(async () => { await srv?.stop(); });

const iso = (ms) => new Date(ms).toISOString();
const T0 = Date.parse('2025-05-01T00:00:00Z');
// 60 runs of vision on fox: waits 7·i² mod 3600 s, 4 GPUs, 2 h each; states by i.
function runs(team, cluster, n, { wckey = 'vit', prefix = team } = {}) {
  const out = [];
  const states = ['COMPLETED', 'COMPLETED', 'FAILED', 'COMPLETED', 'NODE_FAIL', 'COMPLETED', 'OUT_OF_MEMORY', 'CANCELLED', 'TIMEOUT', 'PREEMPTED'];
  for (let i = 0; i < n; i++) {
    const sub = T0 + i * 600_000;
    const wait = (7 * i * i) % 3600;
    out.push({ external_id: `${prefix}-${i}`, team, workload_class: 'production', wckey, submitted_at: iso(sub), started_at: iso(sub + wait * 1000), ended_at: iso(sub + wait * 1000 + 7_200_000), gpus: 4, state: states[i % states.length] });
  }
  return out;
}

async function resolve(who, benchmark, extra = {}) {
  const document = {
    workload: { kind: 'training', target_units: 1e9, unit: 'images', memory_required_gb: 30 },
    assumptions: { trials: 200, seed: 3 },
    options: [{ name: 'a100', offer: offer.id, benchmark: { instances: 1, throughput_units_per_s: 5000, ...benchmark } }],
    ...extra,
  };
  const sc = await as(who, 'POST', '/scenarios', { body: { name: `s${Math.random()}`, team: 'vision', workload_ids: [workload.id], document } });
  if (sc.status !== 201) return sc;
  const cmp = await as(who, 'POST', `/scenarios/${sc.json.id}/comparisons`);
  if (cmp.status !== 201 && cmp.status !== 200) return cmp;
  return as(who, 'GET', `/comparisons/${cmp.json.sha256}`);
}

test('queue_wait_from: the 101 percentiles are PostgreSQL\'s percentile_cont over the selected runs; another team\'s runs are not read', async () => {
  assert.equal((await as('ana', 'POST', '/runs?cluster=fox', { body: runs('vision', 'fox', 60) })).status, 201);
  assert.equal((await as('bob', 'POST', '/runs?cluster=fox', { body: runs('nlp', 'fox', 40) })).status, 201);
  const r = await resolve('ana', { queue_wait_from: { cluster: 'fox', from: '2025-05-01T00:00:00Z', to: '2025-06-01T00:00:00Z' } });
  assert.equal(r.status, 200, r.text);
  const b = r.json.scenario.options[0].benchmark;
  // the independent figure: percentile_cont over the waits this test sent (team vision only)
  const waits = runs('vision', 'fox', 60).map((x) => (Date.parse(x.started_at) - Date.parse(x.submitted_at)) / 1000);
  const want = JSON.parse(psql(`SELECT to_json(percentile_cont(ARRAY(SELECT g / 100.0 FROM generate_series(0, 100) g)) WITHIN GROUP (ORDER BY w)) FROM unnest(ARRAY[${waits.join(',')}]::float8[]) w`));
  assert.equal(b.queue_wait_quantiles_s.length, 101);
  for (let i = 0; i <= 100; i++) assert.ok(Math.abs(b.queue_wait_quantiles_s[i] - want[i]) < 1e-9, `p${i}: ${b.queue_wait_quantiles_s[i]} vs ${want[i]}`);
  assert.equal(b.queue_wait_from, undefined, 'resolved into numbers');
  const src = b.source.evidence_from.queue_wait_quantiles_s;
  assert.equal(src.runs, 60);
  assert.deepEqual(src.teams, ['vision']);
  assert.match(src.query, /percentile_cont/);
  assert.deepEqual(src.from, { cluster: 'fox', from: '2025-05-01T00:00:00Z', to: '2025-06-01T00:00:00Z' });

  // an owner reads every team: 100 runs
  const o = await resolve('owner1', { queue_wait_from: { cluster: 'fox' } });
  assert.equal(o.json.scenario.options[0].benchmark.source.evidence_from.queue_wait_quantiles_s.runs, 100);
  // nothing selected (another team's runs, an empty window): 422 naming it, nothing stored
  for (const sel of [{ team: 'nlp' }, { cluster: 'fox', from: '2030-01-01T00:00:00Z' }]) {
    const e = await resolve('ana', { queue_wait_from: sel });
    assert.equal(e.status, 422, e.text);
    assert.equal(e.json.errors[0].pointer, '/document/options/0/benchmark/queue_wait_from');
    assert.match(e.json.errors[0].message, /selects no started GPU run/);
  }
  const both = await resolve('ana', { queue_wait_s: 60, queue_wait_from: { cluster: 'fox' } });
  assert.equal(both.status, 422, both.text);
  const bad = await resolve('ana', { queue_wait_from: { cluster: 'fox', colour: 1, from: 'yesterday' } });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(), ['/document/options/0/benchmark/queue_wait_from/colour', '/document/options/0/benchmark/queue_wait_from/from']);
});

test('failure_from: failed among attempts, crashes per instance-hour, over a workload\'s runs', async () => {
  const r = await resolve('ana', { failure_from: { workload: workload.id } });
  assert.equal(r.status, 200, r.text);
  const b = r.json.scenario.options[0].benchmark;
  const mine = runs('vision', 'fox', 60);
  const attempts = mine.filter((x) => ['COMPLETED', 'FAILED', 'OUT_OF_MEMORY', 'TIMEOUT'].includes(x.state)).length;
  const failed = mine.filter((x) => ['FAILED', 'OUT_OF_MEMORY', 'TIMEOUT'].includes(x.state)).length;
  const crashes = mine.filter((x) => ['NODE_FAIL', 'PREEMPTED'].includes(x.state)).length;
  const instanceHours = mine.reduce((s, x) => s + x.gpus * 2, 0) / 8;
  assert.ok(Math.abs(b.failure_probability - failed / attempts) < 1e-12);
  assert.ok(Math.abs(b.crash_rate_per_instance_hour - crashes / instanceHours) < 1e-12);
  const src = b.source.evidence_from.failure_probability;
  assert.deepEqual([src.runs, src.attempts, src.failed, src.crashes, src.excluded], [60, attempts, failed, crashes, 6]);
  const none = await resolve('ana', { failure_from: { cluster: 'fox' } });
  assert.equal(none.status, 422);
  assert.match(none.json.errors[0].message, /names a workload or a workload_class/);
  const foreign = await resolve('ana', { failure_from: { workload_class: 'production', team: 'nlp' } });
  assert.equal(foreign.status, 422);
});

test('throughput_from: mean and sample standard deviation of repeated benchmarks; utilization_from: telemetry, memory used only when asked and never beyond the GPU', async () => {
  const tputs = [5100, 4900, 5350];
  for (const t of tputs) {
    const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: workload.id, offer_id: offer.id, measured_at: '2025-05-02T00:00:00Z', outcome: 'succeeded', instances: 1, throughput_units_per_s: t } });
    assert.equal(b.status, 201, b.text);
  }
  const r = await resolve('ana', { throughput_units_per_s: undefined, throughput_from: { workload: workload.id, offer: offer.id } });
  assert.equal(r.status, 200, r.text);
  const b = r.json.scenario.options[0].benchmark;
  const mean = tputs.reduce((s, x) => s + x, 0) / 3;
  const sd = Math.sqrt(tputs.reduce((s, x) => s + (x - mean) ** 2, 0) / 2);
  assert.ok(Math.abs(b.throughput_units_per_s - mean) < 1e-9);
  assert.ok(Math.abs(b.throughput_stddev - sd) < 1e-9);
  assert.equal(b.source.evidence_from.throughput_units_per_s.n, 3);

  const bench = await as('ana', 'POST', '/benchmarks', { body: { workload_id: workload.id, offer_id: offer.id, measured_at: '2025-05-03T00:00:00Z', outcome: 'succeeded', instances: 1, throughput_units_per_s: 5000 } });
  const tel = await as('ana', 'POST', `/benchmarks/${bench.json.id}/telemetry?force=true`, text(sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv')));
  assert.equal(tel.status, 201, tel.text);
  const u = await resolve('ana', { utilization_from: { benchmark: bench.json.id } });
  assert.equal(u.status, 200, u.text);
  const ub = u.json.scenario.options[0].benchmark;
  const [duty, stall] = psql(`SELECT avg(x.duty_cycle), (count(*) FILTER (WHERE x.duty_cycle < (u.summary->>'idle_below')::float8))::float8 / count(x.duty_cycle) FROM telemetry_sample x JOIN upload u ON u.id = x.upload_id WHERE x.benchmark_id = '${bench.json.id}'`, { database: srv.db }).split('|').map(Number);
  assert.ok(Math.abs(ub.gpu_duty_cycle - duty) < 1e-12);
  assert.ok(Math.abs(ub.input_stall_fraction - stall) < 1e-12);
  assert.equal(ub.memory_peak_gb, undefined, 'memory is not taken unless asked');
  assert.match(ub.source.evidence_from.gpu_duty_cycle.memory_taken, /^none/);
  const used = await resolve('ana', { utilization_from: { benchmark: bench.json.id, memory: 'used' } });
  assert.equal(used.status, 200, used.text);
  assert.ok(used.json.scenario.options[0].benchmark.memory_peak_gb > 0);
  // a 16 GB GPU option: the allocator's peak would make it infeasible silently: refused instead
  const small = await makeOffer(as, { gpu_model: 'A100-80GB', gpu_memory_gb: 16 });
  const doc = { options: [{ name: 'small', offer: small.id, benchmark: { instances: 1, throughput_units_per_s: 5000, utilization_from: { benchmark: bench.json.id, memory: 'used' } } }] };
  const refused = await resolve('ana', {}, doc);
  assert.equal(refused.status, 422, refused.text);
  assert.match(refused.json.errors[0].message, /not what the workload requires/);
  // another team's benchmark: not found
  const other = await resolve('bob', { utilization_from: { benchmark: bench.json.id } });
  assert.ok(other.status === 422 || other.status === 403, other.text);
});

test('failure_from counts GPU runs only: a failed CPU-only step under the same WCKey is not an attempt', async () => {
  // the rates are per attempt of the GPU job (as the checklist, the drift check and the typed-vs-
  // evidence list count them): 20 GPU runs (5 failed) and 20 CPU-only preprocessing runs that
  // failed, all with the workload's WCKey
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'vit-cpu', kind: 'training', class: 'production', target_units: 1e9, unit: 'images', memory_required_gb: 30, runs_match: { wckey: 'vitcpu' } });
  const T = Date.parse('2025-07-01T00:00:00Z');
  const rows = [];
  for (let i = 0; i < 40; i++) {
    const cpu = i >= 20;
    rows.push({ external_id: `cpu-mix-${i}`, team: 'vision', workload_class: 'production', wckey: 'vitcpu', submitted_at: iso(T + i * 60_000), started_at: iso(T + i * 60_000 + 1000), ended_at: iso(T + i * 60_000 + 3_601_000), gpus: cpu ? 0 : 8, state: cpu || i < 5 ? 'FAILED' : 'COMPLETED' });
  }
  assert.equal((await as('ana', 'POST', '/runs?cluster=cpumix', { body: rows })).status, 201);
  const r = await resolve('ana', { failure_from: { workload: w.id } });
  assert.equal(r.status, 200, r.text);
  const b = r.json.scenario.options[0].benchmark;
  assert.ok(Math.abs(b.failure_probability - 5 / 20) < 1e-12, `${b.failure_probability}`);
  const src = b.source.evidence_from.failure_probability;
  assert.deepEqual([src.runs, src.attempts, src.failed], [20, 20, 5]);
});
