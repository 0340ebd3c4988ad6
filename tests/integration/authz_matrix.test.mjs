// Deny by default, proven: every route of the router × every role (and anonymous) against the
// real server, each cell checked against the matrix below. A route the router serves but the
// matrix does not list fails the test, and so does a matrix line the router does not serve:
// adding or removing a route forces a decision here.
//
// TO EXTEND: add one line per new route to MATRIX — the method, the pattern exactly as
// `capledger routes` prints it, then who may call it: any of anon, admin, owner, team, auditor,
// or the shorthands `users` (admin owner team auditor) and `all` (anon + users). A line with no
// role after the pattern means nobody (the route never serves). Path parameters are filled from
// PARAM_VALUES (a name not listed there gets a zero UUID); requests carry no body, so an
// allowed cell usually answers 4xx for the missing input — what matters is that it is not 401
// or 403 (and not a 5xx: bad input never is one).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { api, startServer } from './lib/harness.mjs';
import { bin, mintToken } from './lib/cli.mjs';

const MATRIX = `
GET    /healthz                                   all
GET    /readyz                                    all
GET    /metrics                                   all
GET    /api/v1/openapi.yaml                       all

POST   /api/v1/session                            all
DELETE /api/v1/session                            users
GET    /api/v1/me                                 users
PUT    /api/v1/me/signing-key                     owner
GET    /api/v1/me/signing-keys                    users
DELETE /api/v1/me/signing-keys/{key_id}           owner

GET    /api/v1/users                              admin
POST   /api/v1/users                              admin
POST   /api/v1/users/{name}/disable               admin
POST   /api/v1/users/{name}/enable                admin
POST   /api/v1/users/{name}/password              admin
GET    /api/v1/users/{name}/signing-keys          admin
DELETE /api/v1/users/{name}/signing-keys/{key_id} admin
GET    /api/v1/teams                              users
POST   /api/v1/teams                              admin
GET    /api/v1/teams/{id}                         users
GET    /api/v1/tokens                             users
POST   /api/v1/tokens                             users
DELETE /api/v1/tokens/{id}                        users
GET    /api/v1/audit/events                       admin auditor

POST   /api/v1/compare                            users
POST   /api/v1/compare/charts                     users
GET    /api/v1/scenarios                          users
POST   /api/v1/scenarios                          owner team
GET    /api/v1/scenarios/{id}                     users
GET    /api/v1/scenarios/{id}/comparisons         users
POST   /api/v1/scenarios/{id}/comparisons         owner team
GET    /api/v1/comparisons/{sha256}               users
GET    /api/v1/comparisons/{sha256}/charts        users
POST   /api/v1/whatif                             owner team
GET    /api/v1/whatif/{sha256}                    users
GET    /api/v1/whatif/{sha256}/input              users

GET    /api/v1/workloads                          users
POST   /api/v1/workloads                          owner team
GET    /api/v1/workloads/{id}                     users
PATCH  /api/v1/workloads/{id}                     owner team
GET    /api/v1/offers                             users
POST   /api/v1/offers                             admin owner
POST   /api/v1/offers/import                      admin owner
GET    /api/v1/offers/{id}                        users
GET    /api/v1/benchmarks                         users
POST   /api/v1/benchmarks                         owner team
POST   /api/v1/benchmarks/import                  owner team
GET    /api/v1/benchmarks/{id}                    users
GET    /api/v1/benchmarks/{id}/telemetry          users
POST   /api/v1/benchmarks/{id}/telemetry          owner team
GET    /api/v1/benchmarks/{id}/telemetry/series   users
GET    /api/v1/runs                               users
POST   /api/v1/runs                               owner team
GET    /api/v1/uploads                            users
GET    /api/v1/uploads/{id}                       users

GET    /api/v1/reports/usage                      users
GET    /api/v1/reports/idle                       users
GET    /api/v1/reports/decisions                  users
GET    /api/v1/reports/usage/series               users
GET    /api/v1/clusters                           users
GET    /api/v1/clusters/{name}                    users
PUT    /api/v1/clusters/{name}                    owner
GET    /api/v1/workload-classes                   users
PUT    /api/v1/workload-classes/{label}           owner
GET    /api/v1/alerts                             admin owner auditor
POST   /api/v1/alerts/sweep                       admin owner
GET    /api/v1/alerts/{id}                        admin owner auditor
PATCH  /api/v1/alerts/{id}                        admin owner
GET    /api/v1/webhooks                           admin owner
POST   /api/v1/webhooks                           admin owner
GET    /api/v1/webhooks/{id}                      admin owner
DELETE /api/v1/webhooks/{id}                      admin owner
GET    /api/v1/webhooks/{id}/deliveries           admin owner
POST   /api/v1/webhooks/{id}/ping                 admin owner

GET    /api/v1/reviews                            users
POST   /api/v1/reviews                            owner
GET    /api/v1/reviews/{id}                       users
PATCH  /api/v1/reviews/{id}                       owner
GET    /api/v1/reviews/{id}/checklist             users
GET    /api/v1/reviews/{id}/comparisons           users
GET    /api/v1/reviews/{id}/artifacts             users
POST   /api/v1/reviews/{id}/artifacts             owner team
PATCH  /api/v1/reviews/{id}/artifacts/{aid}       owner team
GET    /api/v1/decisions                          users
POST   /api/v1/decisions                          owner
GET    /api/v1/decisions/{id}                     users
GET    /api/v1/decisions/{id}/outcome             users

GET    /api/v1/log/checkpoint                     all
GET    /api/v1/log/key                            all
GET    /api/v1/log/entries                        admin owner auditor
GET    /api/v1/log/proof/inclusion                all
GET    /api/v1/log/proof/consistency              all
GET    /api/v1/log/tile/entries/{index}           admin owner auditor
GET    /api/v1/log/tile/{level}/{index}           all
GET    /api/v1/audit/bundle                       admin owner auditor
`;

