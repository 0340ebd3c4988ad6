// Authentication end to end: sign-in and sign-out, the cookie's flags, CSRF (token and Origin),
// idle and absolute expiry, throttling (per account and per address, across instances), the
// same answer for unknown users and wrong passwords, password rules, bounded input, API tokens
// (shown once, revocable, last use recorded), rehashing, signing keys, the audit trail, the
// CLI, and a scan of every table (and the server log) for any secret in clear text.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { api, psql, startServer, withDatabase } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const isProblem = (res, status) => {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  assert.equal(res.json.status, status);
};

// Every secret the tests see, to look for in the database and the log at the end.
const secrets = new Set();
const remember = (s) => { secrets.add(s); return s; };

function sessionFrom(res) {
  assert.equal(res.status, 201, res.text);
  const header = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('capledger_session='));
  assert.ok(header, 'a capledger_session cookie is set');
  const id = header.split(';')[0].slice('capledger_session='.length);
  assert.match(id, /^[A-Za-z0-9_-]{43}$/);
  remember(id);
  remember(res.json.csrf_token);
  return { header, id, cookie: `capledger_session=${id}`, csrf: res.json.csrf_token, user: res.json.user };
}

const login = (srv, username, password, headers = {}) =>
  api(srv.url, 'POST', '/api/v1/session', { body: { username, password }, headers });

// A request as a browser on our page would send it: cookie, CSRF token and Origin.
const asBrowser = (srv, s, method, path, { body, csrf = s.csrf, origin = srv.url, headers = {} } = {}) => {
  const h = { ...headers };
  if (csrf !== null) h['X-CSRF-Token'] = csrf;
  if (origin !== null) h.Origin = origin;
  return api(srv.url, method, path, { cookie: s.cookie, body, headers: h });
};

async function createUser(srv, admin, username, role, teams = []) {
  const password = remember(`${username} has a long password 9`);
  const r = await api(srv.url, 'POST', '/api/v1/users', { token: admin, body: { username, password, role, teams } });
  assert.equal(r.status, 201, r.text);
  return password;
}

let srv;
let admin; // admin API token
before(async () => {
  srv = await startServer();
  remember(srv.adminPassword);
  admin = remember(mintToken(srv, 'admin'));
  const t = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'vision' } });
  assert.equal(t.status, 201, t.text);
});
after(async () => { await srv?.stop(); });

