// Typed against evidence, before anyone signs (issue 21, item 4): a failure probability typed
// into an option (0.01) is contradicted by 225 stored GPU runs of the workload's team and class
// (120 failed); with the evidence value the other option wins, so the dry run lists it side by
// side, the checklist item reads "contradicted", and an advance without a justification is a
// 422 naming the assumption.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, buildEvidence, createReview, postDecision, record, runsOf } from './ledger.lib.mjs';

let srv, admin, olga;
const call = (method, p, who, body) => api(srv.url, method, p, { token: who.token, body, timeoutMs: 60_000 });

before(async () => {
  srv = await startServer();
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
});
after(async () => { await srv?.stop(); });

test('a typed failure probability contradicted by 200 stored runs changes the winner: the advance needs a justification', async () => {
  const ev = await buildEvidence(srv.url, admin, olga, { seed: 41 }); // 25 completed runs already
  // 200 more runs of the team and class: 120 failed
  const up = await call('POST', '/api/v1/runs?cluster=onprem2', olga, runsOf(ev.team, 'onprem2', 200, { state: (i) => (i < 120 ? 'FAILED' : 'COMPLETED') }));
  assert.equal(up.status, 201, up.text);
  const h100 = { gpu_model: 'H100-80GB', gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', currency: 'USD', quota_gpus: 64, available: true, storage_price_gb_month: 0.08, egress_price_gb: 0.09, orchestration_overhead: 0.05 };
  const bench = { instances: 2, throughput_units_per_s: 310000, gpu_duty_cycle: 0.86, input_stall_fraction: 0.04, setup_s: 1200, checkpoint_write_s: 90, restart_s: 300, checkpoint_interval_s: 3600, queue_wait_s: 1800, transfer_gb: 0 };
  const sc = await call('POST', '/api/v1/scenarios', olga, {
    name: 'typed q', team: ev.team, workload_ids: [ev.workloadId],
    document: {
      workload: ev.workloadId,
      assumptions: { engineer_rate_per_hour: 110, engineer_blocked_fraction: 0.2, failure_progress_fraction: 0.5, trials: 2000, seed: 41 },
      options: [
        { name: 'h100-on-demand', benchmark: ev.benchmarkIds['h100-on-demand'] },
        { name: 'h100-discount', offer: { ...h100, price_per_hour: 40 }, benchmark: { ...bench, failure_probability: 0.01 } },
      ],
    },
  });
  assert.equal(sc.status, 201, sc.text);
  const cmp = await call('POST', `/api/v1/scenarios/${sc.json.id}/comparisons`, olga);
  assert.ok([200, 201].includes(cmp.status), cmp.text);
  const full = (await call('GET', `/api/v1/comparisons/${cmp.json.sha256}`, olga)).json;
  assert.equal(full.result.winner ?? full.result.ranking[0], 'h100-discount', 'with the typed 0.01 the discount wins');

  const rv = await createReview(srv.url, olga, [ev.workloadId], { title: 'typed against evidence' });
  const rec = record(olga, rv.id, { decision: 'advance', chosen_option: 'h100-discount', comparison_sha256: [cmp.json.sha256] });
  const dry = await call('POST', '/api/v1/decisions?dry_run=true', olga, { record: { ...rec, supersedes: null } });
  assert.equal(dry.status, 200, dry.text);
  const tve = dry.json.checklist.typed_vs_evidence;
  const q = tve.find((c) => c.assumption === '/options/1/benchmark/failure_probability');
  assert.ok(q, JSON.stringify(tve));
  assert.equal(q.typed, 0.01);
  assert.ok(Math.abs(q.evidence - 120 / 225) < 1e-12, `evidence ${q.evidence}`);
  assert.equal(q.runs, 225);
  assert.equal(q.option, 'h100-discount');
  assert.equal(q.winner, 'h100-discount');
  assert.equal(q.winner_with_evidence, 'h100-on-demand');
  assert.equal(q.changes_winner, true);
  assert.ok(Math.abs(q.gap - (120 / 225 - 0.01) / 0.01) < 1e-9);
  assert.ok(q.uploads.includes(up.json.id));
  const item = dry.json.checklist.items.find((i) => i.item === 'failure and rerun rate');
  assert.equal(item.status, 'contradicted');
  const named = dry.json.errors.filter((e) => e.pointer === '/record/justification');
  assert.equal(named.length, 1, JSON.stringify(dry.json.errors));
  assert.match(named[0].message, /\/options\/1\/benchmark\/failure_probability \(option 'h100-discount'\) = 0.01 is contradicted by the stored evidence \(0.5333\d* over 225 runs\), with which 'h100-on-demand' wins/);

  // the append answers the same: 422 naming the assumption
  const refused = await postDecision(srv.url, olga, rec);
  assert.equal(refused.status, 422, refused.text);
  assert.ok(refused.json.errors.some((e) => e.pointer === '/record/justification' && /failure_probability/.test(e.message)));
  // with a written justification the contradiction no longer refuses (the rest of the gate stands)
  const justified = await call('POST', '/api/v1/decisions?dry_run=true', olga, { record: { ...rec, supersedes: null, justification: 'the failures were a data bug, fixed in March' } });
  assert.equal(justified.json.errors.filter((e) => e.pointer === '/record/justification').length, 0);

  // the checklist page reads the same list
  const cl = await call('GET', `/api/v1/reviews/${rv.id}/checklist?comparison=${cmp.json.sha256}`, olga);
  assert.equal(cl.json.typed_vs_evidence.length, tve.length);
  // the stored-benchmark option is measured: never a typed candidate
  assert.ok(!tve.some((c) => c.option === 'h100-on-demand'));
});

test('evidence with which no option wins (every attempt failed) contradicts a typed 1 %: the advance needs a justification', async () => {
  // Every GPU run of the team and class failed: the evidence value 1 is no scenario the engine
  // computes, so the recomputation has no winner. That used to read "not contradicted" (item
  // "covered", nothing asked) — the strongest contradiction let through.
  const team = `tall${Date.now() % 100000}`;
  assert.equal((await call('POST', '/api/v1/teams', admin, { name: team })).status, 201);
  const w = await call('POST', '/api/v1/workloads', olga, { team, name: 'all-failed', kind: 'training', class: 'production', target_units: 2e10, unit: 'tokens', memory_required_gb: 62 });
  assert.equal(w.status, 201, w.text);
  assert.equal((await call('POST', '/api/v1/runs?cluster=onprem3', olga, runsOf(team, 'onprem3', 30, { state: () => 'FAILED' }))).status, 201);
  const h100 = { gpu_model: 'H100-80GB', gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', currency: 'USD', quota_gpus: 64, available: true };
  const bench = { instances: 2, throughput_units_per_s: 310000, gpu_duty_cycle: 0.86, setup_s: 1200, transfer_gb: 0 };
  const sc = await call('POST', '/api/v1/scenarios', olga, {
    name: 'typed q, all failed', team, workload_ids: [w.json.id],
    document: {
      workload: w.json.id,
      assumptions: { failure_progress_fraction: 0.5, trials: 500, seed: 5 },
      options: [
        { name: 'h100-list', offer: { ...h100, price_per_hour: 55 }, benchmark: { ...bench } },
        { name: 'h100-discount', offer: { ...h100, price_per_hour: 40 }, benchmark: { ...bench, failure_probability: 0.01 } },
      ],
    },
  });
  assert.equal(sc.status, 201, sc.text);
  const cmp = await call('POST', `/api/v1/scenarios/${sc.json.id}/comparisons`, olga);
  assert.ok([200, 201].includes(cmp.status), cmp.text);
  const rv = await createReview(srv.url, olga, [w.json.id], { title: 'all failed' });
  const rec = record(olga, rv.id, { decision: 'advance', chosen_option: 'h100-discount', comparison_sha256: [cmp.json.sha256] });
  const dry = await call('POST', '/api/v1/decisions?dry_run=true', olga, { record: { ...rec, supersedes: null } });
  assert.equal(dry.status, 200, dry.text);
  const q = dry.json.checklist.typed_vs_evidence.find((c) => c.assumption === '/options/1/benchmark/failure_probability');
  assert.ok(q, JSON.stringify(dry.json.checklist.typed_vs_evidence));
  assert.equal(q.evidence, 1);
  assert.equal(q.winner, 'h100-discount');
  assert.equal(q.winner_with_evidence, null);
  assert.equal(q.changes_winner, true);
  assert.equal(q.contradicted, true);
  assert.equal(dry.json.checklist.items.find((i) => i.item === 'failure and rerun rate').status, 'contradicted');
  const named = dry.json.errors.filter((e) => e.pointer === '/record/justification');
  assert.equal(named.length, 1, JSON.stringify(dry.json.errors));
  assert.match(named[0].message, /0\.01 is contradicted by the stored evidence \(1 over 30 runs\), with which no option wins instead of 'h100-discount'/);
});
