// What-if replays through the API (docs/whatif.md): the Alibaba GPU trace (tests/data) uploaded as
// runs, replayed by POST /whatif under a sweep, FIFO and the cluster's recorded capacity, and
// every figure compared with a replay written here, in JavaScript, from the contract alone (not
// from the server's code: no heaps, no shortcuts — a plain round-by-round simulation). Then the
// stored replay's resolved document, the offline CLI on it, citing it as evidence, and the
// refusals: more than 2,000,000 jobs, 65 arrangements, a negative R, an overflow without an
// offer, `from` after `to`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir, projectDir, psql } from './lib/harness.mjs';
import { evidenceServer, makeOffer, text } from './evidence.lib.mjs';

const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');
const TRACE_START = Date.parse('2023-01-01T00:00:00Z') / 1000;

// ---- the independent replay ------------------------------------------------------------------

// The trace's pods as jobs: times in whole seconds, GPUs in thousandths.
function openbJobs(file) {
  const lines = file.trimEnd().split('\n');
  const cols = lines[0].split(',');
  const at = (n) => cols.indexOf(n);
  const phases = { Succeeded: ['COMPLETED', true], Failed: ['FAILED', true], Running: ['CANCELLED', true], Pending: ['CANCELLED', false] };
  return lines.slice(1).map((l) => {
    const f = l.split(',');
    const numGpu = Number(f[at('num_gpu')]), milli = Number(f[at('gpu_milli')]);
    const gpus = numGpu === 0 ? 0 : (numGpu * (milli || 1000)) / 1000;
    const [state, started] = phases[f[at('pod_phase')]];
    return {
      id: `alibaba/${f[at('name')]}`, qos: f[at('qos')], state,
      sub: TRACE_START + Number(f[at('creation_time')]),
      start: started ? TRACE_START + Number(f[at('scheduled_time')]) : null,
      end: TRACE_START + Number(f[at('deletion_time')]),
      g: Math.floor(gpus * 1000 + 0.5),
    };
  });
}

// Linear interpolation between ranks (percentile_cont) at k/100 of sorted xs.
function quantile(xs, k) {
  if (!xs.length) return null;
  const num = k * (xs.length - 1), lo = Math.floor(num / 100), rem = num % 100;
  return rem === 0 ? xs[lo] : xs[lo] + (rem / 100) * (xs[lo + 1] - xs[lo]);
}
function summary(ws) {
  const s = [...ws].sort((a, b) => a - b);
  return { sorted: s, mean: s.length ? s.reduce((a, b) => a + b, 0) / s.length : null, p50: quantile(s, 50), p90: quantile(s, 90), p99: quantile(s, 99) };
}

