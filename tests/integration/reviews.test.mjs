// 90-day reviews: phases from the start date, ETag/If-Match updates, team scoping, artifacts
// (boundary tests record what was exercised), the seven-item checklist computed from stored
// evidence, and drift alerts after a decision.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, buildEvidence, createReview, postDecision, record, runsOf } from './ledger.lib.mjs';

let srv;
let admin;
let olga;
let pavel;
let auditor;
let ev;
let member;   // member of ev.team
let outsider; // member of another team

const call = (method, p, who, body, headers) => api(srv.url, method, p, { token: who.token, body, headers });
const pointers = (r) => r.json.errors.map((e) => e.pointer);

before(async () => {
  // The background drift check every second (the default is a minute).
  srv = await startServer({ env: { CAPLEDGER_DRIFT_SWEEP_S: '1' } });
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  pavel = await addOwner(srv, 'pavel');
  auditor = addUser(srv, 'audrey', 'auditor');
  ev = await buildEvidence(srv.url, admin, olga, { complete: false });
  member = addUser(srv, 'tom', 'team', [ev.team]);
  assert.equal((await call('POST', '/api/v1/teams', admin, { name: 'elsewhere' })).status, 201);
  outsider = addUser(srv, 'sam', 'team', ['elsewhere']);
});
after(async () => { await srv?.stop(); });