describe('sessions', () => {
  test('sign in, use the cookie, sign out: the session ends for every holder of the cookie', async () => {
    const s = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    assert.deepEqual(Object.keys(s.user).sort(), ['id', 'role', 'teams', 'username']);
    assert.equal(s.user.username, 'admin');
    assert.equal(s.user.role, 'admin');
    const me = await api(srv.url, 'GET', '/api/v1/me', { cookie: s.cookie });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json.auth, 'session');
    assert.equal(me.json.role, 'admin');
    assert.equal(me.json.csrf_token, s.csrf, 'a reloaded page can ask for its CSRF token again');
    assert.deepEqual(me.json.signing_keys, []);
    // A second session of the same user is independent.
    const other = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    assert.notEqual(other.id, s.id);
    assert.notEqual(other.csrf, s.csrf);
    const out = await asBrowser(srv, s, 'DELETE', '/api/v1/session');
    assert.equal(out.status, 204, out.text);
    const cleared = [out.headers['set-cookie']].flat().find((c) => c.startsWith('capledger_session='));
    assert.match(cleared, /^capledger_session=;.*Max-Age=0/);
    isProblem(await api(srv.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body: { name: 'after-logout' } }), 401);
    assert.equal((await api(srv.url, 'GET', '/api/v1/me', { cookie: other.cookie })).status, 200);
    const ended = psql(`SELECT count(*) FROM user_session WHERE ended_at IS NOT NULL`, { database: srv.db });
    assert.equal(ended, '1');
  });

  test('the cookie is HttpOnly, SameSite=Strict, Path=/, bounded, and not Secure over plain HTTP', async () => {
    const s = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    const attrs = s.header.split(';').map((a) => a.trim().toLowerCase());
    assert.ok(attrs.includes('httponly'), s.header);
    assert.ok(attrs.includes('samesite=strict'), s.header);
    assert.ok(attrs.includes('path=/'), s.header);
    assert.ok(attrs.includes('max-age=43200'), s.header);
    assert.ok(!attrs.includes('secure'), 'Secure is set only when served over TLS');
    const row = psql(`SELECT round(extract(epoch FROM expires_at - created_at)) FROM user_session
                      WHERE id_sha256 = '${createHash('sha256').update(s.id).digest('hex')}'`, { database: srv.db });
    assert.equal(row, '43200', 'absolute expiry is 12 hours');
  });

  test('CSRF: cookie-authenticated unsafe requests need the token and our Origin', async () => {
    const s = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    const body = { name: 'csrf-team' };
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, csrf: null }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, csrf: s.csrf.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, csrf: 'x' }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, origin: 'http://evil.example' }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, origin: srv.url.replace(/:\d+$/, ':1') }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, origin: 'null' }), 403);
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, origin: null }), 403);
    // Another session's token does not pass.
    const other = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/teams', { body, csrf: other.csrf }), 403);
    // Nothing was written by the refused requests.
    assert.equal(psql(`SELECT count(*) FROM team WHERE name = 'csrf-team'`, { database: srv.db }), '0');
    // A Referer from our own pages stands in for a missing Origin.
    const viaReferer = await asBrowser(srv, s, 'POST', '/api/v1/teams', {
      body: { name: 'via-referer' }, origin: null, headers: { Referer: `${srv.url}/index.html` } });
    assert.equal(viaReferer.status, 201, viaReferer.text);
    const ok = await asBrowser(srv, s, 'POST', '/api/v1/teams', { body });
    assert.equal(ok.status, 201, ok.text);
    // Safe methods need neither.
    assert.equal((await api(srv.url, 'GET', '/api/v1/teams', { cookie: s.cookie })).status, 200);
    // A bearer token takes precedence over a cookie sent with it: no CSRF needed.
    const both = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, cookie: s.cookie, body: { name: 'both-creds' } });
    assert.equal(both.status, 201, both.text);
  });

  test('signing in from another site is refused; a stale cookie does not block signing in', async () => {
    isProblem(await login(srv, 'admin', srv.adminPassword, { Origin: 'https://evil.example' }), 403);
    const r = await api(srv.url, 'POST', '/api/v1/session', {
      cookie: `capledger_session=${'A'.repeat(43)}`, body: { username: 'admin', password: srv.adminPassword },
      headers: { Origin: srv.url } });
    sessionFrom(r);
    // A cookie naming no session is simply no credential.
    isProblem(await api(srv.url, 'GET', '/api/v1/me', { cookie: `capledger_session=${'A'.repeat(43)}` }), 401);
    assert.equal((await api(srv.url, 'GET', '/healthz', { cookie: 'capledger_session=garbage' })).status, 200);
  });

  test('a session past its absolute expiry is over', async () => {
    const s = sessionFrom(await login(srv, 'admin', srv.adminPassword));
    assert.equal((await api(srv.url, 'GET', '/api/v1/me', { cookie: s.cookie })).status, 200);
    const hash = createHash('sha256').update(s.id).digest('hex');
    psql(`UPDATE user_session SET expires_at = created_at + interval '1 millisecond' WHERE id_sha256 = '${hash}'`,
         { database: srv.db });
    isProblem(await api(srv.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
  });
});

