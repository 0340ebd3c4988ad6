// Signing in the browser, end to end: an owner stores a comparison, opens a 90-day review,
// generates an Ed25519 key in the browser (non-extractable, kept in IndexedDB), registers it,
// signs a `revise` decision citing the comparison, and the server logs it; the offline
// `capledger verify` of the audit bundle then accepts the signature. An `advance` the gate
// refuses shows each 422 error next to the field it names, and a lone surrogate is refused
// before anything is signed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, startServer, psql } from '../integration/lib/harness.mjs';
import { cli, mintToken } from '../integration/lib/cli.mjs';
import { launch, watchedPage, createTeam, createUser, signIn, readData, apiOk, resultsDir } from './lib/browser.mjs';

let srv;
let browser;
let context;
let page;
let problems;
let owner;
let ownerToken;
let reviewUrl;
let comparisonSha;

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  owner = await createUser(srv, { username: 'olga', role: 'owner', teams: ['vision'] });
  ownerToken = mintToken(srv, 'olga');
  context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  ({ page, problems } = await watchedPage(context));
  await signIn(page, srv, owner);
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

async function logSizeText() {
  const { api } = await import('../integration/lib/harness.mjs');
  const r = await api(srv.url, 'GET', '/api/v1/log/checkpoint', { token: ownerToken });
  return Number(r.text.split('\n')[1]);
}

test('the owner stores a comparison from the Compare page', async () => {
  await page.goto(`${srv.url}/#/compare`);
  await page.getByLabel('Scenario JSON').fill(readData('spec/example-training.json'));
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await page.getByTestId('winner').waitFor();
  await page.getByLabel('Scenario name').fill('7B pretraining slice');
  await page.getByRole('button', { name: 'Save scenario and store its comparison' }).click();
  comparisonSha = (await page.getByTestId('comparison-sha').textContent()).trim();
  assert.match(comparisonSha, /^[0-9a-f]{64}$/);
  const stored = await apiOk(srv, 'GET', `/api/v1/comparisons/${comparisonSha}`, { token: ownerToken });
  assert.equal(stored.result.winner, 'h100-on-demand');
});

test('the owner creates a 90-day review and sees its 7-item checklist', async () => {
  await page.goto(`${srv.url}/#/reviews`);
  await page.getByLabel('Title').fill('Q3 pretraining capacity');
  await page.getByLabel('Question').fill('Which capacity should the 7B pretraining slice run on next quarter?');
  await page.getByRole('button', { name: 'Create review' }).click();
  await page.getByRole('heading', { name: /Checklist: \d of 7 covered/ }).waitFor();
  reviewUrl = page.url();
  assert.equal(await page.locator('.checklist li[data-item]').count(), 7);
  // Uncovered items say what is missing.
  assert.ok(await page.locator('.checklist li.missing .missing-list li').count() > 0);

  // An artifact of the evidence plan, then its status changed in place (PATCH with If-Match).
  const art = page.locator('form').filter({ hasText: 'Add an artifact' });
  await art.getByLabel('Artifact').fill('Profile the input pipeline on A100 spot');
  await art.getByLabel('Contributor').fill('tariq');
  await art.getByLabel('Due').fill('2026-12-20');
  await art.getByRole('button', { name: 'Add artifact' }).click();
  const status = page.getByLabel('Status of Profile the input pipeline on A100 spot');
  await status.waitFor();
  assert.equal(await status.inputValue(), 'planned');
  await status.selectOption('done');
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  await page.waitForFunction(() => {
    const s = document.querySelector('select[aria-label="Status of Profile the input pipeline on A100 spot"]');
    return s && s.value === 'done' && !document.querySelector('.phases ~ .alert, [role=alert]:not([hidden]):not(:empty)');
  });
  const reviewId = reviewUrl.split('/').pop();
  const artifacts = await apiOk(srv, 'GET', `/api/v1/reviews/${reviewId}/artifacts`, { token: ownerToken });
  assert.equal(artifacts.items[0].status, 'done');
  assert.equal(artifacts.items[0].phase, 'evidence_plan');
});

