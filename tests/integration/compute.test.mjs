// The engine over HTTP: the worked examples through POST /compare, error contract of bad
// scenarios, stored scenarios referencing stored records, and stored comparisons named by the
// SHA-256 of their RFC 8785 bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { api, dataDir, psql, startServer } from './lib/harness.mjs';
import { bin, mintToken } from './lib/cli.mjs';
import { spawnSync } from 'node:child_process';

const file = (n) => JSON.parse(fs.readFileSync(path.join(dataDir, 'spec', `example-${n}.json`), 'utf8'));
// Engine 1's worked examples and the tests of engine 1's figures pin "engine": 1 (new
// comparisons use engine 2); engine 2's examples (-v2) are sent as they are.
const example = (n) => (n.endsWith('-v2') ? file(n) : { ...file(n), engine: 1 });
const expected = (n) => JSON.parse(fs.readFileSync(path.join(dataDir, 'spec', `example-${n}.expected.json`), 'utf8'));

// Every number present in `want` must be in `got` within a relative 1e-9.
function assertClose(got, want, where = '') {
  if (typeof want === 'number') {
    assert.equal(typeof got, 'number', `${where}: ${JSON.stringify(got)}`);
    const scale = Math.max(Math.abs(want), Math.abs(got));
    assert.ok(scale === 0 || Math.abs(got - want) / scale <= 1e-9, `${where}: ${got} vs ${want}`);
  } else if (Array.isArray(want)) {
    assert.ok(Array.isArray(got), where);
    assert.equal(got.length, want.length, `${where} length`);
    want.forEach((w, i) => assertClose(got[i], w, `${where}/${i}`));
  } else if (want && typeof want === 'object') {
    for (const k of Object.keys(want)) assertClose(got?.[k], want[k], `${where}/${k}`);
  } else {
    assert.deepEqual(got, want, where);
  }
}

let srv, admin, owner;
before(async () => {
  srv = await startServer();
  admin = mintToken(srv, 'admin');
  const t = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'llm' } });
  assert.equal(t.status, 201);
  // An owner (only the role matters here; the password is never used).
  psql(`INSERT INTO app_user (username, role, password_hash) VALUES ('olga', 'owner', 'x')`, { database: srv.db });
  owner = mintToken(srv, 'olga');
});
after(async () => { await srv?.stop(); });

test('POST /compare reproduces both worked examples to 1e-9', async () => {
  for (const n of ['training', 'inference']) {
    const r = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: example(n) });
    assert.equal(r.status, 200, r.text);
    assertClose(r.json, expected(n), n);
    assert.match(r.json.input_sha256, /^[0-9a-f]{64}$/);
  }
});

test('bad scenarios: 422 with every JSON Pointer; non-JSON numbers are 400', async () => {
  const s = example('training');
  s.assumptions.failure_probability = 1;
  s.options[0].offer.price_per_hour = -3;
  s.options[1].offer.currency = 'EUR';
  s.options[2].benchmark.throughput_units_per_s = 0;
  const r = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: s });
  assert.equal(r.status, 422, r.text);
  const pointers = r.json.errors.map((e) => e.pointer);
  for (const p of ['/assumptions/failure_probability', '/options/0/offer/price_per_hour',
                   '/options/2/benchmark/throughput_units_per_s']) {
    assert.ok(pointers.includes(p), `${p} missing from ${pointers}`);
  }
  assert.ok(pointers.some((p) => p.startsWith('/options/1/offer/currency') || p === '/options/1/offer/currency'),
            `currency pointer missing from ${pointers}`);
  for (const bad of ['{"workload": NaN}', '{"x": Infinity}', '{"x": 1e400}']) {
    const b = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: bad,
      headers: { 'content-type': 'application/json' } });
    assert.equal(b.status, 400, `${bad}: ${b.text}`);
  }
});

