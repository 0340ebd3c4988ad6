// scripts/demo against a test server: every main list of the API has something in it, the
// story is the design's (the hourly-price trap, a review in its second phase, a signed revise
// decision, a drift alert), the printed passwords sign in, and a second run adds nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, psql, startServer } from './lib/harness.mjs';
import { bin, mintToken, runDemo } from './lib/cli.mjs';

let srv;
let dir;
let admin;

// Rows in every table of the database (what "adds nothing" means).
function rowCounts() {
  const tables = psql("SELECT string_agg(table_name, ' ' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'", { database: srv.db }).split(' ');
  const counts = {};
  for (const t of tables) counts[t] = Number(psql(`SELECT count(*) FROM "${t}"`, { database: srv.db }));
  return counts;
}

before(async () => {
  srv = await startServer({ env: { CAPLEDGER_DRIFT_SWEEP_S: '0' } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-demo-'));
  admin = mintToken(srv, 'admin', 'demo-test');
});
after(async () => {
  await srv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('the demo fills every main list, tells the design\'s story, and a second run adds nothing', async () => {
  const out = runDemo(srv, dir);
  const passwords = Object.fromEntries([...out.matchAll(/^\s+(demo-\w+)\s+\(\w+\)\s+password (\S+)$/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(Object.keys(passwords).sort(), ['demo-auditor', 'demo-member', 'demo-owner']);
  for (const [username, password] of Object.entries(passwords)) {
    const s = await api(srv.url, 'POST', '/api/v1/session', { body: { username, password } });
    assert.ok(s.status === 200 || s.status === 201, `${username} signs in with the printed password: ${s.status} ${s.text}`);
  }
  const token = (name) => fs.readFileSync(path.join(dir, 'state', `${name}.token`), 'utf8');
  const state = fs.statSync(path.join(dir, 'state', 'demo-owner.password'));
  assert.equal(state.mode & 0o077, 0, 'the credentials are readable by their owner only');
  const owner = token('demo-owner');
  const auditor = token('demo-auditor');
  const get = async (p, t = owner) => {
    const r = await api(srv.url, 'GET', `/api/v1${p}`, { token: t });
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    return r.json;
  };

  // Every main list has something to show.
  const lists = {
    '/teams': admin, '/users': admin, '/tokens': admin, '/audit/events': auditor, '/offers': owner, '/workloads': owner,
    '/benchmarks': owner, '/runs': owner, '/uploads': owner, '/scenarios': owner, '/reviews': owner,
    '/decisions': owner, '/alerts': owner, '/log/entries?start=0&end=1': auditor, '/me/signing-keys': owner,
  };
  for (const [p, t] of Object.entries(lists)) {
    const body = await get(p, t);
    const items = body.items ?? body.entries ?? body.leaves ?? body;
    assert.ok(Array.isArray(items) ? items.length > 0 : Object.keys(items).length > 0, `${p} is empty: ${JSON.stringify(body).slice(0, 300)}`);
  }

  // The story: two offers, the cheaper per hour loses per completed evaluation.
  const scenario = (await get('/scenarios')).items.find((s) => /A100 streamed vs H100/.test(s.name));
  assert.ok(scenario);
  const cmpList = await get(`/scenarios/${scenario.id}/comparisons`);
  assert.equal(cmpList.items.length, 1);
  const cmp = await get(`/comparisons/${cmpList.items[0].sha256}`);
  assert.equal(cmp.result.winner, 'h100-nvme-cache');
  const trap = cmp.result.flags?.hourly_price_trap ?? cmp.result.hourly_price_trap;
  assert.equal(trap.cheapest_hourly, 'a100-streamed');
  assert.ok(trap.ratio > 1.5, JSON.stringify(trap));
  // Cost engine 2: 30 evaluations a month, the suite's S3 bucket named as the data source; the
  // A100 streams it out on every attempt, the H100 keeps a monthly copy on its NVMe (staged).
  assert.equal(cmp.result.engine_version, 'capledger-cost/2.0.0');
  assert.equal(cmp.result.planned_outcomes_per_month, 30);
  assert.equal(cmp.scenario.workload.data_source.provider, 'aws');
  const byName = Object.fromEntries(cmp.result.options.map((o) => [o.name, o]));
  assert.ok(Math.abs(byName['a100-streamed'].breakdown.transfer - 420 * 0.09 / (1 - 0.12)) < 1e-9, 'S3 egress per attempt');
  assert.ok(Math.abs(byName['h100-nvme-cache'].breakdown.transfer - 420 * 0.09 / 30) < 1e-9, 'one staging a month, shared');
  assert.ok(Math.abs(byName['h100-nvme-cache'].breakdown.storage - 420 * 0.2 / 30) < 1e-9, 'the NVMe copy, shared');
  // Telemetry (real captures) on both benchmarks; the Slurm jobs of a real cluster.
  const benches = (await get('/benchmarks')).items;
  assert.equal(benches.length, 5, 'two eval benchmarks, the one after the decision, two imported load tests');
  for (const b of benches.filter((x) => x.notes && !/after the decision/.test(x.notes))) {
    assert.equal((await get(`/benchmarks/${b.id}/telemetry`)).items.length, 1, b.notes);
  }
  assert.ok((await get('/runs?cluster=fox-eval-demo&limit=100')).items.length >= 20);

  // Inference: two real vLLM rate sweeps (4x L40S) imported through the API, a stored
  // comparison of the two routing set-ups, with what the demand and latency charts draw.
  const serve = (await get('/workloads')).items.find((w) => w.name === 'chat-assistant-3b');
  assert.equal(serve.kind, 'inference');
  const loadTests = benches.filter((b) => b.workload_id === serve.id);
  assert.equal(loadTests.length, 2);
  for (const b of loadTests) {
    assert.equal(b.source.format, 'vllm');
    assert.ok(b.load_points.length >= 2, JSON.stringify(b.load_points));
  }
  const serveScenario = (await get('/scenarios')).items.find((x) => /KV-cache-aware routing/.test(x.name));
  const serveCmps = await get(`/scenarios/${serveScenario.id}/comparisons`);
  assert.equal(serveCmps.items.length, 1);
  const serveCmp = await get(`/comparisons/${serveCmps.items[0].sha256}`);
  assert.equal(serveCmp.result.options.length, 2);
  assert.equal(serveCmp.result.winner, 'kvcache-routing-autoscaled', 'the set-up meeting the TTFT SLO at the higher rate needs fewer replicas');
  const serveCharts = await get(`/comparisons/${serveCmps.items[0].sha256}/charts`);
  for (const o of serveCharts.options) assert.equal(o.replicas_by_profile_hour.length, 24, o.name);
  assert.ok(serveCmp.scenario.options.every((o) => o.benchmark.load_points.length >= 2), 'the latency-vs-load curve has points');

  // The review: second phase, five artifacts (the what-if replay among them), a signed revise decision, a drift alert.
  const review = (await get('/reviews')).items.find((r) => /13B regression suite/.test(r.title));
  assert.equal(review.day, 41);
  assert.equal(review.current_phase, 'smallest_complete_workflow');
  assert.equal(review.status, 'needs decision');
  assert.equal((await get(`/reviews/${review.id}/artifacts`)).items.length, 5);
  const decisions = (await get(`/decisions?review=${review.id}`)).items;
  assert.equal(decisions.length, 1);
  const decision = await get(`/decisions/${decisions[0].id}`);
  const record = decision.record ?? decision;
  assert.equal(record.decision, 'revise');
  assert.equal(record.chosen_option, 'h100-nvme-cache');
  assert.deepEqual(record.comparison_sha256, [cmp.sha256]);
  const alerts = (await get(`/alerts?review=${review.id}`)).items;
  assert.ok(alerts.some((a) => a.kind === 'drift' && a.metric === 'throughput_units_per_s'), JSON.stringify(alerts));
  // The auditor's offline check of everything the demo signed.
  const bundle = await api(srv.url, 'GET', '/api/v1/audit/bundle', { token: auditor });
  const key = await api(srv.url, 'GET', '/api/v1/log/key', { token: auditor });
  fs.writeFileSync(path.join(dir, 'bundle.json'), bundle.text);
  fs.writeFileSync(path.join(dir, 'server.vkey'), key.text);
  const verify = spawnSync(bin, ['verify', path.join(dir, 'bundle.json'), '--key', path.join(dir, 'server.vkey'), '--recompute'], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stdout + verify.stderr);

  // Again: nothing new anywhere, and the same passwords printed.
  const before = rowCounts();
  const again = runDemo(srv, dir);
  assert.match(again, /— 0 new records this run/);
  for (const [name, pw] of Object.entries(passwords)) assert.ok(again.includes(pw), name);
  const afterCounts = rowCounts();
  assert.deepEqual(afterCounts, before);
});