const isoDate = (d) => d.toISOString().slice(0, 10);
const addDays = (date, n) => { const d = new Date(`${date}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + n); return isoDate(d); };

test('a review has defaults, three phases with dates, and the current one', async () => {
  const today = isoDate(new Date());
  const started = addDays(today, -40); // day 41: the smallest complete workflow
  const r = await call('POST', '/api/v1/reviews', olga, { title: 'LLM capacity', workload_ids: [ev.workloadId], started_on: started });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.owner, 'olga');
  assert.equal(r.json.status, 'open');
  assert.equal(r.json.question, 'Which capacity arrangement produces the lowest reliable cost per completed experiment or accepted inference outcome?');
  assert.equal(r.json.day, 41);
  assert.equal(r.json.current_phase, 'smallest_complete_workflow');
  assert.deepEqual(r.json.phases.map((p) => [p.phase, p.starts_on, p.ends_on, p.current]), [
    ['evidence_plan', started, addDays(started, 29), false],
    ['smallest_complete_workflow', addDays(started, 30), addDays(started, 59), true],
    ['boundary_test', addDays(started, 60), addDays(started, 89), false],
  ]);
  const future = await createReview(srv.url, olga, [], { started_on: addDays(today, 3) });
  assert.equal(future.current_phase, null);
  assert.ok(future.phases.every((p) => !p.current));
});

test('bad reviews are refused with a pointer per fault, nothing written', async () => {
  const r = await call('POST', '/api/v1/reviews', olga, {
    title: '', workload_ids: [crypto.randomUUID(), 'x'], started_on: '2026-02-30', status: 'decided', colour: 'red', drift_threshold: 0,
  });
  assert.equal(r.status, 422, r.text);
  assert.deepEqual(pointers(r).sort(), ['/colour', '/drift_threshold', '/started_on', '/status', '/title', '/workload_ids/1'].sort());
  // References: an owner who is not an owner, a workload that does not exist.
  const refs = await call('POST', '/api/v1/reviews', olga, { title: 't', owner: 'tom', workload_ids: [crypto.randomUUID()], started_on: '2026-03-01' });
  assert.equal(refs.status, 422, refs.text);
  assert.deepEqual(pointers(refs).sort(), ['/owner', '/workload_ids/0']);
  // Only owners create reviews.
  assert.equal((await call('POST', '/api/v1/reviews', member, { title: 't', started_on: '2026-03-01' })).status, 403);
  assert.equal((await call('POST', '/api/v1/reviews', auditor, { title: 't', started_on: '2026-03-01' })).status, 403);
});

test('PATCH needs If-Match; the status is the server\'s', async () => {
  const rv = await createReview(srv.url, olga, [ev.workloadId]);
  const g = await call('GET', `/api/v1/reviews/${rv.id}`, olga);
  assert.equal(g.headers.etag, '"v1"');
  assert.equal((await call('PATCH', `/api/v1/reviews/${rv.id}`, olga, { title: 'x' })).status, 428);
  assert.equal((await call('PATCH', `/api/v1/reviews/${rv.id}`, olga, { title: 'x' }, { 'If-Match': '"v7"' })).status, 412);
  const p = await call('PATCH', `/api/v1/reviews/${rv.id}`, pavel, { title: 'Renamed', owner: 'pavel', drift_threshold: 0.5 }, { 'If-Match': g.headers.etag, 'Content-Type': 'application/merge-patch+json' });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.headers.etag, '"v2"');
  assert.equal(p.json.title, 'Renamed');
  assert.equal(p.json.owner, 'pavel');
  assert.equal(p.json.drift_threshold, 0.5);
  assert.deepEqual(p.json.workload_ids, [ev.workloadId]);
  const bad = await call('PATCH', `/api/v1/reviews/${rv.id}`, olga, { status: 'decided', started_on: null }, { 'If-Match': '"v2"' });
  assert.equal(bad.status, 422);
  assert.deepEqual(pointers(bad).sort(), ['/started_on', '/status']);
  assert.equal((await call('PATCH', `/api/v1/reviews/${rv.id}`, member, { title: 'x' }, { 'If-Match': '"v2"' })).status, 403);
});

test('team members see only the reviews of their teams\' workloads', async () => {
  const rv = await createReview(srv.url, olga, [ev.workloadId], { title: 'visible to the team' });
  const hidden = await createReview(srv.url, olga, [], { title: 'no workloads' });
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, member)).status, 200);
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, outsider)).status, 404);
  assert.equal((await call('GET', `/api/v1/reviews/${hidden.id}`, member)).status, 404);
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}/checklist`, outsider)).status, 404);
  const titles = async (who) => {
    const seen = [];
    let cursor = null;
    do {
      const r = await call('GET', `/api/v1/reviews?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, who);
      assert.equal(r.status, 200, r.text);
      seen.push(...r.json.items.map((i) => i.id));
      cursor = r.json.next_cursor;
    } while (cursor);
    return seen;
  };
  const forMember = await titles(member);
  assert.ok(forMember.includes(rv.id));
  assert.ok(!forMember.includes(hidden.id));
  assert.equal((await titles(outsider)).length, 0);
  const forAuditor = await titles(auditor);
  assert.ok(forAuditor.includes(rv.id) && forAuditor.includes(hidden.id));
  assert.equal(new Set(forAuditor).size, forAuditor.length, 'no item twice across pages');
  assert.equal((await call('GET', '/api/v1/reviews?status=maybe', auditor)).status, 422);
});

test('artifacts: named contributor, evidence links checked, boundary tests record what was exercised', async () => {
  const rv = await createReview(srv.url, olga, [ev.workloadId]);
  const base = `/api/v1/reviews/${rv.id}/artifacts`;
  const bad = await call('POST', base, olga, {
    title: 'Load test plan', phase: 'evidence_plan', contributor: 'Ana Ruiz', due_on: '2026-13-01',
    evidence: [crypto.randomUUID(), ev.benchmarkIds['a100-spot'], '0'.repeat(64)],
    exercised: [{ condition: 'recovery', exercised: 'kill a node' }],
  });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(pointers(bad).sort(), ['/due_on', '/exercised']);
  const unknown = await call('POST', base, olga, {
    title: 'Load test plan', phase: 'evidence_plan', contributor: 'Ana Ruiz',
    evidence: [crypto.randomUUID(), ev.benchmarkIds['a100-spot'], '0'.repeat(64), ev.comparison.sha256, ev.runUploadId],
  });
  assert.equal(unknown.status, 422, unknown.text);
  assert.deepEqual(pointers(unknown), ['/evidence/0', '/evidence/2']);
  const plan = await call('POST', base, olga, {
    title: 'Representative inputs and baseline', phase: 'evidence_plan', contributor: 'Ana Ruiz', due_on: '2026-02-01',
    representative_inputs: '2B tokens of the March corpus', baseline: 'the on-premises A100 cluster',
    evidence: [ev.benchmarkIds['a100-spot'], ev.comparison.sha256, ev.runUploadId],
  });
  assert.equal(plan.status, 201, plan.text);
  assert.equal(plan.json.status, 'planned');
  const boundary = await call('POST', base, member, {
    title: 'Boundary test of the H100 workflow', phase: 'boundary_test', contributor: 'Tom Berg', status: 'in_progress',
    exercised: [
      { condition: 'degraded_dependency', exercised: 'object store throttled to 20%', outcome: 'input stall rose to 0.4; checkpoints still written' },
      { condition: 'recovery', exercised: 'one node killed mid-run', outcome: 'restarted from the last checkpoint in 6 minutes' },
      { condition: 'handoff', exercised: 'on-call engineer resumed the run' },
    ],
  });
  assert.equal(boundary.status, 201, boundary.text);
  assert.equal(boundary.json.exercised.length, 3);
  const badCondition = await call('POST', base, olga, { title: 'x', phase: 'boundary_test', contributor: 'x', exercised: [{ condition: 'luck', exercised: 'x' }] });
  assert.deepEqual(pointers(badCondition), ['/exercised/0/condition']);
  // A team member updates their artifact with If-Match; an outsider cannot see the review.
  const aid = boundary.json.id;
  assert.equal((await call('PATCH', `${base}/${aid}`, member, { status: 'done' })).status, 428);
  const done = await call('PATCH', `${base}/${aid}`, member, { status: 'done', exercised: [{ condition: 'ambiguous_input', exercised: 'prompts mixing languages', outcome: 'routed to review' }] }, { 'If-Match': '"v1"' });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.json.status, 'done');
  assert.equal(done.json.exercised[0].condition, 'ambiguous_input');
  assert.equal((await call('PATCH', `${base}/${aid}`, outsider, { status: 'done' }, { 'If-Match': '"v2"' })).status, 404);
  const list = await call('GET', base, auditor);
  assert.equal(list.status, 200);
  assert.deepEqual(list.json.items.map((a) => a.id), [plan.json.id, aid]);
  assert.equal((await call('PATCH', `${base}/${crypto.randomUUID()}`, olga, { status: 'done' }, { 'If-Match': '"v1"' })).status, 404);
  // A team member cites only their teams' evidence: another team's upload answers as unknown.
  const foreign = await call('POST', '/api/v1/runs?cluster=sams', outsider, [{
    external_id: 'e1', team: 'elsewhere', user: 'sam', workload_class: 'production',
    submitted_at: '2026-01-01T00:00:00Z', started_at: '2026-01-01T00:01:00Z', ended_at: '2026-01-01T01:00:00Z',
    gpus: 1, state: 'COMPLETED' }]);
  assert.equal(foreign.status, 201, foreign.text);
  const cites = await call('POST', base, member, { title: 'x', phase: 'evidence_plan', contributor: 'Tom Berg',
    evidence: [ev.benchmarkIds['a100-spot'], foreign.json.id] });
  assert.equal(cites.status, 422, cites.text);
  assert.deepEqual(pointers(cites), ['/evidence/1']);
  assert.match(cites.json.errors[0].message, /names no benchmark, upload or stored comparison/);
  const own = await call('POST', base, member, { title: 'x', phase: 'evidence_plan', contributor: 'Tom Berg',
    evidence: [ev.benchmarkIds['a100-spot'], ev.comparison.sha256] });
  assert.equal(own.status, 201, own.text);
});

test('the checklist names what is missing, item by item, with the evidence behind each', async () => {
  const rv = await createReview(srv.url, olga, [ev.workloadId]);
  const c = await call('GET', `/api/v1/reviews/${rv.id}/checklist`, member);
  assert.equal(c.status, 200, c.text);
  assert.equal(c.json.comparison_sha256, ev.comparison.sha256, 'the latest comparison for the workloads');
  const byItem = Object.fromEntries(c.json.items.map((i) => [i.item, i]));
  assert.deepEqual(Object.keys(byItem), ['workload and memory profile', 'data and storage path', 'effective GPU utilisation',
    'queue and provisioning delay', 'failure and rerun rate', 'engineering setup and support', 'completed-result and service-level cost']);
  assert.equal(c.json.covered, false);
  // The workload was stored without a dataset location.
  assert.deepEqual(byItem['data and storage path'].missing, ["workload 'llm-7b-pretrain-slice' gives no dataset location (dataset_location)"]);
  for (const [name, item] of Object.entries(byItem)) {
    if (name !== 'data and storage path') assert.equal(item.covered, true, `${name}: ${item.missing}`);
  }
  assert.ok(byItem['queue and provisioning delay'].evidence.includes(ev.benchmarkIds['a100-spot']));
  assert.deepEqual(byItem['completed-result and service-level cost'].evidence, [ev.comparison.sha256]);
  // A review with no workloads and no comparison.
  const empty = await createReview(srv.url, olga, []);
  const e = await call('GET', `/api/v1/reviews/${empty.id}/checklist`, olga);
  assert.ok(e.json.items.every((i) => !i.covered && i.missing.length > 0));
  assert.ok(e.json.items[0].missing.includes('the review names no workloads'));
  // A comparison that is not stored, or that the caller's teams cannot see, is not found.
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}/checklist?comparison=${'0'.repeat(64)}`, olga)).status, 404);
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}/checklist?comparison=xyz`, olga)).status, 422);
});

test('drift after a decision raises alerts for the owner and puts the review back to "needs decision"', async () => {
  const full = await buildEvidence(srv.url, admin, olga, { seed: 8 });
  const rv = await createReview(srv.url, olga, [full.workloadId], { title: 'drift watch' });
  const dec = await postDecision(srv.url, olga, record(olga, rv.id, {
    decision: 'advance', chosen_option: 'h100-on-demand', comparison_sha256: [full.comparison.sha256],
  }));
  assert.equal(dec.status, 201, dec.text);
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, olga)).json.status, 'decided');
  // Nothing has happened since: no alert.
  let alerts = await call('GET', `/api/v1/alerts?review=${rv.id}`, olga);
  assert.equal(alerts.status, 200, alerts.text);
  assert.deepEqual(alerts.json.items, []);

  // Since the decision: half the runs fail (assumed 0.08), they wait 60 s (assumed 1800 s),
  // utilisation 0.8 (assumed 0.86, within 25%), and a new benchmark halves the throughput.
  const since = Date.now() + 2000;
  const up = await call('POST', '/api/v1/runs', olga, runsOf(full.team, 'onprem', 24, { start: since, waitS: 60, utilization: 0.8, state: (i) => (i % 2 ? 'FAILED' : 'COMPLETED') }));
  assert.equal(up.status, 201, up.text);
  const bench = await call('POST', '/api/v1/benchmarks', olga, {
    workload_id: full.workloadId, offer_id: full.offerIds['h100-on-demand'], measured_at: new Date().toISOString(),
    outcome: 'succeeded', instances: 2, throughput_units_per_s: 155000, gpu_duty_cycle: 0.85,
  });
  assert.equal(bench.status, 201, bench.text);

  // The background check notices without anyone asking: the review needs a decision again.
  let status = null;
  for (let i = 0; i < 50 && status !== 'needs decision'; i++) {
    await new Promise((res) => setTimeout(res, 200));
    status = (await call('GET', `/api/v1/reviews/${rv.id}`, olga)).json.status;
  }
  assert.equal(status, 'needs decision');
  alerts = await call('GET', `/api/v1/alerts?review=${rv.id}`, olga);
  assert.equal(alerts.status, 200, alerts.text);
  const byMetric = Object.fromEntries(alerts.json.items.map((a) => [a.metric, a]));
  assert.deepEqual(Object.keys(byMetric).sort(), ['failure_rate', 'queue_wait_s', 'throughput_units_per_s']);
  assert.equal(byMetric.failure_rate.assumed, 0.08);
  assert.equal(byMetric.failure_rate.observed, 0.5);
  assert.equal(byMetric.failure_rate.sample_size, 24);
  assert.ok(byMetric.failure_rate.evidence.includes(up.json.id));
  assert.equal(byMetric.queue_wait_s.observed, 60);
  assert.equal(byMetric.throughput_units_per_s.observed, 155000);
  assert.deepEqual(byMetric.throughput_units_per_s.evidence, [bench.json.id]);
  assert.match(byMetric.failure_rate.message, /failure rate since the decision is 0.5 over 24 GPU runs.*higher than the 0.08/);
  for (const a of alerts.json.items) {
    assert.equal(a.owner, 'olga');
    assert.equal(a.decision_id, dec.json.id);
    assert.equal(a.status, 'open');
  }
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, olga)).json.status, 'needs decision');

  // Sweeping again raises nothing new; other owners do not see olga's alerts; auditors do.
  assert.deepEqual((await call('POST', '/api/v1/alerts/sweep', pavel)).json, { raised: 0 });
  assert.equal((await call('GET', `/api/v1/alerts?review=${rv.id}`, pavel)).json.items.length, 0);
  assert.equal((await call('GET', `/api/v1/alerts?owner=olga`, pavel)).status, 403);
  assert.equal((await call('GET', `/api/v1/alerts?review=${rv.id}`, auditor)).json.items.length, 3);
  assert.equal((await call('GET', '/api/v1/alerts', member)).status, 403);

  // The owner acknowledges one (If-Match), then resolves it.
  const id = byMetric.failure_rate.id;
  assert.equal((await call('PATCH', `/api/v1/alerts/${id}`, olga, { status: 'acknowledged' })).status, 428);
  assert.equal((await call('PATCH', `/api/v1/alerts/${id}`, pavel, { status: 'acknowledged' }, { 'If-Match': '"v1"' })).status, 404);
  const ack = await call('PATCH', `/api/v1/alerts/${id}`, olga, { status: 'acknowledged', note: 'rerunning the failure study' }, { 'If-Match': '"v1"' });
  assert.equal(ack.status, 200, ack.text);
  assert.equal(ack.json.status, 'acknowledged');
  assert.equal(ack.json.updated_by, 'olga');
  assert.equal((await call('PATCH', `/api/v1/alerts/${id}`, olga, { status: 'open' }, { 'If-Match': '"v2"' })).status, 422);
  const res = await call('PATCH', `/api/v1/alerts/${id}`, olga, { status: 'resolved' }, { 'If-Match': '"v2"' });
  assert.equal(res.json.status, 'resolved');
  assert.equal(res.json.note, 'rerunning the failure study');

  // A new decision answers the drift: the review is decided again.
  const again = await postDecision(srv.url, olga, record(olga, rv.id, { decision: 'revise', supersedes: dec.json.id }));
  assert.equal(again.status, 201, again.text);
  assert.equal((await call('GET', `/api/v1/reviews/${rv.id}`, olga)).json.status, 'decided');
});

test('the drift check reads the decision from its leaf: a row edited to hide a drift is named, not believed', async () => {
  const { psql } = await import('./lib/harness.mjs');
  const full = await buildEvidence(srv.url, admin, olga, { seed: 9 });
  const rv = await createReview(srv.url, olga, [full.workloadId], { title: 'drift, edited' });
  const dec = await postDecision(srv.url, olga, record(olga, rv.id, {
    decision: 'advance', chosen_option: 'h100-on-demand', comparison_sha256: [full.comparison.sha256],
  }));
  assert.equal(dec.status, 201, dec.text);
  // As the superuser with triggers off: the advance becomes a stop (which the check skips).
  psql(`SET session_replication_role = replica; UPDATE decision SET decision = 'stop', chosen_option = NULL, record = jsonb_set(record, '{decision}', '"stop"') WHERE id = '${dec.json.id}'`, { database: srv.db });
  const swept = await call('POST', '/api/v1/alerts/sweep', admin);
  assert.equal(swept.status, 200, swept.text);
  const integrity = (await call('GET', '/api/v1/alerts?owner=admin', admin)).json.items.filter((a) => a.kind === 'log_integrity');
  assert.ok(integrity.some((a) => a.message.includes(`decision ${dec.json.id}: the stored row's decision differs from leaf ${dec.json.leaf_index}`)), JSON.stringify(integrity));
  // Nothing is computed from the edited row.
  assert.deepEqual((await call('GET', `/api/v1/alerts?review=${rv.id}`, olga)).json.items, []);
});