test('idle expiry (CAPLEDGER_SESSION_IDLE_S): use keeps a session alive, silence ends it', async () => {
  const idle = await startServer({ env: { CAPLEDGER_SESSION_IDLE_S: '2' } });
  try {
    const s = sessionFrom(await login(idle, 'admin', idle.adminPassword));
    assert.equal(s.user.username, 'admin');
    for (let i = 0; i < 3; i++) { // 3.6 s in all, longer than the idle timeout
      await sleep(1200);
      const me = await api(idle.url, 'GET', '/api/v1/me', { cookie: s.cookie });
      assert.equal(me.status, 200, `request ${i}: ${me.text}`);
    }
    await sleep(3000);
    isProblem(await api(idle.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
  } finally {
    await idle.stop();
  }
});

describe('passwords', () => {
  test('unknown user and wrong password: the same answer, in similar time', async () => {
    await createUser(srv, admin, 'wanda', 'auditor');
    const unknown = [];
    const wrong = [];
    let a;
    let b;
    for (let i = 0; i < 3; i++) {
      let t0 = performance.now();
      a = await login(srv, 'nobody-here', 'some password 123');
      unknown.push(performance.now() - t0);
      t0 = performance.now();
      b = await login(srv, 'wanda', 'some password 123');
      wrong.push(performance.now() - t0);
    }
    isProblem(a, 401);
    isProblem(b, 401);
    assert.deepEqual(a.json, b.json);
    assert.equal(a.text, b.text);
    assert.equal(a.headers['set-cookie'], undefined);
    const median = (xs) => xs.sort((x, y) => x - y)[1];
    const [mu, mw] = [median(unknown), median(wrong)];
    assert.ok(mu > mw * 0.4 && mu < mw * 2.5, `unknown user ${mu.toFixed(1)} ms vs wrong password ${mw.toFixed(1)} ms`);
    assert.ok(mu > 20, `an unknown user still costs an argon2id verify (${mu.toFixed(1)} ms)`);
  });

  test('weak passwords are refused with the rule named', async () => {
    const cases = [
      ['short', 'must be at least 12 characters'],
      ['aaaaaaaaaaaaaaaaaaaa', 'must use at least 5 different characters'],
      ['Quentin.Long-Name', 'must not be the username'],
    ];
    for (const [password, rule] of cases) {
      const r = await api(srv.url, 'POST', '/api/v1/users', {
        token: admin, body: { username: 'quentin.long-name', password, role: 'owner' } });
      isProblem(r, 422);
      assert.deepEqual(r.json.errors, [{ pointer: '/password', message: rule }]);
    }
  });

  test('bad user fields are each named; unknown teams by index', async () => {
    const r = await api(srv.url, 'POST', '/api/v1/users', {
      token: admin,
      body: { username: '-bad name', password: 'good password 123', role: 'boss', teams: ['vision', 'nope', 7], x: 1 } });
    isProblem(r, 422);
    const pointers = r.json.errors.map((e) => e.pointer).sort();
    assert.deepEqual(pointers, ['/role', '/teams/2', '/username', '/x']);
    const r2 = await api(srv.url, 'POST', '/api/v1/users', {
      token: admin, body: { username: 'tm', password: 'good password 123', role: 'team', teams: ['vision', 'nope'] } });
    isProblem(r2, 422);
    assert.deepEqual(r2.json.errors, [{ pointer: '/teams/1', message: "no team named 'nope'" }]);
    const r3 = await api(srv.url, 'POST', '/api/v1/users', {
      token: admin, body: { username: 'tm', password: 'good password 123', role: 'team' } });
    assert.deepEqual(r3.json.errors, [{ pointer: '/teams', message: 'a team member needs at least one team' }]);
    assert.equal(psql(`SELECT count(*) FROM app_user WHERE username = 'tm'`, { database: srv.db }), '0');
    await createUser(srv, admin, 'dup', 'owner');
    isProblem(await api(srv.url, 'POST', '/api/v1/users', {
      token: admin, body: { username: 'dup', password: 'another password 1', role: 'owner' } }), 409);
  });

  test('overlong usernames and passwords are bounded: 422, never 500', async () => {
    const long = 'a'.repeat(100_000);
    for (const body of [{ username: long, password: 'x' }, { username: 'admin', password: long },
                        { username: 'admin', password: 'p'.repeat(1025) }]) {
      const r = await api(srv.url, 'POST', '/api/v1/session', { body });
      isProblem(r, 422);
      assert.ok(r.json.errors.every((e) => /must be at most \d+ bytes/.test(e.message)), r.text);
    }
    isProblem(await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'admin' } }), 422);
    isProblem(await api(srv.url, 'POST', '/api/v1/session', { body: ['admin', 'pw'] }), 422);
    isProblem(await api(srv.url, 'POST', '/api/v1/session', { body: '{"username":', headers: { 'content-type': 'application/json' } }), 400);
    isProblem(await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'a'.repeat(2 << 20) } }), 413);
    const u = await api(srv.url, 'POST', '/api/v1/users', {
      token: admin, body: { username: long, password: 'p'.repeat(1025), role: 'owner' } });
    isProblem(u, 422);
    assert.deepEqual(u.json.errors.map((e) => e.pointer).sort(), ['/password', '/username']);
  });

  test('a hash made with older parameters is upgraded at sign-in', async () => {
    await createUser(srv, admin, 'legacy', 'owner');
    // argon2id at OPSLIMIT_MIN and 8 KiB, of the password below.
    const low = '$argon2id$v=19$m=8,t=1,p=1$TBz0z0tKfYf0CbTB2A284g$WQfF+bx341v77V22ylXPd268THelDwpRG3Yyky16JkY';
    remember('low-cost legacy password 1');
    psql(`UPDATE app_user SET password_hash = '${low}' WHERE username = 'legacy'`, { database: srv.db });
    sessionFrom(await login(srv, 'legacy', 'low-cost legacy password 1'));
    const now = psql(`SELECT password_hash FROM app_user WHERE username = 'legacy'`, { database: srv.db });
    assert.notEqual(now, low);
    assert.match(now, /^\$argon2id\$v=19\$m=65536,t=2,p=1\$/);
    sessionFrom(await login(srv, 'legacy', 'low-cost legacy password 1'));
    const audit = psql(`SELECT count(*) FROM audit_event WHERE action = 'user.password_rehash'`, { database: srv.db });
    assert.equal(audit, '1');
  });
});