// Values for path parameters; anything not named here gets ZERO_UUID.
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const PARAM_VALUES = {
  sha256: '0'.repeat(64),
  key_id: '0'.repeat(64),
  level: '0',
  index: '000.p/1', // the first leaf's tile: there is one once the matrix's users exist
};

const ROLE_NAMES = ['anon', 'admin', 'owner', 'team', 'auditor'];
const SHORTHANDS = { users: ['admin', 'owner', 'team', 'auditor'], all: ROLE_NAMES };
// The principals each cell is tried with: role → who. `team-other` is a member of another team
// than `team`: route-level permissions must not depend on which team a member is in.
const PRINCIPALS = [
  { name: 'anon', role: 'anon' },
  { name: 'admin', role: 'admin' },
  { name: 'owner', role: 'owner' },
  { name: 'team', role: 'team' },
  { name: 'team-other', role: 'team' },
  { name: 'auditor', role: 'auditor' },
];
// `capledger routes` names the roles so: anonymous, admin, owner, team, auditor.
const ROUTER_ROLE = { anonymous: 'anon', admin: 'admin', owner: 'owner', team: 'team', auditor: 'auditor' };

function parseMatrix(text) {
  const m = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [method, pattern, ...who] = line.split(/\s+/);
    const key = `${method} ${pattern}`;
    assert.ok(!m.has(key), `MATRIX lists ${key} twice`);
    const roles = new Set();
    for (const w of who) {
      const expanded = SHORTHANDS[w] ?? [w];
      for (const r of expanded) {
        assert.ok(ROLE_NAMES.includes(r), `MATRIX line "${line}": unknown role ${w}`);
        roles.add(r);
      }
    }
    m.set(key, roles);
  }
  return m;
}