test('stored scenario → stored comparison, named by the SHA-256 of its JCS bytes, recomputable', async () => {
  const c = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'pretrain slice', team: 'llm', document: example('training') } });
  assert.equal(c.status, 201, c.text);
  const id = c.json.id;
  const cmp = await api(srv.url, 'POST', `/api/v1/scenarios/${id}/comparisons`, { token: owner });
  assert.equal(cmp.status, 201, cmp.text);
  const sha = cmp.json.sha256;
  assert.match(sha, /^[0-9a-f]{64}$/);
  // The stored bytes hash to the name, and `capledger jcs` of the stored result gives them back.
  const stored = psql(`SELECT result_jcs FROM comparison WHERE sha256 = '${sha}'`, { database: srv.db });
  assert.equal(createHash('sha256').update(stored, 'utf8').digest('hex'), sha);
  const tmp = path.join(fs.mkdtempSync('/tmp/cl-cmp-'), 'result.json');
  fs.writeFileSync(tmp, JSON.stringify(cmp.json.result));
  const jcs = spawnSync(bin, ['jcs', tmp], { encoding: 'utf8' });
  assert.equal(jcs.status, 0, jcs.stderr);
  assert.equal(createHash('sha256').update(jcs.stdout, 'utf8').digest('hex'), sha);
  // The same scenario again: the same result, the same hash, not stored twice.
  const again = await api(srv.url, 'POST', `/api/v1/scenarios/${id}/comparisons`, { token: owner });
  assert.equal(again.status, 200);
  assert.equal(again.json.sha256, sha);
  assert.equal(psql('SELECT count(*) FROM comparison', { database: srv.db }), '1');
  const g = await api(srv.url, 'GET', `/api/v1/comparisons/${sha}`, { token: owner });
  assert.equal(g.status, 200);
  assertClose(g.json.result, expected('training'));
  assert.deepEqual(g.json.scenario, example('training'));
  const list = await api(srv.url, 'GET', `/api/v1/scenarios/${id}/comparisons?limit=1`, { token: owner });
  assert.equal(list.json.items.length, 1);
  assert.equal(list.json.next_cursor, null);
  assert.equal((await api(srv.url, 'GET', `/api/v1/scenarios/${id}/comparisons?limit=0`, { token: owner })).status, 422);
  assert.equal((await api(srv.url, 'GET', `/api/v1/comparisons/${'0'.repeat(64)}`, { token: owner })).status, 404);
  assert.equal((await api(srv.url, 'GET', '/api/v1/comparisons/not-a-hash', { token: owner })).status, 404);
});

test('scenario references to missing records are 422 at their pointer; foreign teams are refused', async () => {
  const doc = example('training');
  doc.options[0].offer = '00000000-0000-0000-0000-000000000000';
  doc.options[1].benchmark = 'not-an-id';
  const r = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'refs', team: 'llm', document: doc } });
  assert.equal(r.status, 422, r.text);
  const pointers = r.json.errors.map((e) => e.pointer);
  assert.ok(pointers.includes('/document/options/0/offer'), pointers.join());
  assert.ok(pointers.includes('/document/options/1/benchmark'), pointers.join());
  const noTeam = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'x', team: 'nobody', document: example('training') } });
  assert.equal(noTeam.status, 422);
  assert.equal(noTeam.json.errors[0].pointer, '/team');
  // An admin manages users, not evidence: may not create scenarios.
  const adm = await api(srv.url, 'POST', '/api/v1/scenarios', { token: admin,
    body: { name: 'x', team: 'llm', document: example('training') } });
  assert.equal(adm.status, 403);
});

// Team boundaries of stored comparisons: a scenario answers only for its own team's workloads,
// and two teams storing the identical comparison each keep their own record of it.
test('scenarios answer for their own team\'s workloads; identical comparisons stay per team', async () => {
  for (const name of ['alpha', 'beta']) {
    assert.equal((await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name } })).status, 201);
  }
  psql(`INSERT INTO app_user (username, role, password_hash) VALUES ('tb', 'team', 'x');
        INSERT INTO user_team SELECT u.id, t.id FROM app_user u, team t WHERE u.username = 'tb' AND t.name = 'beta'`,
       { database: srv.db });
  const tb = mintToken(srv, 'tb');
  const wl = await api(srv.url, 'POST', '/api/v1/workloads', { token: owner,
    body: { team: 'beta', name: 'beta-train', kind: 'training', class: 'production', target_units: 1e9, unit: 'tokens' } });
  assert.equal(wl.status, 201, wl.text);
  const foreign = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'x', team: 'alpha', workload_ids: [wl.json.id], document: example('training') } });
  assert.equal(foreign.status, 422, foreign.text);
  assert.equal(foreign.json.errors[0].pointer, '/workload_ids/0');
  assert.match(foreign.json.errors[0].message, /belongs to team 'beta'/);
  const unknown = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'x', team: 'alpha', workload_ids: ['00000000-0000-0000-0000-000000000000'], document: example('training') } });
  assert.equal(unknown.status, 422);

  const doc = example('training');
  doc.assumptions.seed = 4242; // a comparison no other test stores
  const mk = async (token, team) => {
    const s = await api(srv.url, 'POST', '/api/v1/scenarios', { token, body: { name: `same-${team}`, team, document: doc } });
    assert.equal(s.status, 201, s.text);
    const c = await api(srv.url, 'POST', `/api/v1/scenarios/${s.json.id}/comparisons`, { token });
    return { scenario: s.json.id, c };
  };
  const a = await mk(owner, 'alpha');
  const b = await mk(tb, 'beta');
  assert.equal(a.c.status, 201);
  assert.equal(b.c.status, 201, 'the second team stores its own record of the same comparison');
  assert.equal(b.c.json.sha256, a.c.json.sha256);
  assert.equal(b.c.json.team, 'beta');
  assert.equal(b.c.json.scenario_id, b.scenario);
  assert.equal(b.c.json.created_by, 'tb');
  const seen = await api(srv.url, 'GET', `/api/v1/comparisons/${b.c.json.sha256}`, { token: tb });
  assert.equal(seen.status, 200);
  assert.equal(seen.json.team, 'beta', 'a team member sees its own team\'s record, never another\'s');
  const listed = await api(srv.url, 'GET', `/api/v1/scenarios/${b.scenario}/comparisons`, { token: tb });
  assert.equal(listed.json.items.length, 1);
});