describe('throttling', () => {
  let thr;
  before(async () => { thr = await startServer(); });
  after(async () => { await thr?.stop(); });

  test('5 failures lock the account: 429 with Retry-After, even for the right password', async () => {
    const tok = mintToken(thr, 'admin');
    const password = await createUser(thr, tok, 'victim', 'owner');
    for (let i = 0; i < 5; i++) isProblem(await login(thr, 'victim', `wrong password ${i}`), 401);
    for (const pw of ['wrong again 12345', password]) {
      const r = await login(thr, 'victim', pw);
      isProblem(r, 429);
      const retry = Number(r.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry > 800 && retry <= 900, `Retry-After: ${r.headers['retry-after']}`);
    }
    // Case variants share the account's counter.
    isProblem(await login(thr, 'VICTIM', password), 429);
    // Another account from the same address is not locked.
    sessionFrom(await login(thr, 'admin', thr.adminPassword));
    // When the lock has passed, the right password works again.
    psql(`UPDATE login_throttle SET locked_until = now() - interval '1 second', window_start = now() - interval '1 hour'`,
         { database: thr.db });
    sessionFrom(await login(thr, 'victim', password));
  });

  test('a success resets the account counter', async () => {
    const tok = mintToken(thr, 'admin');
    const password = await createUser(thr, tok, 'carol', 'owner');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) isProblem(await login(thr, 'carol', `wrong password ${i}`), 401);
      sessionFrom(await login(thr, 'carol', password));
    }
  });

  test('the lock holds across server instances sharing the database', async () => {
    // Same database, same log key (a server refuses to extend a log signed by another key).
    const second = await startServer({ env: {
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, thr.db),
      CAPLEDGER_KEY_FILE: thr.keyFile,
    } });
    try {
      const tok = mintToken(thr, 'admin');
      const password = await createUser(thr, tok, 'dora', 'owner');
      for (let i = 0; i < 5; i++) isProblem(await login(thr, 'dora', `wrong password ${i}`), 401);
      const r = await login(second, 'dora', password);
      isProblem(r, 429);
      assert.ok(Number(r.headers['retry-after']) > 0);
    } finally {
      await second.stop();
    }
  });

  test('20 failures from one address lock it, whatever the usernames', async () => {
    psql(`DELETE FROM login_throttle`, { database: thr.db });
    for (let i = 0; i < 20; i++) isProblem(await login(thr, `sprayed-${i}`, 'password spray 1'), 401);
    const r = await login(thr, 'admin', thr.adminPassword);
    isProblem(r, 429);
    assert.ok(Number(r.headers['retry-after']) > 0);
    // Counters are kept by hash: no username or address in clear text.
    const keys = psql(`SELECT string_agg(scope || ':' || key_sha256, ',') FROM login_throttle`, { database: thr.db });
    assert.doesNotMatch(keys, /sprayed|127\.0\.0\.1/);
    assert.match(keys, /address:[0-9a-f]{64}/);
  });
});