function routerRoutes() {
  const r = spawnSync(bin, ['routes'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const m = new Map();
  for (const line of r.stdout.trim().split('\n')) {
    const [method, pattern, roles = 'none'] = line.split(' ');
    const set = new Set(roles === 'none' ? [] : roles.split(',').map((x) => ROUTER_ROLE[x] ?? x));
    m.set(`${method} ${pattern}`, set);
  }
  return m;
}

const fillPath = (pattern) => pattern.replace(/\{([^}]+)\}/g, (_, name) => PARAM_VALUES[name] ?? ZERO_UUID);
const sorted = (set) => [...set].sort().join(' ');

let srv;
const tokens = {}; // principal name → bearer token (none for anon)

before(async () => {
  srv = await startServer();
  tokens.admin = mintToken(srv, 'admin');
  for (const name of ['alpha', 'beta']) {
    const t = await api(srv.url, 'POST', '/api/v1/teams', { token: tokens.admin, body: { name } });
    assert.equal(t.status, 201, t.text);
  }
  const users = [
    { principal: 'owner', username: 'olga', role: 'owner', teams: [] },
    { principal: 'team', username: 'tariq', role: 'team', teams: ['alpha'] },
    { principal: 'team-other', username: 'tess', role: 'team', teams: ['beta'] },
    { principal: 'auditor', username: 'audrey', role: 'auditor', teams: [] },
  ];
  for (const u of users) {
    const r = await api(srv.url, 'POST', '/api/v1/users', {
      token: tokens.admin,
      body: { username: u.username, password: `pw for ${u.username} 12345`, role: u.role, teams: u.teams },
    });
    assert.equal(r.status, 201, r.text);
    tokens[u.principal] = mintToken(srv, u.username);
  }
});
after(async () => { await srv?.stop(); });

test('the matrix lists exactly the routes the router serves', () => {
  const matrix = parseMatrix(MATRIX);
  const routed = routerRoutes();
  const unlisted = [...routed.keys()].filter((k) => !matrix.has(k));
  const stale = [...matrix.keys()].filter((k) => !routed.has(k));
  assert.deepEqual(unlisted, [], 'routes missing from MATRIX in tests/integration/authz_matrix.test.mjs: ' +
                   'add a line for each, naming the roles that may call it');
  assert.deepEqual(stale, [], 'MATRIX lines for routes the router does not serve');
});

test('each route declares the roles the matrix expects', () => {
  const matrix = parseMatrix(MATRIX);
  const wrong = [];
  for (const [key, roles] of routerRoutes()) {
    const want = matrix.get(key);
    if (want && sorted(want) !== sorted(roles)) {
      wrong.push(`${key}: router allows [${sorted(roles)}], matrix expects [${sorted(want)}]`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('every route × every role: allowed cells pass the door, the others are refused', async () => {
  const matrix = parseMatrix(MATRIX);
  const cells = [];
  for (const key of routerRoutes().keys()) {
    const allowed = matrix.get(key);
    if (!allowed) continue; // reported by the first test
    const [method, pattern] = key.split(' ');
    for (const p of PRINCIPALS) cells.push({ method, pattern, p, allow: allowed.has(p.role) });
  }
  assert.ok(cells.length >= PRINCIPALS.length * 20, `only ${cells.length} cells`);
  const failures = [];
  const runCell = async ({ method, pattern, p, allow }) => {
    const cell = `${method} ${pattern} as ${p.name}`;
    let res;
    try {
      res = await api(srv.url, method, fillPath(pattern), { token: tokens[p.name] });
    } catch (e) {
      failures.push(`${cell}: ${e.message}`);
      return;
    }
    if (allow) {
      if (res.status === 401 || res.status === 403) failures.push(`${cell}: expected allowed, got ${res.status} ${res.text}`);
      else if (res.status >= 500) failures.push(`${cell}: allowed but answered ${res.status} ${res.text}`);
    } else {
      const want = p.role === 'anon' ? 401 : 403;
      if (res.status !== want) failures.push(`${cell}: expected ${want}, got ${res.status}`);
      else if (!/^application\/problem\+json/.test(res.headers['content-type'] ?? '')) {
        failures.push(`${cell}: the ${want} is not problem+json`);
      }
    }
  };
  // A few at a time: enough to be quick, few enough for the server's thread pool.
  const queue = [...cells];
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (queue.length) await runCell(queue.shift());
  }));
  if (srv.exited) {
    const crash = srv.stderrLines().filter((l) => !l.startsWith('{')).slice(0, 40).join('\n');
    assert.fail(`the server died during the matrix (${JSON.stringify(srv.exited)}):\n${crash}`);
  }
  assert.deepEqual(failures, [], `${failures.length} of ${cells.length} cells wrong`);
});

test('a bad bearer token is 401 on every route, even those open to anonymous callers', async () => {
  const bad = 'cl_' + 'A'.repeat(43);
  const failures = [];
  for (const key of routerRoutes().keys()) {
    const [method, pattern] = key.split(' ');
    const res = await api(srv.url, method, fillPath(pattern), { token: bad });
    if (res.status !== 401) failures.push(`${key}: ${res.status}`);
  }
  assert.deepEqual(failures, []);
});