test('a key generated in the browser signs a revise decision that the server logs and capledger verify accepts', async () => {
  assert.ok(reviewUrl, 'the review test ran');
  await page.goto(reviewUrl);
  // Step-up: a session signed in more than five minutes ago must give the password again.
  psql(`UPDATE user_session SET created_at = now() - interval '10 minutes' WHERE user_id = (SELECT id FROM app_user WHERE username = 'olga')`, { database: srv.db });
  await page.getByRole('button', { name: 'Generate and register a signing key' }).click();
  await page.getByText('No key registered: enter your password to register the key').waitFor();
  assert.equal((await apiOk(srv, 'GET', '/api/v1/me/signing-keys', { token: ownerToken })).items.length, 0);
  await page.getByLabel('Your password').fill(owner.password);
  await page.getByRole('button', { name: 'Register the signing key' }).click();
  const keyId = (await page.getByTestId('key-id').textContent()).trim();
  assert.match(keyId, /^[0-9a-f]{64}$/);

  // The server holds the public half; its key id is SHA-256 of the raw key.
  const keys = await apiOk(srv, 'GET', '/api/v1/me/signing-keys', { token: ownerToken });
  const registered = keys.items.find((k) => k.key_id === keyId);
  assert.ok(registered, JSON.stringify(keys));
  const raw = Buffer.from(registered.public_key, 'base64');
  assert.equal(crypto.createHash('sha256').update(raw).digest('hex'), keyId);

  // The private key in IndexedDB cannot be exported, by this page or anyone else.
  const extractable = await page.evaluate(async () => {
    const db = await new Promise((res, rej) => { const q = indexedDB.open('capledger'); q.onsuccess = () => res(q.result); q.onerror = () => rej(q.error); });
    const entry = await new Promise((res) => { const q = db.transaction('signing-keys').objectStore('signing-keys').get('olga'); q.onsuccess = () => res(q.result); });
    let exported = 'refused';
    try { await crypto.subtle.exportKey('pkcs8', entry.keyPair.privateKey); exported = 'exported'; } catch { /* expected */ }
    return { flag: entry.keyPair.privateKey.extractable, exported, algorithm: entry.keyPair.privateKey.algorithm.name };
  });
  assert.deepEqual(extractable, { flag: false, exported: 'refused', algorithm: 'Ed25519' });

  const form = page.locator('form.decision-form');
  await form.locator(`fieldset[data-picker=comparisons] input[value="${comparisonSha}"]`).check();
  // Naming the comparison fills in its winner.
  await page.waitForFunction(() => document.querySelector('form.decision-form input[name=chosen_option]').value !== '');
  assert.equal(await form.getByLabel('Chosen option').inputValue(), 'h100-on-demand');
  await form.getByLabel('Baseline').fill('A100 spot at 9.80 USD per instance-hour, 4.9 days per run');
  await form.getByLabel('Assumptions').fill('failure probability 8% per attempt\nengineer blocked 20% of the wall time');
  await form.getByLabel('Unresolved questions').fill('Is the L40S memory headroom enough with a smaller batch?');
  await form.getByLabel('Accepted by').fill('ravi');
  await form.getByLabel('Expected operating cost').fill('128450.00');
  await form.getByRole('button', { name: 'Sign and submit' }).click();

  const receipt = page.getByTestId('decision-receipt');
  await receipt.waitFor();
  // Leaf 0 is the enrolment of olga's key (a leaf of the log too); her decision is leaf 1.
  assert.equal(await page.getByTestId('leaf-index').textContent(), '1');
  await receipt.locator('.alert.success').filter({ hasText: 'recomputed the inclusion proof' }).waitFor();
  // The decisions table now lists it.
  await page.locator('.decisions tbody tr').first().waitFor();
  assert.match(await page.locator('.decisions tbody').innerText(), /revise\s+h100-on-demand\s+olga\s+ravi/);
  fs.mkdirSync(resultsDir, { recursive: true });
  await page.screenshot({ path: path.join(resultsDir, 'review-signed.png'), fullPage: true });

  const list = await apiOk(srv, 'GET', '/api/v1/decisions', { token: ownerToken });
  assert.equal(list.items.length, 1);
  const record = list.items[0].record;
  assert.equal(record.decision, 'revise');
  assert.equal(record.signer_key_id, keyId);
  assert.deepEqual(record.comparison_sha256, [comparisonSha]);
  assert.deepEqual(record.expected_operating_cost, { amount: '128450.00', currency: 'USD', period: 'month' });

  // Offline verification of the whole bundle, by the CLI an auditor runs.
  const bundle = await apiOk(srv, 'GET', '/api/v1/audit/bundle', { token: ownerToken });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-bundle-'));
  const file = path.join(dir, 'bundle.json');
  fs.writeFileSync(file, JSON.stringify(bundle));
  const keyFile = path.join(dir, 'server.vkey');
  fs.writeFileSync(keyFile, (await api(srv.url, 'GET', '/api/v1/log/key', { token: ownerToken })).text);
  const ok = cli(srv, ['verify', file, '--key', keyFile]);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  // And the same check fails when one byte of the signed record changes.
  const leaf = JSON.parse(Buffer.from(bundle.leaves[1], 'base64').toString('utf8'));
  leaf.record.accepted_by = 'mallory';
  const tampered = { ...bundle, leaves: [bundle.leaves[0], Buffer.from(JSON.stringify(leaf)).toString('base64')] };
  fs.writeFileSync(file, JSON.stringify(tampered));
  const bad = cli(srv, ['verify', file, '--key', keyFile]);
  assert.notEqual(bad.status, 0, 'a tampered leaf must not verify');
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(problems, []);
});

