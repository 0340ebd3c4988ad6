// Issue 23, item 5: the auditor's instructions run as written. Every command in docs/ and the
// README calls the binary as build/capledger (what scripts/run builds); the Audit page's offline
// check names the file the download really has, passes --key with the key the page shows, and
// both the key and the commands copy with one click. The test runs the copied commands verbatim
// in a shell (HOME and the working directory a fresh folder holding the download and a
// build/capledger link to the binary under test).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, projectDir, startServer } from '../integration/lib/harness.mjs';
import { bin, mintToken } from '../integration/lib/cli.mjs';
import { launch, watchedPage, createTeam, createUser, signIn, openRoute } from './lib/browser.mjs';

let srv;
let browser;

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  // One leaf in the log: an owner's signing key enrolled through the API.
  const owner = await createUser(srv, { username: 'olga', role: 'owner', teams: ['vision'] });
  const token = mintToken(srv, 'olga');
  const jwk = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const publicKey = Buffer.from(jwk.x, 'base64url').toString('base64');
  let r = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token, body: { public_key: publicKey, password: owner.password } });
  if (r.status >= 400) r = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token, body: { public_key: publicKey } });
  assert.ok(r.status < 300, r.text);
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('every command in the docs calls build/capledger, never a bare capledger', () => {
  const files = ['README.md', ...fs.readdirSync(path.join(projectDir, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const bare = [];
  const command = /(^|[\s;|&(`$])capledger (verify|keygen|sign|witness|import|token|user|team|serve|routes|compare|migrate|retention|config)\b/;
  for (const f of files) {
    let inFence = false;
    fs.readFileSync(path.join(projectDir, f), 'utf8').split('\n').forEach((line, i) => {
      if (/^\s*```/.test(line)) { inFence = !inFence; return; }
      if (!inFence) return;
      // A diagram's box is not a command.
      if (/^\s*[|+│┌└]/.test(line) || /capledger serve\s{2,}capledger serve/.test(line)) return;
      if (command.test(line.replace(/build\/capledger/g, ''))) bare.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(bare, []);
});

test('the Audit page gives a command that runs as written, with the downloaded file and the key shown', async () => {
  const auditor = await createUser(srv, { username: 'aude', role: 'auditor' });
  const context = await browser.newContext({ acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: srv.url });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, auditor);
  await openRoute(page, srv, 'audit');
  const key = (await page.getByTestId('verifier-key').innerText()).trim();
  assert.match(key, /^localhost\/capledger\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/);
  await page.getByTestId('copy-key').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

  const shown = await page.getByTestId('verify-command').innerText();
  await page.getByTestId('copy-command').click();
  await page.locator('.copied').filter({ hasText: 'Copied.' }).last().waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied.trim(), shown.trim());
  assert.ok(copied.includes(key), 'the command carries the key the page shows');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('bundle-link').click()]);
  const named = copied.match(/verify ~\/Downloads\/(\S+) --key/);
  assert.ok(named, copied);
  assert.equal(download.suggestedFilename(), named[1], 'the command names the file the download has');

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-audit-home-'));
  try {
    fs.mkdirSync(path.join(home, 'Downloads'));
    fs.mkdirSync(path.join(home, 'build'));
    fs.symlinkSync(bin, path.join(home, 'build', 'capledger'));
    await download.saveAs(path.join(home, 'Downloads', download.suggestedFilename()));
    const r = spawnSync('bash', ['-c', copied], { cwd: home, env: { PATH: process.env.PATH, HOME: home }, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^verified: /m);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  assert.deepEqual(problems, []);
  await context.close();
});