// One arrangement {R (milli), policy, depth, overflow: {W, max (milli|null), delay, price}|null}.
function replayOne(all, a) {
  const jobs = all.filter((j) => j.start !== null && j.end !== null && j.g > 0)
    .sort((x, y) => x.sub - y.sub || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  jobs.forEach((j, i) => { j.rank = i; j.rt = j.end - j.start; });
  const out = new Map();
  let queue = [], big = [], running = [], over = [], free = a.R, ovUsed = 0, next = 0, now = -Infinity;
  const startPool = (j, t) => {
    queue.splice(queue.indexOf(j), 1);
    free -= j.g;
    const end = t + j.rt;
    let k = running.length; // running stays sorted by end
    while (k > 0 && running[k - 1].end > end) k--;
    running.splice(k, 0, { end, g: j.g });
    out.set(j, { where: 'pool', start: t });
  };
  const round = (t, arrivals) => {
    while (running.length && running[0].end <= t) free += running.shift().g;
    over = over.filter((o) => { if (o.end <= t) { ovUsed -= o.g; return false; } return true; });
    if (arrivals) {
      while (next < jobs.length && jobs[next].sub === t) {
        const j = jobs[next++];
        if (j.g > a.R) {
          if (!a.overflow || (a.overflow.max !== null && j.g > a.overflow.max)) out.set(j, { where: 'unschedulable' });
          else big.push(j);
        } else queue.push(j);
      }
    }
    while (queue.length && queue[0].g <= free) startPool(queue[0], t);
    if (a.policy === 'easy_backfill' && queue.length) {
      const need = queue[0].g;
      let avail = free, S = null;
      for (const r of running) { avail += r.g; if (avail >= need) { S = r.end; break; } }
      let extra = free + running.filter((r) => r.end <= S).reduce((s, r) => s + r.g, 0) - need;
      for (const c of queue.slice(1, 1 + a.depth)) {
        if (c.g > free) continue;
        if (t + c.rt <= S) startPool(c, t);
        else if (c.g <= extra) { extra -= c.g; startPool(c, t); }
      }
    }
    if (a.overflow) {
      const cands = [...queue.filter((j) => t - j.sub >= a.overflow.W), ...big].sort((x, y) => x.rank - y.rank);
      for (const j of cands) {
        if (a.overflow.max !== null && ovUsed + j.g > a.overflow.max) continue;
        if (big.includes(j)) big.splice(big.indexOf(j), 1); else queue.splice(queue.indexOf(j), 1);
        ovUsed += j.g;
        const start = t + a.overflow.delay;
        over.push({ end: start + j.rt, g: j.g });
        out.set(j, { where: 'overflow', start });
      }
    }
  };
  for (;;) {
    const times = [];
    if (next < jobs.length) times.push(jobs[next].sub);
    if (running.length) times.push(running[0].end);
    for (const o of over) times.push(o.end);
    if (a.overflow) for (const j of queue) if (j.sub + a.overflow.W > now) times.push(j.sub + a.overflow.W);
    if (!times.length) break;
    now = Math.min(...times);
    round(now, true);
    while (running.some((r) => r.end === now) || over.some((o) => o.end === now)) round(now, false);
  }
  return { jobs, out };
}

function figures(all, a) {
  const { jobs, out } = replayOne(all, a);
  const t0 = Math.min(...all.map((j) => j.sub));
  const H = Math.max(...all.filter((j) => j.end !== null).map((j) => j.end)) - t0;
  const waits = [], observed = [];
  let poolMs = 0, overMs = 0, completed = 0, unsched = 0, overflowed = 0, replayEnd = 0;
  for (const j of jobs) {
    const o = out.get(j);
    if (o.where === 'unschedulable') { unsched++; continue; }
    waits.push(o.start - j.sub);
    observed.push(j.start - j.sub);
    replayEnd = Math.max(replayEnd, o.start + j.rt - t0);
    if (o.where === 'pool') poolMs += j.g * j.rt;
    else { overflowed++; overMs += j.g * (j.rt + a.overflow.delay); }
    if (j.state === 'COMPLETED') completed++;
  }
  const D = Math.max(H, replayEnd);
  const costPool = (a.R / 1000) * D * a.price / 3600;
  const costOver = a.overflow ? (overMs / 1000) * a.overflow.price / 3600 : 0;
  const total = costPool + costOver;
  return {
    replayed: waits.length, unschedulable: unsched, overflowed, not_replayed: all.length - jobs.length,
    wait: summary(waits), observed: summary(observed), horizon_s: H, replay_end_s: replayEnd,
    pool_utilization: a.R > 0 && D > 0 ? poolMs / (a.R * D) : null,
    cost: { pool: costPool, overflow: costOver, total },
    cost_per_completed_job: completed ? total / completed : null,
  };
}

function close(actual, expected, what) {
  if (expected === null) { assert.equal(actual, null, what); return; }
  const tol = 1e-9 * Math.max(1, Math.abs(expected));
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: server ${actual}, independent ${expected}`);
}

// ---- the CLI against the independent replay on random small histories ----------------------
// Ties, zero runtimes, jobs larger than the pool, overflow with and without max_gpus, tiny
// backfill windows: 300 histories with a fixed seed, each replayed by `capledger whatif` and here.
test('capledger whatif equals the independent replay on 300 random small histories', () => {
  let seed = 22;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const base = 1735689600;
  const iso = (s) => new Date((base + s) * 1000).toISOString().replace('.000Z', 'Z');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'whatif-random-'));
  for (let iter = 0; iter < 300; iter++) {
    const jobs = Array.from({ length: 1 + Math.floor(rnd() * 40) }, (_, i) => {
      const sub = Math.floor(rnd() * 50), rt = rnd() < 0.15 ? 0 : Math.floor(rnd() * 40), wait = Math.floor(rnd() * 10);
      const gpus = [0, 0.5, 1, 1, 2, 3, 4, 6][Math.floor(rnd() * 8)];
      return { id: `j${Math.floor(rnd() * 1000)}_${i}`, sub: base + sub, start: rnd() < 0.1 ? null : base + sub + wait, end: base + sub + wait + rt, gpus, g: Math.floor(gpus * 1000 + 0.5), state: rnd() < 0.7 ? 'COMPLETED' : 'FAILED' };
    });
    const R = Math.floor(rnd() * 6), policy = rnd() < 0.5 ? 'fifo' : 'easy_backfill', depth = Math.floor(rnd() * 4);
    const overflow = rnd() < 0.6 ? { W: Math.floor(rnd() * 15), max: rnd() < 0.5 ? null : Math.floor(rnd() * 6) * 1000, delay: Math.floor(rnd() * 3), price: 3 } : null;
    const doc = {
      jobs: jobs.map((j) => ({ id: j.id, submitted_at: iso(j.sub - base), started_at: j.start === null ? null : iso(j.start - base), ended_at: iso(j.end - base), gpus: j.gpus, state: j.state })),
      arrangements: [{ name: 'a', pool_gpus: R, pool_offer: { price_per_hour: 2, gpus_per_instance: 1 }, policy, backfill_depth: depth,
        ...(overflow ? { overflow: { offer: { price_per_hour: 3, gpus_per_instance: 1 }, after_wait_s: overflow.W, ...(overflow.max !== null ? { max_gpus: overflow.max / 1000 } : {}), provisioning_delay_s: overflow.delay } } : {}) }],
    };
    const file = path.join(dir, 'doc.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    const r = spawnSync(bin, ['whatif', '--json', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout).arrangements[0];
    const f = figures(jobs, { R: R * 1000, policy, depth, overflow, price: 2 });
    const what = `history ${iter}: ${JSON.stringify(doc)}`;
    for (const k of ['replayed', 'unschedulable', 'overflowed']) assert.equal(got[k], f[k], `${k}, ${what}`);
    if (f.replayed) got.wait_quantiles_s.forEach((q, k) => close(q, quantile(f.wait.sorted, k), `quantile ${k}, ${what}`));
    close(got.cost.total, f.cost.total, `cost, ${what}`);
  }
  fs.rmSync(dir, { recursive: true });
});

// ---- the API -----------------------------------------------------------------------------------

let srv, as, pool, burst, sweep;
const file = fs.readFileSync(path.join(dataDir, 'traces/alibaba-gpu-v2023/openb_pod_list_default.csv'), 'utf8');
const trace = openbJobs(file);

before(async () => {
  ({ srv, as } = await evidenceServer());
  pool = await makeOffer(as, { purchase_option: 'reserved', price_per_hour: 2.1 * 8 }); // 2.1 per GPU-hour
  burst = await makeOffer(as, { instance_type: 'p5.spot', purchase_option: 'on_demand', price_per_hour: 98.32 }); // 12.29
  const up = await as('owner1', 'POST', '/runs?cluster=alibaba&team=vision&format=openb&trace_start=2023-01-01T00:00:00Z', text(file));
  assert.equal(up.status, 201, up.text);
  const cl = await as('owner1', 'PUT', '/clusters/alibaba', {
    body: { partitions: [{ partition: 'LS', capacity_gpus: 2400, offer_id: pool.id }, { partition: 'BE', capacity_gpus: 600.5 }] },
  });
  assert.equal(cl.status, 200, cl.text);
  assert.equal(cl.json.partitions.find((p) => p.partition === 'BE').capacity_gpus, 600.5);
  sweep = {
    jobs: { team: 'vision', cluster: 'alibaba' },
    arrangements: [
      { name: 'own', pool_gpus: { from: 1500, to: 4500, step: 1500 }, pool_offer: pool.id,
        overflow: { offer: burst.id, after_wait_s: 1800, max_gpus: 400, provisioning_delay_s: 90 } },
      { name: 'fifo', pool_gpus: 3000, pool_offer: pool.id, policy: 'fifo' },
      { name: 'cluster', pool_gpus: 'cluster', pool_offer: pool.id, backfill_depth: 50 },
    ],
    wait_p90_max_s: 3600,
    baseline: 'cluster',
  };
});
after(async () => { await srv?.stop(); });

const ARR = [
  { name: 'own@1500', R: 1500000, policy: 'easy_backfill', depth: 500, overflow: { W: 1800, max: 400000, delay: 90, price: 98.32 / 8 } },
  { name: 'own@3000', R: 3000000, policy: 'easy_backfill', depth: 500, overflow: { W: 1800, max: 400000, delay: 90, price: 98.32 / 8 } },
  { name: 'own@4500', R: 4500000, policy: 'easy_backfill', depth: 500, overflow: { W: 1800, max: 400000, delay: 90, price: 98.32 / 8 } },
  { name: 'fifo', R: 3000000, policy: 'fifo', depth: 500, overflow: null },
  { name: 'cluster', R: 3000500, policy: 'easy_backfill', depth: 50, overflow: null },
].map((a) => ({ ...a, price: 2.1 }));

let stored;
test('POST /whatif: the Alibaba trace under a sweep, FIFO and the recorded capacity; every figure equals the independent replay', async () => {
  const r = await as('ana', 'POST', '/whatif', { body: sweep, timeoutMs: 120_000 });
  assert.equal(r.status, 201, r.text);
  stored = r.json;
  const res = r.json.result;
  assert.equal(res.jobs, 8152);
  assert.equal(res.not_replayed, trace.filter((j) => j.start === null || j.g === 0).length);
  assert.deepEqual(res.arrangements.map((a) => a.name), ARR.map((a) => a.name));
  const ours = [];
  for (const [i, a] of ARR.entries()) {
    const f = figures(trace, a);
    ours.push(f);
    const got = res.arrangements[i];
    for (const k of ['replayed', 'unschedulable', 'overflowed', 'not_replayed', 'horizon_s', 'replay_end_s']) assert.equal(got[k], f[k], `${a.name} ${k}`);
    for (const k of ['mean', 'p50', 'p90', 'p99']) close(got.wait_s[k], f.wait[k], `${a.name} wait ${k}`);
    got.wait_quantiles_s.forEach((q, k) => close(q, quantile(f.wait.sorted, k), `${a.name} quantile ${k}`));
    close(got.pool_utilization, f.pool_utilization, `${a.name} utilization`);
    for (const k of ['pool', 'overflow', 'total']) close(got.cost[k], f.cost[k], `${a.name} cost ${k}`);
    close(got.cost_per_completed_job, f.cost_per_completed_job, `${a.name} per completed job`);
  }
  // frontier and recommendation, from our figures
  const ok = ARR.map((a, i) => ({ name: a.name, f: ours[i] })).filter((x) => x.f.unschedulable === 0 && x.f.cost_per_completed_job !== null);
  const frontier = ok.filter((x) => !ok.some((y) => y !== x && y.f.wait.p90 <= x.f.wait.p90 && y.f.cost_per_completed_job <= x.f.cost_per_completed_job
    && (y.f.wait.p90 < x.f.wait.p90 || y.f.cost_per_completed_job < x.f.cost_per_completed_job))).map((x) => x.name);
  assert.deepEqual(res.frontier, frontier);
  let best = null;
  for (const x of ok) if (x.f.wait.p90 <= 3600 && (!best || x.f.cost.total < best.f.cost.total)) best = x;
  assert.equal(res.recommended, best ? best.name : null);
  // the backtest: observed waits of the jobs the recorded capacity replayed, against the replay
  const b = ours[4];
  assert.equal(res.backtest.arrangement, 'cluster');
  for (const k of ['mean', 'p50', 'p90', 'p99']) {
    close(res.backtest.observed[k], b.observed[k], `observed ${k}`);
    close(res.backtest.replayed[k], b.wait[k], `replayed ${k}`);
  }
  // the same request again: the same replay, answered as stored
  const again = await as('ana', 'POST', '/whatif', { body: sweep, timeoutMs: 120_000 });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.sha256, stored.sha256);
});

test('a selection narrows by partition and window; the stored replay reads back, and its input replays offline to the same result', async () => {
  const body = {
    jobs: { team: 'vision', cluster: 'alibaba', partition: 'BE', from: '2023-05-01T00:00:00Z', to: '2023-05-20T00:00:00Z' },
    arrangements: [{ name: 'be', pool_gpus: { from: 100, to: 400, step: 100 }, pool_offer: pool.id, policy: 'fifo' }],
  };
  const r = await as('ana', 'POST', '/whatif', { body, timeoutMs: 60_000 });
  assert.equal(r.status, 201, r.text);
  const from = Date.parse('2023-05-01T00:00:00Z') / 1000, to = Date.parse('2023-05-20T00:00:00Z') / 1000;
  const subset = trace.filter((j) => j.qos === 'BE' && j.sub >= from && j.sub < to);
  assert.equal(r.json.result.jobs, subset.length);
  for (const [i, R] of [100, 200, 300, 400].entries()) {
    const f = figures(subset, { R: R * 1000, policy: 'fifo', depth: 500, overflow: null, price: 2.1 });
    close(r.json.result.arrangements[i].wait_s.p90, f.wait.p90, `be@${R} p90`);
    close(r.json.result.arrangements[i].cost.total, f.cost.total, `be@${R} cost`);
  }

  const got = await as('aud', 'GET', `/whatif/${stored.sha256}`);
  assert.equal(got.status, 200, got.text);
  assert.deepEqual(got.json.result, stored.result);
  assert.equal((await as('bob', 'GET', `/whatif/${stored.sha256}`)).status, 404, 'another team does not see it');
  assert.equal((await as('ana', 'GET', `/whatif/${'0'.repeat(64)}`)).status, 404);
  assert.equal((await as('ana', 'GET', '/whatif/NOTAHASH')).status, 404);
  const input = await as('ana', 'GET', `/whatif/${stored.sha256}/input`);
  assert.equal(input.status, 200);
  assert.equal(input.json.jobs.length, 8152);
  assert.equal(input.json.arrangements[2].pool_gpus, 3000.5, 'the recorded capacity, resolved');
  assert.equal(input.json.arrangements[0].pool_offer.price_per_hour, 2.1 * 8, 'the stored offer, resolved');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'whatif-'));
  fs.writeFileSync(path.join(dir, 'input.json'), input.text);
  const cli = spawnSync(bin, ['whatif', '--json', path.join(dir, 'input.json')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(cli.status, 0, cli.stderr);
  const offline = JSON.parse(cli.stdout);
  assert.equal(offline.input_sha256, stored.input_sha256);
  assert.deepEqual(offline, stored.result);
  const table = spawnSync(bin, ['whatif', path.join(dir, 'input.json')], { encoding: 'utf8' });
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /own@3000/);
  assert.match(table.stdout, /demand that never arrived/);
  fs.rmSync(dir, { recursive: true });
});

test('a stored replay is evidence a review artifact can cite; another team cannot cite it', async () => {
  const w = await as('ana', 'POST', '/workloads', { body: { team: 'vision', name: 'trace-jobs', kind: 'training', class: 'production' } });
  assert.equal(w.status, 201, w.text);
  const rv = await as('owner1', 'POST', '/reviews', { body: { title: 'How many GPUs', question: 'Own or burst?', owner: 'owner1', started_on: '2025-01-01', workload_ids: [w.json.id] } });
  assert.equal(rv.status, 201, rv.text);
  const art = await as('owner1', 'POST', `/reviews/${rv.json.id}/artifacts`, { body: { title: 'replay of the trace', phase: 'evidence_plan', contributor: 'ana', evidence: [stored.sha256] } });
  assert.equal(art.status, 201, art.text);
  const unknown = await as('owner1', 'POST', `/reviews/${rv.json.id}/artifacts`, { body: { title: 'x', phase: 'evidence_plan', contributor: 'ana', evidence: ['f'.repeat(64)] } });
  assert.equal(unknown.status, 422, unknown.text);
});

test('a comparison rests on a replay: queue_wait_from_whatif and reserved_utilization_from_whatif resolve into the plain numbers', async () => {
  const scenario = JSON.parse(fs.readFileSync(path.join(dataDir, 'spec/example-training-v2.json'), 'utf8'));
  const reserved = scenario.options.find((o) => o.offer.purchase_option === 'reserved');
  delete reserved.benchmark.queue_wait_s;
  reserved.benchmark.queue_wait_from_whatif = { sha256: stored.sha256, arrangement: 'own@3000' };
  reserved.offer.reserved_utilization_from_whatif = { sha256: stored.sha256, arrangement: 'own@3000' };
  delete reserved.offer.reserved_utilization;
  const own = stored.result.arrangements.find((a) => a.name === 'own@3000');
  const r = await as('ana', 'POST', '/compare', { body: scenario, timeoutMs: 60_000 });
  assert.equal(r.status, 200, r.text);
  // the same scenario with the numbers typed in gives the same comparison
  const plain = JSON.parse(JSON.stringify(scenario));
  const p2 = plain.options.find((o) => o.offer.purchase_option === 'reserved');
  delete p2.benchmark.queue_wait_from_whatif;
  delete p2.offer.reserved_utilization_from_whatif;
  p2.benchmark.queue_wait_quantiles_s = own.wait_quantiles_s;
  p2.offer.reserved_utilization = own.pool_utilization;
  const r2 = await as('ana', 'POST', '/compare', { body: plain, timeoutMs: 60_000 });
  assert.equal(r2.status, 200, r2.text);
  assert.equal(r.json.input_sha256, r2.json.input_sha256, 'resolved before hashing');
  assert.deepEqual(r.json.options, r2.json.options);
  // a reference to nothing, to an arrangement that is not there, or another team's replay
  reserved.benchmark.queue_wait_from_whatif = { sha256: 'e'.repeat(64), arrangement: 'own@3000' };
  reserved.offer.reserved_utilization_from_whatif = { sha256: stored.sha256, arrangement: 'own@9' };
  const bad = await as('ana', 'POST', '/compare', { body: scenario });
  assert.equal(bad.status, 422, bad.text);
  const i = scenario.options.indexOf(reserved);
  assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(),
    [`/options/${i}/benchmark/queue_wait_from_whatif`, `/options/${i}/offer/reserved_utilization_from_whatif`]);
  reserved.benchmark.queue_wait_from_whatif = { sha256: stored.sha256, arrangement: 'own@3000' };
  reserved.offer.reserved_utilization_from_whatif = { sha256: stored.sha256, arrangement: 'own@3000' };
  const foreign = await as('bob', 'POST', '/compare', { body: scenario });
  assert.equal(foreign.status, 422, foreign.text);
});

test('refusals name the field: from after to, negative R, an overflow without an offer, 65 arrangements, another team, no runs', async () => {
  const base = { jobs: { team: 'vision', cluster: 'alibaba' }, arrangements: [{ name: 'p', pool_gpus: 10, pool_offer: pool.id }] };
  const cases = [
    [{ ...base, jobs: { ...base.jobs, from: '2023-02-01T00:00:00Z', to: '2023-01-01T00:00:00Z' } }, '/jobs/from'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: -1, pool_offer: pool.id }] }, '/arrangements/0/pool_gpus'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: 1, pool_offer: pool.id, overflow: { after_wait_s: 60 } }] }, '/arrangements/0/overflow/offer'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: { from: 1, to: 65, step: 1 }, pool_offer: pool.id }] }, '/arrangements'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: { from: 1, to: 65, step: 0 }, pool_offer: pool.id }] }, '/arrangements/0/pool_gpus/step'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: 1, pool_offer: '00000000-0000-4000-8000-000000000000' }] }, '/arrangements/0/pool_offer'],
    [{ ...base, arrangements: [{ name: 'p', pool_gpus: 'cluster', pool_offer: pool.id }], jobs: { team: 'vision' } }, '/arrangements/0/pool_gpus'],
    [{ ...base, jobs: { team: 'vision', cluster: 'nowhere' } }, '/jobs'],
    [{ ...base, jobs: [] }, '/jobs'],
    [{ ...base, jobs: { cluster: 'alibaba' } }, '/jobs/team'],
  ];
  for (const [body, pointer] of cases) {
    const r = await as('ana', 'POST', '/whatif', { body });
    assert.equal(r.status, 422, `${pointer}: ${r.text}`);
    assert.ok(r.json.errors.some((e) => e.pointer === pointer), `${pointer}: ${r.text}`);
  }
  assert.equal((await as('bob', 'POST', '/whatif', { body: base })).status, 403);
  assert.equal((await as('aud', 'POST', '/whatif', { body: base })).status, 403);
});

test('more than 2,000,000 selected runs → 422 at /jobs, without replaying', async () => {
  psql(`INSERT INTO run (cluster, external_id, team, submitted_at, started_at, ended_at, gpus, state, upload_id)
        SELECT 'huge', 'j' || g, 'nlp', timestamptz '2024-01-01' + g * interval '1 second',
               timestamptz '2024-01-01' + g * interval '1 second', timestamptz '2024-01-01' + (g + 60) * interval '1 second',
               1, 'COMPLETED', '00000000-0000-4000-8000-000000000001'
        FROM generate_series(1, 2000001) g`, { database: srv.db, timeoutMs: 240_000 });
  const r = await as('bob', 'POST', '/whatif', { body: { jobs: { team: 'nlp', cluster: 'huge' }, arrangements: [{ name: 'p', pool_gpus: 10, pool_offer: pool.id }] }, timeoutMs: 120_000 });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.errors[0].pointer, '/jobs');
  assert.match(r.json.errors[0].message, /more than 2000000 jobs/);
});