test("the gate's 422 for an unsupported advance is shown next to the fields it names", async () => {
  assert.ok(reviewUrl, 'the review test ran');
  await page.goto(reviewUrl);
  await page.reload();
  const before = await logSizeText();
  const form = page.locator('form.decision-form');
  await form.getByTestId('key-id').waitFor();
  await form.getByLabel('Decision', { exact: true }).selectOption('advance');
  await form.getByLabel('Owner').fill('');
  await form.getByRole('button', { name: 'Sign and submit' }).click();

  const field = (name) => form.locator(`.field[data-field="${name}"] .field-error`);
  await field('accepted_by').waitFor();
  assert.match(await field('accepted_by').textContent(), /accept/i);
  assert.match(await field('comparison_sha256').textContent(), /cite/i);
  assert.match(await field('owner').textContent(), /owner/i);
  assert.equal(await form.getByLabel('Accepted by (next stage)').getAttribute('aria-invalid'), 'true');
  // Checklist items are not fields: they are listed in the alert above the button.
  const alert = form.getByRole('alert').filter({ hasText: 'Refused (HTTP 422)' });
  assert.match(await alert.innerText(), /checklist item/);
  await form.screenshot({ path: path.join(resultsDir, 'decision-422.png') });
  assert.equal(await logSizeText(), before, 'nothing was appended');
});

test('a lone surrogate is refused before anything is signed', async () => {
  await page.goto(reviewUrl);
  await page.reload();
  const before = await logSizeText();
  const form = page.locator('form.decision-form');
  await form.getByTestId('key-id').waitFor();
  await form.getByLabel('Accepted by').fill('ravi');
  await form.getByLabel('Residual exposure').evaluate((el) => { el.value = 'budget \ud800 overrun'; });
  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const err = form.locator('.field[data-field="residual_exposure"] .field-error');
  await err.waitFor();
  assert.match(await err.textContent(), /lone surrogate/);
  assert.match(await form.getByRole('alert').filter({ hasText: 'Nothing was signed' }).innerText(), /Nothing was signed/);
  assert.equal(await logSizeText(), before);
});

test('the auditor view checks the leaf in the browser and offers the bundle', async () => {
  const auditor = await createUser(srv, { username: 'aude', role: 'auditor' });
  const ctx2 = await browser.newContext();
  const { page: p2, problems: probs } = await watchedPage(ctx2);
  await signIn(p2, srv, auditor);
  await p2.goto(`${srv.url}/#/audit`);
  // Two leaves: the enrolment of olga's key, then her decision.
  assert.equal(await p2.getByTestId('tree-size').textContent(), '2');
  assert.match(await p2.getByTestId('checkpoint').textContent(), /^localhost\/capledger\n2\n/);
  await p2.getByRole('button', { name: 'Check inclusion' }).click();
  const result = p2.getByTestId('inclusion-result');
  await result.waitFor();
  assert.equal(await result.getAttribute('data-ok'), 'true', await result.innerText());
  assert.match(await result.innerText(), /Approver's signature/);
  // Leaf 0, the key's enrolment, has no approver signature: the page says what it is.
  await p2.getByLabel('Leaf index').fill('0');
  await p2.getByRole('button', { name: 'Check inclusion' }).click();
  await result.filter({ hasText: 'Key event' }).waitFor();
  assert.equal(await result.getAttribute('data-ok'), 'true', await result.innerText());
  assert.match(await result.innerText(), /Key event\W+enrolment of key [0-9a-f]{64} for olga/);
  assert.match(await p2.locator('main').innerText(), /capledger verify/);
  const [download] = await Promise.all([p2.waitForEvent('download'), p2.getByTestId('bundle-link').click()]);
  const saved = await download.path();
  const bundle = JSON.parse(fs.readFileSync(saved, 'utf8'));
  assert.equal(bundle.leaves.length, 2);
  assert.deepEqual(probs, []);
  await ctx2.close();
});

test('the owner sees a drift alert on the decision and acknowledges it', async () => {
  // Raising drift is the ledger's job (its own tests drive the sweep); here one alert row is
  // planted so the page's rendering and its PATCH with If-Match are what is tested.
  const decision = (await apiOk(srv, 'GET', '/api/v1/decisions', { token: ownerToken })).items[0];
  psql(`INSERT INTO alert (kind, review_id, decision_id, owner, metric, assumed, observed, relative_change, threshold, sample_size, message)
        VALUES ('drift', '${decision.record.review_id}', '${decision.id}', 'olga', 'failure_rate', 0.08, 0.21, 1.625, 0.25, 40,
                'failure rate 21% over 40 runs against 8% assumed')`, { database: srv.db });
  await page.goto(`${srv.url}/#/alerts`);
  const row = page.locator('main tbody tr').filter({ hasText: 'failure rate 21% over 40 runs' });
  await row.waitFor();
  assert.match(await row.innerText(), /failure rate: 0\.08 → 0\.21/);
  assert.match(await row.innerText(), /open/);
  await row.getByRole('button', { name: 'Acknowledge' }).click();
  await page.locator('main tbody tr').filter({ hasText: 'acknowledged' }).waitFor();
  const alerts = await apiOk(srv, 'GET', '/api/v1/alerts', { token: ownerToken });
  assert.equal(alerts.items[0].status, 'acknowledged');
  assert.deepEqual(problems, []);
});
