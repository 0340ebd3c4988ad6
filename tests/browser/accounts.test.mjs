// The admin page closes accounts (issue 25): disable and enable a user, set a password, list a
// user's signing keys and revoke one — each through the page, checked against the API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { api, startServer } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { launch, watchedPage, createUser, signIn, openRoute } from './lib/browser.mjs';

let srv;
let browser;
before(async () => {
  srv = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('an admin disables, enables, resets the password of and revokes the key of a user from the admin page', async () => {
  const olga = await createUser(srv, { username: 'olga', role: 'owner' });
  const token = mintToken(srv, 'olga');
  const { publicKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const put = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token, body: { public_key: raw.toString('base64'), password: olga.password } });
  assert.equal(put.status, 201, put.text);

  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  page.on('dialog', (d) => d.accept());
  await signIn(page, srv, { username: 'admin', password: srv.adminPassword });
  await openRoute(page, srv, 'admin');

  await page.getByRole('button', { name: 'Disable olga' }).click();
  await page.getByText('olga disabled: 0 session(s) ended, 1 token(s) and 1 signing key(s) revoked.').waitFor();
  assert.equal((await api(srv.url, 'GET', '/api/v1/me', { token })).status, 401);
  assert.equal((await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'olga', password: olga.password } })).status, 401);

  await page.getByRole('button', { name: 'Enable olga' }).click();
  await page.getByText('olga may sign in again').waitFor();
  assert.equal((await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'olga', password: olga.password } })).status, 201);

  await page.getByRole('button', { name: 'Set password olga' }).click();
  await page.getByLabel('New password for olga').fill('aaaaaaaaaaaaaaaa'); // long enough for the form, not for the rules
  await page.getByRole('button', { name: 'Set password', exact: true }).click();
  await page.getByText(/Password not set/).waitFor();
  await page.getByLabel('New password for olga').fill('a new passphrase for olga');
  await page.getByRole('button', { name: 'Set password', exact: true }).click();
  await page.getByText('Password of olga set; 1 session(s) ended.').waitFor();
  assert.equal((await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'olga', password: olga.password } })).status, 401);
  assert.equal((await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'olga', password: 'a new passphrase for olga' } })).status, 201);

  // A second key (enrolled again after the disable revoked the first), revoked from the page.
  const token2 = mintToken(srv, 'olga');
  const k2 = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const put2 = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token: token2, body: { public_key: k2.toString('base64'), password: 'a new passphrase for olga' } });
  assert.equal(put2.status, 201, put2.text);
  await page.getByRole('button', { name: 'Signing keys olga' }).click();
  await page.getByRole('region', { name: 'Signing keys of olga' }).getByRole('button', { name: 'Revoke', exact: true }).click();
  await page.getByText(/Key [0-9a-f]{12}… of olga revoked/).waitFor();
  const keys = await api(srv.url, 'GET', '/api/v1/me/signing-keys', { token: token2 });
  assert.ok(keys.json.items.every((k) => k.revoked_at), keys.text);
  assert.deepEqual(problems, []);
  await context.close();
});
