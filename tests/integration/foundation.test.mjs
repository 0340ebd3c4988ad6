// The foundation through every layer: ops endpoints, the error contract (400/404/405/413/415/
// 422 as problem+json), security headers, request ids, access log, metrics, teams with
// pagination, static files, migrations (checksums, concurrency) and graceful shutdown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, projectDir, psql, startServer, withDatabase } from './lib/harness.mjs';
import { bin, cli, mintToken } from './lib/cli.mjs';

let srv;
let admin;
before(async () => {
  srv = await startServer();
  admin = mintToken(srv, 'admin');
});
after(async () => { await srv?.stop(); });

const isProblem = (res, status) => {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  assert.equal(res.json.status, status);
  assert.ok(res.json.type && res.json.title, 'problem has type and title');
};

test('healthz and readyz answer, with security headers and a request id', async () => {
  const h = await api(srv.url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
  assert.equal(h.status, 200);
  assert.deepEqual(h.json, { status: 'ok' });
  assert.equal(h.headers['x-request-id'], 'abc-123');
  assert.match(h.headers['content-security-policy'], /frame-ancestors 'none'/);
  assert.match(h.headers['content-security-policy'], /default-src 'none'/);
  assert.equal(h.headers['x-content-type-options'], 'nosniff');
  const r = await api(srv.url, 'GET', '/readyz');
  assert.equal(r.status, 200);
  assert.match((await api(srv.url, 'GET', '/healthz')).headers['x-request-id'], /^[0-9a-f]{32}$/);
});

test('a hostile request id is replaced, not echoed', async () => {
  const h = await api(srv.url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'a"b\\c' } });
  assert.match(h.headers['x-request-id'], /^[0-9a-f]{32}$/);
});

test('unknown routes are 404 and wrong methods 405 with Allow, as problem+json', async () => {
  isProblem(await api(srv.url, 'GET', '/api/v1/nothing-here'), 404);
  const r = await api(srv.url, 'DELETE', '/api/v1/teams', { token: admin });
  isProblem(r, 405);
  assert.match(r.headers.allow, /GET/);
  assert.match(r.headers.allow, /POST/);
});

test('teams: create, duplicate, list, get', async () => {
  const c = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'vision' } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json.name, 'vision');
  assert.match(c.json.id, /^[0-9a-f-]{36}$/);
  isProblem(await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'vision' } }), 409);
  const g = await api(srv.url, 'GET', `/api/v1/teams/${c.json.id}`, { token: admin });
  assert.equal(g.status, 200);
  assert.equal(g.json.name, 'vision');
  isProblem(await api(srv.url, 'GET', '/api/v1/teams/00000000-0000-0000-0000-000000000000', { token: admin }), 404);
  // The write is in the audit trail, with the actor and the request id.
  const audit = psql(`SELECT actor_name || ' ' || action FROM audit_event WHERE target_id = '${c.json.id}'`,
                     { database: srv.db });
  assert.equal(audit, 'admin team.create');
});

