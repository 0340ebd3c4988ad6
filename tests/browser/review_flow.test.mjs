// The 90-day review as people use it (issue 11): one current decision per review (the form
// locks after signing, the status follows without a reload, a second decision must supersede
// the first and a 409 names the current one), the stored-scenario menu on Compare lists names,
// and each role sees only the forms it may submit and lands on its own page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, mintToken } from '../integration/lib/cli.mjs';
import { addOwner, buildEvidence, createReview, postDecision, record } from '../integration/ledger.lib.mjs';
import { launch, watchedPage, createUser, signIn, openRoute, apiOk, resultsDir } from './lib/browser.mjs';
import { startServer } from '../integration/lib/harness.mjs';

let srv;
let browser;
let ev;
let owner;
let ownerToken;
let admin;

before(async () => {
  srv = await startServer();
  browser = await launch();
  admin = { token: mintToken(srv, 'admin') };
  owner = await createUser(srv, { username: 'olga', role: 'owner' });
  ownerToken = mintToken(srv, 'olga');
  ev = await buildEvidence(srv.url, admin, { token: ownerToken });
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

async function session(user, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);
  return { context, page, problems };
}

test('the role table of the page is the server\'s route table', async () => {
  const { WRITES } = await import('../../static/js/roles.js');
  const routes = cli(srv, ['routes']).stdout.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/));
  const writes = Object.fromEntries(routes
    .filter(([m, p]) => m !== 'GET' && p.startsWith('/api/v1/') && !/^\/api\/v1\/(session|me|users|tokens|teams|alerts\/sweep)/.test(p))
    .map(([m, p, roles]) => [`${m} ${p.slice('/api/v1'.length)}`, roles.split(',').filter((r) => r !== 'anonymous').sort()]));
  const mine = Object.fromEntries(Object.entries(WRITES).map(([k, v]) => [k, [...v].sort()]));
  assert.deepEqual(mine, writes);
});

test('each role lands on its page and sees only the forms it may submit', async () => {
  await apiOk(srv, 'POST', '/api/v1/teams', { body: { name: 'nlp' } });
  const users = {
    auditor: await createUser(srv, { username: 'aude', role: 'auditor' }),
    team: await createUser(srv, { username: 'tariq', role: 'team', teams: [ev.team] }),
  };
  for (const [user, landing] of [[users.auditor, 'audit'], [users.team, 'evidence'], [owner, 'reviews']]) {
    const { context, page, problems } = await session(user);
    await page.waitForFunction((l) => location.hash === `#/${l}`, landing);
    // A hand-typed page the role does not have lands there too.
    await page.goto(`${srv.url}/#/admin`);
    await page.waitForFunction((l) => location.hash === `#/${l}`, landing);
    assert.deepEqual(problems, [], user.username);
    await context.close();
  }

  // A team member uploads evidence but no price sheet (offers are owners' and admins'), and
  // creates no review.
  const { context, page, problems } = await session(users.team);
  await openRoute(page, srv, 'evidence/upload');
  assert.equal(await page.getByRole('heading', { name: /Price sheet/ }).count(), 0);
  assert.ok(await page.getByRole('heading', { name: /Job accounting/ }).count() > 0);
  assert.deepEqual(await page.getByLabel('Record type').locator('option').allTextContents(), ['workload', 'benchmark']);
  await openRoute(page, srv, 'reviews');
  assert.equal(await page.getByRole('button', { name: 'Create review' }).count(), 0);
  assert.deepEqual(problems, []);
  await context.close();

  // An auditor has no upload tab and no form on a review.
  const a = await session(users.auditor);
  await openRoute(a.page, srv, 'evidence');
  assert.equal(await a.page.getByRole('link', { name: 'Upload' }).count(), 0);
  await a.context.close();
});

