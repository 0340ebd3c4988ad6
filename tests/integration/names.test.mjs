// What the pages need to offer names instead of ids, and charts: ?q= (a name prefix, any case,
// literal) on workloads, offers, benchmarks and scenarios (?team= on scenarios), benchmark
// names, a review's comparisons by scenario name and date, and the charts' figures of a
// comparison (percentiles of the same trials, replicas by hour) that leave the comparison as is.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { api, startServer, projectDir } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, buildEvidence, createReview } from './ledger.lib.mjs';

let srv;
let olga;
let ev;
let outsider;
const get = (p, who = olga) => api(srv.url, 'GET', p, { token: who.token });

before(async () => {
  srv = await startServer();
  const admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  ev = await buildEvidence(srv.url, admin, olga);
  assert.equal((await api(srv.url, 'POST', '/api/v1/teams', { token: admin.token, body: { name: 'elsewhere' } })).status, 201);
  outsider = addUser(srv, 'sam', 'team', ['elsewhere']);
});
after(async () => { await srv?.stop(); });

test('?q= narrows lists by name prefix, in any case and literally', async () => {
  const names = async (p, key = 'name') => (await get(p)).json.items.map((x) => x[key]);
  assert.deepEqual(await names('/api/v1/workloads?q=LLM-7b'), ['llm-7b-pretrain-slice']);
  assert.deepEqual(await names('/api/v1/workloads?q=slice'), [], 'a prefix, not a substring');
  assert.deepEqual(await names('/api/v1/workloads?q=%25'), [], '% is a character, not a wildcard');
  assert.deepEqual(await names('/api/v1/offers?q=h100'), ['h100-on-demand']);
  const b = (await get('/api/v1/benchmarks?q=a100')).json.items;
  assert.deepEqual(b.map((x) => [x.workload_name, x.offer_name]), [['llm-7b-pretrain-slice', 'a100-spot']]);
  assert.equal((await get('/api/v1/benchmarks?q=llm')).json.items.length, 3, 'the workload name counts too');
  assert.deepEqual(await names(`/api/v1/scenarios?q=LLM&team=${ev.team}`), ['llm slice']);
  assert.deepEqual(await names('/api/v1/scenarios?team=elsewhere'), []);
  // Team scoping still holds: another team's member finds nothing by name.
  assert.deepEqual((await get('/api/v1/workloads?q=llm', outsider)).json.items, []);
  const long = await get(`/api/v1/workloads?q=${'x'.repeat(200)}`);
  assert.equal(long.status, 422);
  assert.equal(long.json.errors[0].pointer, '?q');
});

test('a review lists the comparisons of its workloads by scenario name and date', async () => {
  const review = await createReview(srv.url, olga, [ev.workloadId]);
  const r = await get(`/api/v1/reviews/${review.id}/comparisons`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.items.length, 1);
  const c = r.json.items[0];
  assert.equal(c.sha256, ev.comparison.sha256);
  assert.equal(c.scenario_name, 'llm slice');
  assert.equal(c.team, ev.team);
  assert.equal(c.winner, ev.result.winner);
  assert.equal(c.hourly_price_trap, Boolean(ev.result.flags.hourly_price_trap));
  assert.match(c.created_at, /^\d{4}-\d\d-\d\d/);
  // A review of no workload has none; a review the caller cannot see is 404.
  const bare = await createReview(srv.url, olga, []);
  assert.deepEqual((await get(`/api/v1/reviews/${bare.id}/comparisons`)).json.items, []);
  assert.equal((await get(`/api/v1/reviews/${review.id}/comparisons`, outsider)).status, 404);
  assert.equal((await get(`/api/v1/reviews/${review.id}/comparisons?limit=0`)).status, 422);
});

test('the charts of a comparison: the percentiles of the same trials, and the comparison unchanged', async () => {
  const stored = (await get(`/api/v1/comparisons/${ev.comparison.sha256}`)).json;
  const r = await get(`/api/v1/comparisons/${ev.comparison.sha256}/charts`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.input_sha256, stored.result.input_sha256);
  for (const o of stored.result.options.filter((x) => x.feasible)) {
    const pct = r.json.options.find((x) => x.name === o.name).cost_per_outcome_percentiles;
    assert.equal(pct.length, 99);
    assert.equal(pct[49], o.cost_per_outcome_quantiles.p50);
    assert.equal(pct[89], o.cost_per_outcome_quantiles.p90);
    assert.equal(pct[98], o.cost_per_outcome_quantiles.p99);
    assert.ok(!('cost_per_outcome_percentiles' in o), 'the comparison document does not carry them');
  }
  // The same from the scenario itself, and for inference the replicas of each profile hour.
  const again = await api(srv.url, 'POST', '/api/v1/compare/charts', { token: olga.token, body: stored.scenario });
  assert.deepEqual(again.json, r.json);
  const inference = JSON.parse(fs.readFileSync(path.join(projectDir, 'tests/data/spec/example-inference.json'), 'utf8'));
  const ic = await api(srv.url, 'POST', '/api/v1/compare/charts', { token: olga.token, body: inference });
  assert.equal(ic.status, 200, ic.text);
  for (const o of ic.json.options) {
    assert.equal(o.replicas_by_profile_hour.length, inference.service.demand_rps_by_hour.length);
    assert.equal(o.cost_per_outcome_percentiles, null);
  }
  assert.equal((await get(`/api/v1/comparisons/${'0'.repeat(64)}/charts`)).status, 404);
  assert.equal((await get(`/api/v1/comparisons/${ev.comparison.sha256}/charts`, outsider)).status, 404);
  const bad = await api(srv.url, 'POST', '/api/v1/compare/charts', { token: olga.token, body: { options: 'none' } });
  assert.equal(bad.status, 422);
});