test('teams paginate with an opaque cursor', async () => {
  for (const n of ['p-a', 'p-b', 'p-c', 'p-d', 'p-e']) {
    const r = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: n } });
    assert.equal(r.status, 201);
  }
  const seen = [];
  let cursor = null;
  let pages = 0;
  do {
    const q = `/api/v1/teams?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r = await api(srv.url, 'GET', q, { token: admin });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.items.length <= 2);
    seen.push(...r.json.items.map((t) => t.name));
    cursor = r.json.next_cursor;
    pages++;
  } while (cursor && pages < 20);
  assert.deepEqual(seen, [...seen].sort());
  assert.equal(new Set(seen).size, seen.length, 'no team twice');
  for (const n of ['p-a', 'p-b', 'p-c', 'p-d', 'p-e']) assert.ok(seen.includes(n));
  // A refused page parameter is named like any query parameter (the pointer was "" before).
  const named = async (query, pointer, message) => {
    const r = await api(srv.url, 'GET', `/api/v1/teams?${query}`, { token: admin });
    isProblem(r, 422);
    assert.deepEqual(r.json.errors.map((e) => [e.pointer, e.message]), [[pointer, message]], query);
  };
  await named('cursor=!!!', '?cursor', 'query parameter cursor is not a cursor this server issued');
  // A cursor that decodes but that the database cannot compare (the attack pass's zzzz) too.
  await named('cursor=zzzz', '?cursor', 'query parameter cursor is not a cursor of this list');
  // A (created_at, id) list takes the time only as the server writes it: "now" or "infinity"
  // would be read by PostgreSQL as times of its own (the second attack pass: 200 with a page).
  const u = '00000000-0000-4000-8000-000000000000';
  for (const at of ['now', 'infinity', '-infinity', 'epoch', 'yesterday', 'J2451187', '2020-01-01', '2020-01-01 PST',
    '2026-12-05T07:39:03+16:00', '2026-12-05T07:39:03-23:59']) { // offsets PostgreSQL refuses (was a 500)
    const cursor = Buffer.from(`${at}|${u}`).toString('base64url');
    const r = await api(srv.url, 'GET', `/api/v1/workloads?cursor=${cursor}`, { token: admin });
    isProblem(r, 422);
    assert.deepEqual(r.json.errors.map((e) => e.pointer), ['?cursor'], at);
  }
  const fine = Buffer.from(`2020-01-01T00:00:00.123456+00:00|${u}`).toString('base64url');
  assert.equal((await api(srv.url, 'GET', `/api/v1/workloads?cursor=${fine}`, { token: admin })).status, 200);
  for (const limit of ['0', '501', 'x', '3.0', '-1']) {
    await named(`limit=${limit}`, '?limit', 'query parameter limit must be an integer from 1 to 500');
  }
});

test('bad input: 400 malformed, 415 wrong type, 413 too large, 422 with JSON Pointers', async () => {
  isProblem(await api(srv.url, 'POST', '/api/v1/teams', {
    token: admin, body: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
  isProblem(await api(srv.url, 'POST', '/api/v1/teams', {
    token: admin, body: '{"name":"a","name":"b"}', headers: { 'content-type': 'application/json' } }), 400);
  isProblem(await api(srv.url, 'POST', '/api/v1/teams', {
    token: admin, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
  const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
  isProblem(await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: big,
    headers: { 'content-type': 'application/json' } }), 413);
  const inv = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'a/b', colour: 'red' } });
  isProblem(inv, 422);
  const pointers = inv.json.errors.map((e) => e.pointer).sort();
  assert.deepEqual(pointers, ['/colour', '/name']);
  const notObject = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: [1, 2] });
  isProblem(notObject, 422);
  // Nothing half-written: none of the refused names exists.
  const count = psql(`SELECT count(*) FROM team WHERE name IN ('a/b', 'x')`, { database: srv.db });
  assert.equal(count, '0');
});

test('paths and queries that are not UTF-8 text are 400, never a database error', async () => {
  isProblem(await api(srv.url, 'GET', '/api/v1/teams?cursor=%ff', { token: admin }), 400);
  isProblem(await api(srv.url, 'GET', '/api/v1/teams/%ff%fe', { token: admin }), 400);
  isProblem(await api(srv.url, 'GET', '/api/v1/teams?limit=1%0a', { token: admin }), 400);
  isProblem(await api(srv.url, 'GET', '/api/v1/workloads?team=%c3%28', { token: admin }), 400);
  assert.equal((await api(srv.url, 'GET', '/api/v1/teams?cursor=', { token: admin })).status, 200);
});

test('credentials: none → 401, malformed or unknown bearer → 401, wrong role → 403', async () => {
  isProblem(await api(srv.url, 'GET', '/api/v1/teams'), 401);
  isProblem(await api(srv.url, 'GET', '/api/v1/teams', { headers: { authorization: 'Basic Zm9vOmJhcg==' } }), 401);
  isProblem(await api(srv.url, 'GET', '/api/v1/teams', { token: 'cl_' + 'A'.repeat(43) }), 401);
  isProblem(await api(srv.url, 'GET', '/api/v1/teams', { token: 'not-a-token' }), 401);
});

test('metrics count requests by route and status; the access log is JSON lines without secrets', async () => {
  await api(srv.url, 'GET', '/api/v1/teams', { token: admin, headers: { 'X-Request-Id': 'metrics-probe-1' } });
  // A request's access line and its count are written once its reply has been sent: the client
  // may see the reply (and send its next request) first. Each is allowed 3 s to appear.
  const within = async (fn) => {
    for (const end = Date.now() + 3000; ;) {
      const v = await fn();
      if (v.done || Date.now() > end) return v;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const { lines, access } = await within(() => {
    const lines = srv.stderrLines();
    const access = lines.map((l) => { try { return JSON.parse(l); } catch { return null; } })
      .filter((l) => l && l.request_id === 'metrics-probe-1');
    return { lines, access, done: access.length > 0 };
  });
  const counted = /capledger_http_requests_total\{method="GET",route="\/api\/v1\/teams",status="200"\} \d+/;
  const { m } = await within(async () => {
    const m = await api(srv.url, 'GET', '/metrics');
    return { m, done: counted.test(m.text) };
  });
  assert.equal(m.status, 200);
  assert.match(m.text, counted);
  assert.match(m.text, /capledger_http_request_duration_seconds_bucket\{method="GET",route="\/api\/v1\/teams",le="\+Inf"\} \d+/);
  assert.match(m.text, /capledger_db_pool_connections\{state="idle"\} \d+/);
  assert.match(m.text, /capledger_db_errors_total \d+/);
  assert.equal(access.length, 1);
  assert.equal(access[0].route, '/api/v1/teams');
  assert.equal(access[0].status, 200);
  assert.equal(access[0].actor, 'admin');
  assert.equal(typeof access[0].duration_ms, 'number');
  for (const l of lines) {
    assert.ok(!l.includes(admin), 'a token appears in the log');
    assert.ok(!l.includes(srv.adminPassword), 'the admin password appears in the log');
  }
});

test('static files: index, no traversal, no listing, API paths never fall through', async () => {
  const idx = await api(srv.url, 'GET', '/');
  assert.equal(idx.status, 200);
  assert.match(idx.headers['content-type'], /text\/html/);
  isProblem(await api(srv.url, 'GET', '/../../etc/passwd'), 404);
  isProblem(await api(srv.url, 'GET', '/%2e%2e/%2e%2e/etc/passwd'), 404);
  const dir = await api(srv.url, 'GET', '/js/');
  assert.notEqual(dir.status, 200);
  isProblem(await api(srv.url, 'GET', '/api/v1/index.html'), 404);
});

test('migrations refuse a changed applied file and are safe to run concurrently', async () => {
  const db = `t_mig_${process.pid}`;
  psql(`CREATE DATABASE ${db}`);
  try {
    const url = withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, db);
    const run = (env) => new Promise((resolve) => {
      const p = spawn(bin, ['migrate'], { cwd: projectDir, env: { ...process.env, CAPLEDGER_DATABASE_URL: url, ...env } });
      let err = '';
      p.stderr.on('data', (d) => { err += d; });
      p.on('exit', (code) => resolve({ code, err }));
    });
    const [a, b] = await Promise.all([run({}), run({})]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const files = fs.readdirSync(path.join(projectDir, 'db/migrations')).filter((f) => /^\d{4}_.*\.sql$/.test(f));
    assert.equal(psql('SELECT count(*) FROM schema_migrations', { database: db }), String(files.length));
    // A copy of the migrations with the first file changed must be refused.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-mig-'));
    for (const f of files) fs.copyFileSync(path.join(projectDir, 'db/migrations', f), path.join(dir, f));
    fs.appendFileSync(path.join(dir, files[0]), '\n-- edited after it was applied\n');
    const changed = await run({ CAPLEDGER_MIGRATIONS_DIR: dir });
    assert.notEqual(changed.code, 0);
    assert.match(changed.err, new RegExp(`${files[0]} was changed after it was applied`));
    fs.rmSync(dir, { recursive: true, force: true });

    // Two files with one number are refused before anything is applied, naming both.
    const dup = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-mig-'));
    for (const f of files) fs.copyFileSync(path.join(projectDir, 'db/migrations', f), path.join(dup, f));
    fs.writeFileSync(path.join(dup, '0001_again.sql'), 'CREATE TABLE must_not_exist (x int);\n');
    const twice = await run({ CAPLEDGER_MIGRATIONS_DIR: dup });
    assert.notEqual(twice.code, 0);
    assert.match(twice.err, /0001_again\.sql.*0001_foundation\.sql|0001_foundation\.sql.*0001_again\.sql/);
    fs.rmSync(dup, { recursive: true, force: true });
    assert.equal(psql("SELECT count(*) FROM pg_tables WHERE tablename = 'must_not_exist'", { database: db }), '0');

    // A database migrated before 0040_telemetry_once.sql became 0039_telemetry_once.sql (two
    // files were numbered 0040) keeps its history: the record is renamed, nothing re-applied.
    psql("UPDATE schema_migrations SET name = '0040_telemetry_once.sql' WHERE name = '0039_telemetry_once.sql'", { database: db });
    const again = await run({});
    assert.equal(again.code, 0, again.err);
    assert.doesNotMatch(again.err, /migration applied/);
    assert.equal(psql("SELECT count(*) FROM schema_migrations WHERE name = '0039_telemetry_once.sql'", { database: db }), '1');
    assert.equal(psql('SELECT count(*) FROM schema_migrations', { database: db }), String(files.length));
  } finally {
    psql(`DROP DATABASE IF EXISTS ${db}`);
  }
});

test('a command run outside the project finds db/migrations beside its binary', () => {
  // As an operator would: `~/capledger/build/capledger team add …` from another directory. The
  // default (relative) paths resolve from the binary's project (build/.. ), not from the cwd.
  const db = `t_cwd_${process.pid}`;
  psql(`CREATE DATABASE ${db}`);
  try {
    const url = withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, db);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAPLEDGER_')));
    const r = spawnSync(path.resolve(bin), ['team', 'add', 'elsewhere'], {
      cwd: os.tmpdir(), encoding: 'utf8', env: { ...env, CAPLEDGER_DATABASE_URL: url, CAPLEDGER_VAR_DIR: '/nonexistent' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /"name":"elsewhere"/);
    // A path set in the environment is taken as given, even when it does not exist.
    const set = spawnSync(path.resolve(bin), ['migrate'], {
      cwd: os.tmpdir(), encoding: 'utf8',
      env: { ...env, CAPLEDGER_DATABASE_URL: url, CAPLEDGER_VAR_DIR: '/nonexistent', CAPLEDGER_MIGRATIONS_DIR: 'db/migrations' },
    });
    assert.notEqual(set.status, 0);
    assert.match(set.stderr, /cannot open migrations directory db\/migrations/);
  } finally {
    psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  }
});

test('SIGTERM stops the server cleanly, and at once', async () => {
  const other = await startServer();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const began = Date.now();
  const status = await other.stop();
  const took = Date.now() - began;
  // Exit code 0 and no signal: it drained and returned from main (a SIGKILL after the stop
  // timeout would show as signal 'SIGKILL').
  assert.deepEqual(status, { code: 0, signal: null });
  // An idle server stops in tens of milliseconds (the database drop included). It took 2 to 4 s
  // while Civetweb's listener looked at its stop flag every 2 s and the background threads
  // slept a second at a time: about 150 stops per build made that minutes of the suite.
  assert.ok(took < 1000, `the stop took ${took} ms`);
});

test('SIGTERM lets a request in flight finish, and answers new ones 503 while it does', async () => {
  // The attack pass: stopping at once dropped the replies of requests in flight (logged as 200,
  // never received), and a body half sent when the signal came was cut short.
  const other = await startServer();
  const token = mintToken(other, 'admin');
  const net = await import('node:net');
  const body = JSON.stringify({ name: 'drained-team' });
  const sock = net.connect(other.port, '127.0.0.1');
  await new Promise((resolve) => sock.once('connect', resolve));
  let reply = '';
  sock.on('data', (d) => { reply += d; });
  const ended = new Promise((resolve) => sock.once('close', resolve));
  sock.write(`POST /api/v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
             `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` +
             body.slice(0, 5));
  await new Promise((resolve) => setTimeout(resolve, 300)); // the handler is reading the body
  process.kill(other.pid, 'SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const late = await api(other.url, 'GET', '/healthz').catch((e) => ({ status: 0, error: e.message }));
  sock.write(body.slice(5));
  await ended;
  assert.match(reply, /^HTTP\/1\.1 201 /, `the request in flight was answered: ${JSON.stringify(reply.slice(0, 200))}`);
  assert.equal(late.status, 503, 'a request that came after the signal is refused, with a reply');
  assert.equal(late.headers?.['retry-after'], '1');
  assert.deepEqual(await other.stop(), { code: 0, signal: null });
});