test('the stored-scenario menu on Compare lists scenarios by name', async () => {
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, 'compare');
  const menu = page.getByLabel('…or start from a stored scenario');
  const options = await menu.locator('option').allTextContents();
  assert.deepEqual(options, ['Choose…', `llm slice (${ev.team})`]);
  assert.ok(!(await menu.innerHTML()).includes('[object'));
  await menu.selectOption({ label: `llm slice (${ev.team})` });
  await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('"options"'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('a signed decision locks the form, updates the status, and the next one must supersede it', async () => {
  const review = await createReview(srv.url, { token: ownerToken }, [ev.workloadId], { title: 'Evaluation capacity' });
  const pavel = await addOwner(srv, 'pavel');
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, `reviews/${review.id}`);
  assert.match(await page.getByTestId('review-status').innerText(), /open/);
  const form = page.locator('form.decision-form');
  assert.equal(await form.getByLabel('Supersedes').inputValue(), '');
  await form.getByLabel('Cited comparisons').fill(ev.comparison.sha256);
  await form.getByLabel('Cited comparisons').blur();
  await page.waitForFunction(() => document.querySelector('form.decision-form input[name=chosen_option]').value !== '');
  await form.getByLabel('Accepted by').fill('ravi');

  // Another owner decides first: this page's record supersedes nothing → 409 names the
  // current decision, and the form takes it.
  const early = await postDecision(srv.url, pavel, record(pavel, review.id, { decision: 'stop' }));
  assert.equal(early.status, 201, early.text);
  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const conflict = form.getByRole('alert').filter({ hasText: 'HTTP 409' });
  await conflict.waitFor();
  assert.match(await conflict.innerText(), new RegExp(early.json.id));
  assert.equal(await form.getByLabel('Supersedes').inputValue(), early.json.id);

  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const receipt = page.getByTestId('decision-receipt');
  await receipt.locator('.alert.success').filter({ hasText: 'recomputed the inclusion proof' }).waitFor();
  const mine = (await receipt.locator('dd code').first().innerText()).trim();
  // Locked: nothing can be sent twice; the status reads "decided" without a reload.
  assert.equal(await form.getAttribute('data-locked'), 'true');
  assert.equal(await form.getByRole('button', { name: 'Sign and submit' }).count(), 0);
  assert.ok(await form.getByLabel('Accepted by').isDisabled());
  await page.getByTestId('review-status').filter({ hasText: 'decided' }).waitFor();
  fs.mkdirSync(resultsDir, { recursive: true });
  await page.screenshot({ path: path.join(resultsDir, 'review-locked.png'), fullPage: true });

  // A new decision: the form names the current one as the one it supersedes.
  await page.getByRole('button', { name: 'Record a new decision that supersedes this one' }).click();
  const again = page.locator('form.decision-form');
  assert.equal(await again.getByLabel('Supersedes').inputValue(), mine);
  // Superseding a decision someone else superseded meanwhile would fork the line: refused next
  // to "Supersedes", which then names the current decision.
  const late = await postDecision(srv.url, pavel, record(pavel, review.id, { decision: 'stop' }));
  assert.equal(late.status, 201, late.text);
  await again.getByLabel('Accepted by').fill('ravi');
  await again.getByRole('button', { name: 'Sign and submit' }).click();
  const err = again.locator('.field[data-field="supersedes"] .field-error');
  await err.waitFor();
  assert.match(await err.innerText(), /already superseded/);
  await page.waitForFunction((id) => document.querySelector('form.decision-form select[name=supersedes]').value === id, late.json.id);
  await again.getByRole('button', { name: 'Sign and submit' }).click();
  await page.getByTestId('decision-receipt').waitFor();
  const list = await apiOk(srv, 'GET', `/api/v1/decisions?review=${review.id}`, { token: ownerToken });
  assert.deepEqual(list.items.map((d) => d.record.supersedes), [null, early.json.id, mine, late.json.id]);
  assert.deepEqual(problems, []);
  await context.close();
});