describe('API tokens', () => {
  test('created once, listed without the secret, last use recorded, revoked → 401', async () => {
    const c = await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: { label: 'ci pipeline' } });
    assert.equal(c.status, 201, c.text);
    const token = remember(c.json.token);
    assert.match(token, /^cl_[A-Za-z0-9_-]{43}$/);
    assert.equal(c.json.user, 'admin');
    assert.equal(c.json.label, 'ci pipeline');
    const me = await api(srv.url, 'GET', '/api/v1/me', { token });
    assert.equal(me.status, 200);
    assert.equal(me.json.auth, 'token');
    assert.equal(me.json.csrf_token, undefined);
    const list = await api(srv.url, 'GET', '/api/v1/tokens?limit=500', { token: admin });
    assert.equal(list.status, 200);
    const item = list.json.items.find((t) => t.id === c.json.id);
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'expires_at', 'id', 'label', 'last_used_at', 'revoked_at', 'user']);
    assert.ok(item.last_used_at, 'last_used_at is recorded');
    assert.equal(item.revoked_at, null);
    assert.ok(!list.text.includes(token), 'the list never shows a token');
    const d = await api(srv.url, 'DELETE', `/api/v1/tokens/${c.json.id}`, { token: admin });
    assert.equal(d.status, 204, d.text);
    isProblem(await api(srv.url, 'GET', '/api/v1/me', { token }), 401);
    const after = (await api(srv.url, 'GET', '/api/v1/tokens?limit=500', { token: admin })).json.items.find((t) => t.id === c.json.id);
    assert.ok(after.revoked_at);
  });

  test('non-admins manage only their own tokens; admins anyone\'s', async () => {
    const pw = await createUser(srv, admin, 'tomas', 'team', ['vision']);
    const s = sessionFrom(await login(srv, 'tomas', pw));
    const own = await asBrowser(srv, s, 'POST', '/api/v1/tokens', { body: { label: 'mine' } });
    assert.equal(own.status, 201, own.text);
    remember(own.json.token);
    assert.equal(own.json.user, 'tomas');
    isProblem(await asBrowser(srv, s, 'POST', '/api/v1/tokens', { body: { user: 'admin' } }), 403);
    const forTomas = await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: { user: 'tomas', label: 'by admin' } });
    assert.equal(forTomas.status, 201, forTomas.text);
    remember(forTomas.json.token);
    isProblem(await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: { user: 'no-such-user' } }), 422);
    const listed = await api(srv.url, 'GET', '/api/v1/tokens', { cookie: s.cookie });
    assert.deepEqual(listed.json.items.map((t) => t.user), ['tomas', 'tomas']);
    // Someone else's token: 404, as if it did not exist.
    const adminOwn = await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: {} });
    remember(adminOwn.json.token);
    isProblem(await asBrowser(srv, s, 'DELETE', `/api/v1/tokens/${adminOwn.json.id}`), 404);
    isProblem(await asBrowser(srv, s, 'DELETE', '/api/v1/tokens/not-a-uuid'), 404);
    assert.equal((await api(srv.url, 'GET', '/api/v1/me', { token: adminOwn.json.token })).status, 200);
    assert.equal((await asBrowser(srv, s, 'DELETE', `/api/v1/tokens/${own.json.id}`)).status, 204);
    assert.equal((await api(srv.url, 'DELETE', `/api/v1/tokens/${forTomas.json.id}`, { token: admin })).status, 204);
    isProblem(await api(srv.url, 'GET', '/api/v1/me', { token: forTomas.json.token }), 401);
  });
});