test('a stop bounds a request stuck on the database: its statement is cancelled, nothing stored', async () => {
  // Third attack pass: a POST /teams waiting on a lock held 25 s kept the stop going until the
  // lock went (24 s), then committed its team with no reply to its client.
  const other = await startServer();
  const token = mintToken(other, 'admin');
  const conninfo = withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, other.db);
  const holder = spawn(path.join(process.env.CAPLEDGER_TEST_PGBIN, 'psql'), ['-X', '-q', '-d', conninfo, '-c',
    'BEGIN; LOCK TABLE team IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30); COMMIT;'], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stuck = api(other.url, 'POST', '/api/v1/teams', { token, body: { name: 'stuck-team' }, timeoutMs: 30_000 })
      .catch((e) => ({ status: 0, error: e.message }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const began = Date.now();
    process.kill(other.pid, 'SIGTERM');
    const reply = await stuck;
    assert.ok(reply.status >= 500, `the stuck request was answered: ${JSON.stringify(reply).slice(0, 300)}`);
    psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()", { database: other.db });
    assert.equal(psql("SELECT count(*) FROM team WHERE name = 'stuck-team'", { database: other.db }), '0', 'nothing stored');
    const status = await other.stop();
    const took = Date.now() - began;
    assert.deepEqual(status, { code: 0, signal: null });
    assert.ok(took < 14_000, `the stop took ${took} ms (10 s of waiting, then the statement cancelled)`);
  } finally {
    holder.kill();
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
});

test('the CLI has --version and --help', () => {
  const v = cli(srv, ['--version']);
  assert.equal(v.status, 0);
  assert.match(v.stdout, /^capledger \d+\.\d+\.\d+/);
  const h = cli(srv, ['--help']);
  assert.equal(h.status, 0);
  for (const c of ['serve', 'migrate', 'token']) assert.match(h.stdout, new RegExp(`\\b${c}\\b`));
  assert.equal(cli(srv, ['no-such-command']).status, 2);
});
