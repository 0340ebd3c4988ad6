// Accounts that can be closed (issue 25, item 4) and step-up before enrolling a signing key
// (item 5): `capledger user disable|enable|reset-password` and POST /users/{name}/disable,
// /enable, /password; a disabled user's sessions and tokens end at once on the instance that
// disabled it and within the token cache's second on every other one, and their signing keys
// are revoked as key events of the log; admins revoke any user's key (a logged key event);
// enrolling a key needs the password again unless the browser signed in moments ago.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer, withDatabase } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';
import { addOwner, addUser, newKeyPair, record, postDecision } from './ledger.lib.mjs';

const isProblem = (res, status, type) => {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  if (type) assert.equal(res.json.type, `https://capledger.dev/problems/${type}`);
};

const login = (srv, username, password) =>
  api(srv.url, 'POST', '/api/v1/session', { body: { username, password } });

function sessionOf(res) {
  assert.equal(res.status, 201, res.text);
  const header = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('capledger_session='));
  return { cookie: header.split(';')[0], csrf: res.json.csrf_token };
}

const asBrowser = (srv, s, method, path, body) =>
  api(srv.url, method, path, { cookie: s.cookie, body, headers: { 'X-CSRF-Token': s.csrf, Origin: srv.url } });

let a, b, admin, sql;
before(async () => {
  a = await startServer();
  // A second instance of the same deployment: same database, same log key.
  b = await startServer({ env: {
    CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, a.db),
    CAPLEDGER_KEY_FILE: a.keyFile,
  } });
  admin = mintToken(a, 'admin');
  sql = (q) => psql(q, { database: a.db }).trim();
});
after(async () => { await b?.stop(); await a?.stop(); });

const keyEvents = (keyId) => sql(`SELECT coalesce(string_agg(kind, ',' ORDER BY leaf_index), '') FROM log_key_event WHERE key_id = '${keyId}'`);