test('POST /compare: engine 2 by default, the v2 examples to 1e-9, "engine" 1 or 2 only', async () => {
  for (const n of ['training-v2', 'inference-v2']) {
    const r = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: example(n) });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.engine_version, 'capledger-cost/2.0.0');
    assertClose(r.json, expected(n), n);
  }
  const plain = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: file('training') });
  assert.equal(plain.json.engine_version, 'capledger-cost/2.0.0', 'a scenario naming no engine gets engine 2');
  const risk = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: example('risk-v2') });
  assert.deepEqual(risk.json.ranking, expected('risk-v2').ranking);
  for (const engine of [0, 3, '1', 1.5]) {
    const r = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: { ...file('training'), engine } });
    assert.equal(r.status, 422, `${engine}: ${r.text}`);
    assert.deepEqual(r.json.errors.map((e) => e.pointer), ['/engine']);
  }
  const s = example('training-v2');
  s.assumptions.trials = 20000;
  s.assumptions.planned_outcomes_per_month = 1001;
  s.options[3].benchmark.queue_wait_quantiles_s.pop();
  const bad = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: s });
  assert.equal(bad.status, 422, bad.text);
  const pointers = bad.json.errors.map((e) => e.pointer);
  for (const p of ['/assumptions/trials', '/assumptions/planned_outcomes_per_month',
                   '/options/3/benchmark/queue_wait_quantiles_s']) assert.ok(pointers.includes(p), pointers.join());
});

// A comparison stored by engine 1 before engine 2 existed (its stored scenario names no engine):
// its charts are recomputed with engine 1, the trials its quantiles came from, while a new
// comparison of the same scenario is made with engine 2.
test('a comparison stored as engine 1 recomputes equal under engine 1 after the upgrade', async () => {
  const doc = file('training');
  doc.assumptions.seed = 777; // a comparison no other test stores
  const sc = await api(srv.url, 'POST', '/api/v1/scenarios', { token: owner,
    body: { name: 'before the upgrade', team: 'llm', document: doc } });
  assert.equal(sc.status, 201, sc.text);
  const dir = fs.mkdtempSync('/tmp/cl-e1-');
  fs.writeFileSync(path.join(dir, 'scenario.json'), JSON.stringify(doc));
  const c = spawnSync(bin, ['compare', '--engine', '1', path.join(dir, 'scenario.json')], { encoding: 'utf8' });
  assert.equal(c.status, 0, c.stderr);
  const result = JSON.parse(c.stdout);
  assert.equal(result.engine_version, 'capledger-cost/1.0.0');
  fs.writeFileSync(path.join(dir, 'result.json'), c.stdout);
  const bytes = spawnSync(bin, ['jcs', path.join(dir, 'result.json')], { encoding: 'utf8' }).stdout;
  const sha = createHash('sha256').update(bytes, 'utf8').digest('hex');
  const q = (t) => `'${t.replaceAll("'", "''")}'`;
  psql(`INSERT INTO comparison (sha256, scenario_id, team, input_sha256, engine_version, resolved, result, result_jcs, created_by)
        VALUES (${q(sha)}, ${q(sc.json.id)}, 'llm', ${q(result.input_sha256)}, 'capledger-cost/1.0.0',
                ${q(JSON.stringify(doc))}::jsonb, ${q(bytes)}::jsonb, ${q(bytes)}, 'olga');
        INSERT INTO comparison_link (sha256, scenario_id, team, created_by) VALUES (${q(sha)}, ${q(sc.json.id)}, 'llm', 'olga')`,
       { database: srv.db });
  const got = await api(srv.url, 'GET', `/api/v1/comparisons/${sha}`, { token: owner });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.engine_version, 'capledger-cost/1.0.0');
  const charts = await api(srv.url, 'GET', `/api/v1/comparisons/${sha}/charts`, { token: owner });
  assert.equal(charts.status, 200, charts.text);
  assert.equal(charts.json.engine_version, 'capledger-cost/1.0.0');
  result.options.forEach((o, i) => {
    const pct = charts.json.options[i].cost_per_outcome_percentiles;
    assertClose([pct[49], pct[89], pct[98]], [o.cost_per_outcome_quantiles.p50, o.cost_per_outcome_quantiles.p90,
                                             o.cost_per_outcome_quantiles.p99], `${o.name} percentiles`);
  });
  // The auditor's recompute: the stored scenario under engine 1 gives the stored figures.
  const again = spawnSync(bin, ['compare', '--engine', '1', path.join(dir, 'scenario.json')], { encoding: 'utf8' });
  assertClose(JSON.parse(again.stdout), got.json.result, 'engine 1 recompute');
  // A new comparison of that scenario is engine 2's.
  const fresh = await api(srv.url, 'POST', `/api/v1/scenarios/${sc.json.id}/comparisons`, { token: owner });
  assert.equal(fresh.status, 201, fresh.text);
  assert.equal(fresh.json.engine_version, 'capledger-cost/2.0.0');
  assert.notEqual(fresh.json.sha256, sha);
});