describe('signing keys', () => {
  const rawKey = () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    return Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
  };

  test('owners register Ed25519 keys; key_id is the SHA-256 of the raw key; revoked keys stay', async () => {
    const pw = await createUser(srv, admin, 'owen', 'owner');
    const s = sessionFrom(await login(srv, 'owen', pw));
    const raw = rawKey();
    const put = await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key: raw.toString('base64') } });
    assert.equal(put.status, 201, put.text);
    const keyId = createHash('sha256').update(raw).digest('hex');
    assert.equal(put.json.key_id, keyId);
    assert.equal(put.json.public_key, raw.toString('base64'));
    const again = await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key: raw.toString('base64') } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.key_id, keyId);
    const second = await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key: rawKey().toString('base64') } });
    assert.equal(second.status, 201);
    const list = await api(srv.url, 'GET', '/api/v1/me/signing-keys', { cookie: s.cookie });
    assert.equal(list.json.items.length, 2);
    const me = await api(srv.url, 'GET', '/api/v1/me', { cookie: s.cookie });
    assert.equal(me.json.signing_keys.length, 2);
    // Another owner cannot claim the key.
    const pw2 = await createUser(srv, admin, 'oona', 'owner');
    const s2 = sessionFrom(await login(srv, 'oona', pw2));
    isProblem(await asBrowser(srv, s2, 'PUT', '/api/v1/me/signing-key', { body: { public_key: raw.toString('base64') } }), 409);
    isProblem(await asBrowser(srv, s2, 'DELETE', `/api/v1/me/signing-keys/${keyId}`), 404);
    // Revoke: the key stays, with revoked_at; registering it again is refused.
    const del = await asBrowser(srv, s, 'DELETE', `/api/v1/me/signing-keys/${keyId}`);
    assert.equal(del.status, 200, del.text);
    assert.ok(del.json.revoked_at);
    const del2 = await asBrowser(srv, s, 'DELETE', `/api/v1/me/signing-keys/${keyId}`);
    assert.equal(del2.json.revoked_at, del.json.revoked_at, 'revoking twice keeps the first time');
    isProblem(await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key: raw.toString('base64') } }), 409);
    const row = psql(`SELECT u.username || ' ' || (k.revoked_at IS NOT NULL) FROM signing_key k JOIN app_user u ON u.id = k.user_id
                      WHERE k.key_id = '${keyId}'`, { database: srv.db });
    assert.equal(row, 'owen true');
    // The database refuses to delete or alter a key.
    assert.throws(() => psql(`DELETE FROM signing_key WHERE key_id = '${keyId}'`, { database: srv.db }), /never deleted/);
    assert.throws(() => psql(`UPDATE signing_key SET revoked_at = NULL WHERE key_id = '${keyId}'`, { database: srv.db }), /only be revoked/);
  });

  test('keys that are not 32 bytes, not base64, or small-order points are refused', async () => {
    const pw = await createUser(srv, admin, 'otto', 'owner');
    const s = sessionFrom(await login(srv, 'otto', pw));
    const identity = Buffer.alloc(32);
    identity[0] = 1; // the neutral element: order 1
    const orderFour = Buffer.alloc(32); // y = 0: a point of order 4
    const bad = [
      rawKey().subarray(0, 31).toString('base64'),
      Buffer.concat([rawKey(), Buffer.from([0])]).toString('base64'),
      rawKey().toString('base64url'),
      rawKey().toString('base64').replace(/=$/, ''),
      'not base64 at all!',
      identity.toString('base64'),
      orderFour.toString('base64'),
      Buffer.alloc(32, 0xff).toString('base64'), // not canonical
    ];
    for (const public_key of bad) {
      const r = await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key } });
      isProblem(r, 422);
      assert.equal(r.json.errors[0].pointer, '/public_key', public_key);
    }
    isProblem(await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { public_key: 5 } }), 422);
    isProblem(await asBrowser(srv, s, 'PUT', '/api/v1/me/signing-key', { body: { key: 'x' } }), 422);
    assert.equal(psql(`SELECT count(*) FROM signing_key k JOIN app_user u ON u.id = k.user_id WHERE u.username = 'otto'`,
                      { database: srv.db }), '0');
  });
});