describe('disabling a user', () => {
  test('ends its tokens and sessions at once here and within 1 s on the other instance; revokes its keys in the log', async () => {
    const owner = await addOwner(a, 'dora');
    const s = sessionOf(await login(a, 'dora', owner.password));
    // Cached on both instances, the session live.
    for (const srv of [a, b]) assert.equal((await api(srv.url, 'GET', '/api/v1/me', { token: owner.token })).status, 200);
    assert.equal((await api(a.url, 'GET', '/api/v1/me', { cookie: s.cookie })).status, 200);
    assert.equal(keyEvents(owner.keyId), 'enrol');

    const off = await api(a.url, 'POST', '/api/v1/users/dora/disable', { token: admin });
    assert.equal(off.status, 200, off.text);
    const disabledAt = Date.now();
    assert.equal(off.json.username, 'dora');
    assert.ok(off.json.disabled_at);
    assert.equal(off.json.tokens_revoked, 1);
    assert.equal(off.json.sessions_ended, 1);
    assert.deepEqual(off.json.signing_keys_revoked, [owner.keyId]);
    assert.equal(off.json.signing_keys_logged, true);

    isProblem(await api(a.url, 'GET', '/api/v1/me', { token: owner.token }), 401);
    isProblem(await api(a.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
    isProblem(await api(b.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
    const seen = [];
    while (Date.now() - disabledAt < 1600) {
      const sentAt = Date.now();
      const r = await api(b.url, 'GET', '/api/v1/me', { token: owner.token });
      seen.push({ after: sentAt - disabledAt, status: r.status });
    }
    const late = seen.filter((x) => x.after >= 1000);
    assert.ok(late.length > 0 && late.every((x) => x.status === 401), JSON.stringify(seen));
    // The key's revocation is a key event of the log, and the key signs nothing more.
    assert.equal(keyEvents(owner.keyId), 'enrol,revoke');
    assert.equal(sql(`SELECT revoked_at IS NOT NULL FROM signing_key WHERE key_id = '${owner.keyId}'`), 't');
    // Signing in is refused like a wrong password; so are new tokens for the user.
    isProblem(await login(a, 'dora', owner.password), 401);
    const tok = await api(a.url, 'POST', '/api/v1/tokens', { token: admin, body: { user: 'dora' } });
    isProblem(tok, 422);
    assert.equal(cli(a, ['token', 'create', 'dora']).status === 0, false);
    // Audited.
    assert.equal(sql(`SELECT count(*) FROM audit_event WHERE action = 'user.disable'`), '1');
    // Disabling twice keeps the first time.
    const again = await api(a.url, 'POST', '/api/v1/users/dora/disable', { token: admin });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.disabled_at, off.json.disabled_at);
    assert.equal(again.json.tokens_revoked, 0);

    // Enabled again: signs in, but what the disable revoked stays revoked.
    const on = await api(a.url, 'POST', '/api/v1/users/dora/enable', { token: admin });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.disabled_at, null);
    assert.equal((await login(a, 'dora', owner.password)).status, 201);
    isProblem(await api(a.url, 'GET', '/api/v1/me', { token: owner.token }), 401);
    isProblem(await api(b.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
    assert.equal(keyEvents(owner.keyId), 'enrol,revoke');
  });

  test('a disabled owner cannot sign with a token a racing request still held', async () => {
    const owner = await addOwner(a, 'rory');
    const off = await api(a.url, 'POST', '/api/v1/users/rory/disable', { token: admin });
    assert.equal(off.status, 200, off.text);
    const before = sql('SELECT size FROM log_head');
    const rec = record(owner, '00000000-0000-4000-8000-000000000000', { supersedes: null });
    const r = await postDecision(b.url, owner, rec);
    assert.ok(r.status === 401 || r.status === 422, r.text);
    assert.equal(sql('SELECT size FROM log_head'), before);
  });

  test('requests racing the disable on the other instance leave no live token, session or key behind', async () => {
    const u = addUser(a, 'rita', 'owner');
    const s = sessionOf(await login(b, 'rita', u.password));
    // Token creations, sign-ins and key enrolments (a fresh session: no password hashed) sent
    // to the other instance while the admin disables the user on the first.
    const racing = [];
    for (let i = 0; i < 30; i++) {
      racing.push(api(b.url, 'POST', '/api/v1/tokens', { token: u.token, body: { label: `race ${i}` } }));
      racing.push(asBrowser(b, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64 }));
      if (i % 10 === 0) racing.push(login(b, 'rita', u.password));
    }
    await new Promise((r) => setTimeout(r, 20));
    const off = await api(a.url, 'POST', '/api/v1/users/rita/disable', { token: admin });
    assert.equal(off.status, 200, off.text);
    const answers = await Promise.all(racing);
    assert.ok(answers.every((r) => r.status < 500), JSON.stringify(answers.filter((r) => r.status >= 500).map((r) => r.text)));
    const id = "(SELECT id FROM app_user WHERE username = 'rita')";
    assert.equal(sql(`SELECT count(*) FROM api_token WHERE user_id = ${id} AND revoked_at IS NULL`), '0');
    assert.equal(sql(`SELECT count(*) FROM user_session WHERE user_id = ${id} AND ended_at IS NULL`), '0');
    assert.equal(sql(`SELECT count(*) FROM signing_key WHERE user_id = ${id} AND revoked_at IS NULL`), '0');
    // Every key that was enrolled has its revocation in the log.
    assert.equal(sql(`SELECT count(*) FROM signing_key k WHERE k.user_id = ${id} AND NOT EXISTS
                      (SELECT 1 FROM log_key_event e WHERE e.key_id = k.key_id AND e.kind = 'revoke')`), '0');
    assert.equal((await api(a.url, 'GET', '/readyz')).status, 200);
  });

  test('a disabled admin\'s token, still cached on the other instance, mints nothing that outlives it', async () => {
    // The token cache lets a disabled user's token act on another instance for up to a second;
    // what it writes then must not be a credential: an attack pass minted 144 tokens for
    // another user with a disabled admin's token, which stayed valid after the disable.
    addUser(a, 'adele', 'admin');
    const adele = mintToken(a, 'adele');
    const victim = addUser(a, 'vera', 'owner');
    assert.equal((await api(b.url, 'GET', '/api/v1/me', { token: adele })).status, 200); // cached on b
    assert.equal((await api(a.url, 'POST', '/api/v1/users/adele/disable', { token: admin })).status, 200);
    const minted = await api(b.url, 'POST', '/api/v1/tokens', { token: adele, body: { label: 'after', user: 'vera' } });
    const made = await api(b.url, 'POST', '/api/v1/users', { token: adele, body: { username: 'mallet', password: 'a long enough password', role: 'admin' } });
    const reset = await api(b.url, 'POST', '/api/v1/users/vera/password', { token: adele, body: { password: 'a password adele knows' } });
    isProblem(minted, 401, 'unauthenticated');
    isProblem(made, 401, 'unauthenticated');
    isProblem(reset, 401, 'unauthenticated');
    assert.equal(sql("SELECT count(*) FROM app_user WHERE username = 'mallet'"), '0');
    assert.equal(sql("SELECT count(*) FROM api_token WHERE label = 'after'"), '0');
    assert.equal((await login(a, 'vera', victim.password)).status, 201, 'vera\'s password is unchanged');
  });

  test('a revoked token, still cached on the other instance, cannot create its successor', async () => {
    const u = addUser(a, 'ruth', 'auditor');
    assert.equal((await api(b.url, 'GET', '/api/v1/me', { token: u.token })).status, 200); // cached on b
    const id = sql("SELECT t.id FROM api_token t JOIN app_user u ON u.id = t.user_id WHERE u.username = 'ruth'");
    assert.equal((await api(a.url, 'DELETE', `/api/v1/tokens/${id}`, { token: admin })).status, 204);
    isProblem(await api(b.url, 'POST', '/api/v1/tokens', { token: u.token, body: { label: 'successor' } }), 401, 'unauthenticated');
    assert.equal(sql("SELECT count(*) FROM api_token WHERE label = 'successor'"), '0');
    // A token may still revoke itself.
    const own = mintToken(a, 'ruth');
    const ownId = sql("SELECT t.id FROM api_token t JOIN app_user u ON u.id = t.user_id WHERE u.username = 'ruth' AND t.revoked_at IS NULL");
    assert.equal((await api(a.url, 'DELETE', `/api/v1/tokens/${ownId}`, { token: own })).status, 204);
  });

  test('admins cannot disable themselves; unknown users are 404; only admins may', async () => {
    isProblem(await api(a.url, 'POST', '/api/v1/users/admin/disable', { token: admin }), 409);
    isProblem(await api(a.url, 'POST', '/api/v1/users/nobody/disable', { token: admin }), 404);
    isProblem(await api(a.url, 'POST', '/api/v1/users/nobody/enable', { token: admin }), 404);
    const o = addUser(a, 'olaf', 'owner');
    isProblem(await api(a.url, 'POST', '/api/v1/users/admin/disable', { token: o.token }), 403);
  });

  test('the command line disables, enables and resets a password; its key events are signed like the server\'s', async () => {
    const owner = await addOwner(a, 'cleo');
    const env = { CAPLEDGER_KEY_FILE: a.keyFile };
    const d = cli(a, ['user', 'disable', 'cleo'], { env });
    assert.equal(d.status, 0, d.stderr);
    const row = JSON.parse(d.stdout);
    assert.deepEqual(row.signing_keys_revoked, [owner.keyId]);
    assert.equal(keyEvents(owner.keyId), 'enrol,revoke');
    // The log still verifies on the running server: its checkpoint covers the new leaf.
    const cp = await api(a.url, 'GET', '/api/v1/log/checkpoint', { token: admin });
    assert.equal(cp.status, 200, cp.text);
    assert.equal(Number(cp.text.split('\n')[1]), Number(sql('SELECT size FROM log_head')));
    assert.equal((await api(a.url, 'GET', '/readyz')).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    isProblem(await api(a.url, 'GET', '/api/v1/me', { token: owner.token }), 401);
    assert.equal(cli(a, ['user', 'enable', 'cleo']).status, 0);
    const newPassword = 'cleo has a brand new passphrase';
    const p = cli(a, ['user', 'reset-password', 'cleo'], { input: `${newPassword}\n` });
    assert.equal(p.status, 0, p.stderr);
    isProblem(await login(a, 'cleo', owner.password), 401);
    assert.equal((await login(a, 'cleo', newPassword)).status, 201);
    const bad = cli(a, ['user', 'reset-password', 'cleo'], { input: 'short\n' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /password/);
    const none = cli(a, ['user', 'disable', 'nobody'], { env });
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no user named 'nobody'/);
  });
});

describe('resetting a password', () => {
  test('the old password stops working, sessions end, the new one follows the rules', async () => {
    const u = addUser(a, 'petra', 'auditor');
    const s = sessionOf(await login(a, 'petra', u.password));
    const weak = await api(a.url, 'POST', '/api/v1/users/petra/password', { token: admin, body: { password: 'petra' } });
    isProblem(weak, 422);
    assert.equal(weak.json.errors[0].pointer, '/password');
    isProblem(await api(a.url, 'POST', '/api/v1/users/petra/password', { token: admin, body: {} }), 422);
    const r = await api(a.url, 'POST', '/api/v1/users/petra/password', { token: admin, body: { password: 'a brand new passphrase for petra' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.sessions_ended, 1);
    assert.equal(r.json.password_hash, undefined);
    isProblem(await api(a.url, 'GET', '/api/v1/me', { cookie: s.cookie }), 401);
    isProblem(await login(a, 'petra', u.password), 401);
    assert.equal((await login(a, 'petra', 'a brand new passphrase for petra')).status, 201);
    assert.equal((await api(a.url, 'GET', '/api/v1/me', { token: u.token })).status, 200, 'tokens stay');
    isProblem(await api(a.url, 'POST', '/api/v1/users/nobody/password', { token: admin, body: { password: 'a brand new passphrase' } }), 404);
    assert.equal(sql(`SELECT count(*) FROM audit_event WHERE action = 'user.password_reset' AND change::text LIKE '%argon2%'`), '0');
  });
});

describe('admins revoke any user\'s signing key', () => {
  test('a logged key event; the owner can no longer sign with it', async () => {
    const owner = await addOwner(a, 'kira');
    const list = await api(a.url, 'GET', '/api/v1/users/kira/signing-keys', { token: admin });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.items.map((k) => k.key_id), [owner.keyId]);
    isProblem(await api(a.url, 'GET', '/api/v1/users/nobody/signing-keys', { token: admin }), 404);
    // Before this issue the admin had no route: DELETE /me/signing-keys answered 403.
    isProblem(await api(a.url, 'DELETE', `/api/v1/me/signing-keys/${owner.keyId}`, { token: admin }), 403);
    const del = await api(a.url, 'DELETE', `/api/v1/users/kira/signing-keys/${owner.keyId}`, { token: admin });
    assert.equal(del.status, 200, del.text);
    assert.ok(del.json.revoked_at);
    assert.equal(keyEvents(owner.keyId), 'enrol,revoke');
    const audit = sql(`SELECT count(*) FROM audit_event WHERE action = 'signing_key.revoke' AND actor_name = 'admin' AND target_id = '${owner.keyId}'`);
    assert.equal(audit, '1');
    // Not another user's key under this name, and not a malformed id.
    const other = await addOwner(a, 'kurt');
    isProblem(await api(a.url, 'DELETE', `/api/v1/users/kira/signing-keys/${other.keyId}`, { token: admin }), 404);
    isProblem(await api(a.url, 'DELETE', '/api/v1/users/kira/signing-keys/xyz', { token: admin }), 404);
    const o = addUser(a, 'oscar', 'owner');
    isProblem(await api(a.url, 'DELETE', `/api/v1/users/kurt/signing-keys/${other.keyId}`, { token: o.token }), 403);
    assert.equal(keyEvents(other.keyId), 'enrol');
  });
});

describe('step-up before enrolling a signing key', () => {
  test('an API token alone cannot enrol a key; with the password it can; a wrong one counts as a failed sign-in', async () => {
    const u = addUser(a, 'sten', 'owner');
    const k = newKeyPair();
    const none = await api(a.url, 'PUT', '/api/v1/me/signing-key', { token: u.token, body: { public_key: k.publicKeyB64 } });
    isProblem(none, 403, 'step-up-required');
    const wrong = await api(a.url, 'PUT', '/api/v1/me/signing-key', { token: u.token, body: { public_key: k.publicKeyB64, password: 'not the password at all' } });
    isProblem(wrong, 403, 'step-up-required');
    assert.equal(sql(`SELECT count(*) FROM signing_key k JOIN app_user u ON u.id = k.user_id WHERE u.username = 'sten'`), '0');
    const ok = await api(a.url, 'PUT', '/api/v1/me/signing-key', { token: u.token, body: { public_key: k.publicKeyB64, password: u.password } });
    assert.equal(ok.status, 201, ok.text);
    // Guessing the password through enrolment locks the account like sign-in does.
    for (let i = 0; i < 5; i++) {
      const g = await api(a.url, 'PUT', '/api/v1/me/signing-key', { token: u.token, body: { public_key: newKeyPair().publicKeyB64, password: `guess number ${i} of many` } });
      isProblem(g, 403);
    }
    const locked = await api(a.url, 'PUT', '/api/v1/me/signing-key', { token: u.token, body: { public_key: newKeyPair().publicKeyB64, password: u.password } });
    isProblem(locked, 429, 'too-many-attempts');
  });

  test('a session older than the window needs the password (403), with it 201; a fresh one does not', async () => {
    const u = addUser(a, 'sara', 'owner');
    const s = sessionOf(await login(a, 'sara', u.password));
    const fresh = await asBrowser(a, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64 });
    assert.equal(fresh.status, 201, fresh.text);
    // The same session, signed in ten minutes ago (the default window is 300 s).
    sql(`UPDATE user_session SET created_at = now() - interval '10 minutes' WHERE user_id = (SELECT id FROM app_user WHERE username = 'sara')`);
    const old = await asBrowser(a, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64 });
    isProblem(old, 403, 'step-up-required');
    assert.match(old.json.detail, /password/);
    const withPw = await asBrowser(a, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64, password: u.password });
    assert.equal(withPw.status, 201, withPw.text);
  });

  test('CAPLEDGER_SIGNING_FRESH_LOGIN_S=0 asks for the password even right after sign-in', async () => {
    const c = await startServer({ env: {
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, a.db),
      CAPLEDGER_KEY_FILE: a.keyFile, CAPLEDGER_SIGNING_FRESH_LOGIN_S: '0',
    } });
    try {
      const u = addUser(a, 'sami', 'owner');
      const s = sessionOf(await login(c, 'sami', u.password));
      isProblem(await asBrowser(c, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64 }), 403, 'step-up-required');
      assert.equal((await asBrowser(c, s, 'PUT', '/api/v1/me/signing-key', { public_key: newKeyPair().publicKeyB64, password: u.password })).status, 201);
    } finally {
      await c.stop();
    }
  });
});