test('the audit trail records sign-ins, tokens and keys; auditors read it page by page', async () => {
  const pw = await createUser(srv, admin, 'aude', 'auditor');
  const s = sessionFrom(await login(srv, 'aude', pw));
  const seen = [];
  let cursor = null;
  let pages = 0;
  do {
    const q = `/api/v1/audit/events?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r = await api(srv.url, 'GET', q, { cookie: s.cookie });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.items.length <= 7);
    seen.push(...r.json.items);
    cursor = r.json.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  assert.ok(pages > 1, 'more than one page');
  const ids = seen.map((e) => Number(e.id));
  assert.deepEqual(ids, [...ids].sort((x, y) => y - x), 'newest first');
  assert.equal(new Set(ids).size, ids.length, 'no event twice');
  const actions = new Set(seen.map((e) => e.action));
  for (const a of ['session.create', 'session.end', 'user.create', 'token.create', 'token.revoke',
                   'signing_key.add', 'signing_key.revoke', 'user.password_rehash']) {
    assert.ok(actions.has(a), `audit has ${a}`);
  }
  const signIn = seen.find((e) => e.action === 'session.create' && e.actor.name === 'aude');
  assert.ok(signIn && signIn.request_id && signIn.actor.user_id);
  isProblem(await api(srv.url, 'GET', '/api/v1/audit/events?cursor=bm90LWEtbnVtYmVy', { cookie: s.cookie }), 422);
});

test('capledger user add reads the password from standard input and names a broken rule', async () => {
  const weak = cli(srv, ['user', 'add', 'cli-user', '--role', 'team', '--team', 'vision'], { input: 'short\n' });
  assert.equal(weak.status, 1);
  assert.match(weak.stderr, /must be at least 12 characters/);
  const noTeam = cli(srv, ['user', 'add', 'cli-user', '--role', 'team'], { input: 'long enough password 1\n' });
  assert.equal(noTeam.status, 2);
  const badRole = cli(srv, ['user', 'add', 'cli-user', '--role', 'boss'], { input: 'long enough password 1\n' });
  assert.equal(badRole.status, 2);
  const password = remember('cli user password 42');
  const ok = cli(srv, ['user', 'add', 'cli-user', '--role', 'team', '--team', 'vision'], { input: `${password}\n` });
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).username, 'cli-user');
  assert.deepEqual(JSON.parse(ok.stdout).teams, ['vision']);
  const s = sessionFrom(await login(srv, 'cli-user', password));
  assert.deepEqual(s.user.teams, ['vision']);
  assert.equal(s.user.role, 'team');
  const dup = cli(srv, ['user', 'add', 'cli-user', '--role', 'owner'], { input: `${password}\n` });
  assert.equal(dup.status, 1);
  assert.match(dup.stderr, /already exists/);
});

// Last: every secret the tests saw (passwords, tokens, session ids, CSRF tokens) is looked for
// in every column of every table — each row as text — and in the server's log.
test('no password, token or session id is stored or logged in clear text', async () => {
  assert.ok(secrets.size > 20, `${secrets.size} secrets collected`);
  const tables = psql(`SELECT string_agg(quote_ident(table_name), ' ') FROM information_schema.tables
                       WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`, { database: srv.db }).split(' ');
  for (const t of ['app_user', 'api_token', 'user_session', 'audit_event', 'login_throttle', 'signing_key']) {
    assert.ok(tables.includes(t), `table ${t} scanned`);
  }
  const leaks = [];
  for (const t of tables) {
    const dump = psql(`SELECT coalesce(string_agg(x::text, E'\\n'), '') FROM ${t} x`, { database: srv.db });
    if (t === 'app_user') assert.ok(dump.includes('cli-user'), 'the scan sees what the table holds');
    for (const s of secrets) if (dump.includes(s)) leaks.push(`${t} holds ${s.slice(0, 6)}…`);
  }
  const log = srv.stderrLines().join('\n');
  for (const s of secrets) if (log.includes(s)) leaks.push(`the server log holds ${s.slice(0, 6)}…`);
  assert.deepEqual(leaks, []);
  // What is stored instead: argon2id strings and SHA-256 hex.
  assert.equal(psql(`SELECT count(*) FROM app_user WHERE password_hash NOT LIKE '$argon2id$%'`, { database: srv.db }), '0');
  assert.equal(psql(`SELECT count(*) FROM api_token WHERE token_sha256 !~ '^[0-9a-f]{64}$'`, { database: srv.db }), '0');
  assert.equal(psql(`SELECT count(*) FROM user_session WHERE id_sha256 !~ '^[0-9a-f]{64}$'`, { database: srv.db }), '0');
});
