// Issue 23, item 6: no raw ids, JSON Pointers or API paths shown to people, no "nullnull", and
// empty states that say what to do next. The demo's data, a second decision superseding the
// demo's (signed through the API by a second owner), then every main page of every role is read
// as a person reads it (innerText) and must hold none of those; ids appear only in copy buttons.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { addOwner, record, postDecision } from '../integration/ledger.lib.mjs';
import { startDemo, DEMO_REVIEW } from './lib/demo.mjs';
import { launch, watchedPage, signIn, openRoute, createTeam, createUser, apiOk } from './lib/browser.mjs';

let demo;
let browser;
let second;
let first;

// What a person must never read on a page.
export function rawBits(text) {
  const found = [];
  const uuid = text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  if (uuid) found.push(`id ${uuid[0]}`);
  const short = text.match(/\b[0-9a-f]{8}…/);
  if (short) found.push(`truncated id ${short[0]}`);
  const pointer = text.match(/(^|[\s(])\/(record|options|partitions|[a-z_]+_(id|at|on|by))(\/[\w~]+)*/m);
  if (pointer) found.push(`JSON Pointer ${pointer[0].trim()}`);
  const apiPath = text.match(/\b(GET|PUT|POST|PATCH|DELETE) \/api\/v1\S*|\/api\/v1\/\S+/);
  if (apiPath) found.push(`API path ${apiPath[0]}`);
  const query = text.match(/\?[a-z_]+=/);
  if (query) found.push(`query parameter ${query[0]}`);
  for (const word of ['null', 'undefined', 'NaN', '[object Object]']) {
    if (new RegExp(`(^|[^A-Za-z])${word.replace(/[[\]]/g, '\\$&')}([^A-Za-z]|$)`).test(text)) found.push(word);
  }
  return found;
}

before(async () => {
  demo = await startDemo();
  browser = await launch();
  // A second owner supersedes the demo's decision (the "Supersedes 18c0b637-…" of the issue).
  const olga = await addOwner(demo.srv, 'olga');
  const reviews = await apiOk(demo.srv, 'GET', '/api/v1/reviews', { token: olga.token });
  const review = reviews.items.find((r) => r.title === DEMO_REVIEW);
  first = (await apiOk(demo.srv, 'GET', `/api/v1/decisions?review=${review.id}`, { token: olga.token })).items[0];
  const rec = record(olga, review.id, { decision: 'revise', chosen_option: 'h100-nvme-cache', comparison_sha256: first.record.comparison_sha256 });
  const r = await postDecision(demo.srv.url, olga, rec);
  assert.equal(r.status, 201, r.text);
  second = r.json;
  await createTeam(demo.srv, 'lonely');
  await createUser(demo.srv, { username: 'lone', role: 'team', teams: ['lonely'] });
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

async function session(username, password, width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username, password });
  return { context, page, problems };
}
const mainText = (page) => page.locator('main').innerText();

test('a superseding decision names the one it supersedes by what and when, its id only in a copy button', async () => {
  const { context, page, problems } = await session('demo-owner', demo.passwords['demo-owner']);
  await openRoute(page, demo.srv, `decisions/${second.id}`);
  const sup = page.getByTestId('supersedes');
  await sup.getByRole('link').waitFor();
  assert.match(await sup.innerText(), /^revise h100-nvme-cache · signed \d{4}-\d\d-\d\d \d\d:\d\d UTC by demo-owner/);
  assert.equal(await sup.locator('button[data-id]').getAttribute('data-id'), first.id);
  assert.deepEqual(rawBits(await mainText(page)), []);
  await openRoute(page, demo.srv, `decisions/${first.id}`);
  await page.getByTestId('superseded-by').getByRole('link').waitFor();
  assert.match(await page.getByTestId('superseded-by').innerText(), /^revise h100-nvme-cache · signed .* by olga/);
  assert.deepEqual(rawBits(await mainText(page)), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the gate\'s conditions and every upload problem name fields in words, not JSON Pointers', async () => {
  const { context, page, problems } = await session('demo-owner', demo.passwords['demo-owner']);
  await openRoute(page, demo.srv, 'reviews');
  await page.getByRole('link', { name: DEMO_REVIEW }).click();
  const gate = page.getByTestId('gate-verdict');
  await gate.waitFor();
  const words = await gate.innerText();
  assert.doesNotMatch(words, /\/record\//);
  assert.match(words, /Accepted by: an advance names the person accepting the next stage/);
  assert.deepEqual(rawBits(await mainText(page)), []);
  // A sacct file without the columns it needs: each problem names its field in words.
  await openRoute(page, demo.srv, 'evidence/upload');
  const form = page.locator('form').filter({ hasText: 'Job accounting' }).first();
  await form.getByLabel('Cluster').fill('fox');
  await form.locator('input[type=file]').setInputFiles({ name: 'jobs.txt', mimeType: 'text/plain', buffer: Buffer.from('JobID|User\n1|ana\n') });
  await form.getByRole('button', { name: /Upload/ }).click();
  await form.getByRole('alert').first().waitFor();
  assert.deepEqual(rawBits(await form.innerText()), []);
  assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
  await context.close();
});

test('Usage: no API path, an owner prices an unpriced partition from the page; a team with no runs reads no "null"', async () => {
  const { context, page, problems } = await session('demo-owner', demo.passwords['demo-owner']);
  await openRoute(page, demo.srv, 'evidence/usage');
  await page.locator('.list-results[data-loads]').waitFor();
  const unpriced = page.getByTestId('unpriced');
  assert.deepEqual(rawBits(await mainText(page)), []);
  const row = unpriced.locator('tbody tr').filter({ hasText: 'autotekst' });
  const before = await unpriced.locator('tbody tr').count();
  await row.locator('select').selectOption({ index: 1 });
  await row.getByRole('button', { name: 'Price with this offer' }).click();
  await page.locator('.list-results[data-loads="2"]').waitFor();
  assert.equal(await page.getByTestId('unpriced').locator('tbody tr').count(), before - 1);
  assert.equal(await page.getByTestId('unpriced').locator('tbody tr').filter({ hasText: 'autotekst' }).count(), 0);
  const map = await apiOk(demo.srv, 'GET', '/api/v1/clusters/fox-eval-demo', { token: demo.tokens['demo-owner'] });
  assert.ok(map.partitions.some((p) => p.partition === 'autotekst' && p.offer_id));
  assert.deepEqual(problems, []);
  await context.close();

  const lone = await session('lone', 'pw-lone-0123456789');
  for (const route of ['evidence/usage', 'evidence/runs', 'evidence/workloads', 'evidence/benchmarks', 'evidence/uploads', 'reviews']) {
    await openRoute(lone.page, demo.srv, route);
    if (route === 'evidence/usage') await lone.page.locator('.list-results[data-loads]').waitFor();
    const text = await mainText(lone.page);
    assert.deepEqual(rawBits(text), [], route);
    // The empty state says what to do next (a link to the upload, or who does it).
    const empty = lone.page.locator('main .empty').first();
    assert.match(await empty.innerText(), /Upload|upload|owner starts one/, route);
  }
  assert.deepEqual(lone.problems, []);
  await lone.context.close();
});

test('every main page of every role reads without ids, pointers, API paths or null', async () => {
  for (const who of ['demo-owner', 'demo-member', 'demo-auditor']) {
    const { context, page, problems } = await session(who, demo.passwords[who]);
    const routes = ['compare', 'evidence/workloads', 'evidence/offers', 'evidence/benchmarks', 'evidence/runs', 'evidence/uploads', 'reviews', 'account'];
    if (who === 'demo-owner') routes.push('alerts', 'audit');
    if (who === 'demo-auditor') routes.push('audit');
    if (who !== 'demo-auditor') routes.push('whatif'); // its form's hints too
    for (const route of routes) {
      await openRoute(page, demo.srv, route);
      assert.deepEqual(rawBits(await mainText(page)), [], `${who} ${route}`);
    }
    await openRoute(page, demo.srv, 'reviews');
    await page.getByRole('link', { name: DEMO_REVIEW }).click();
    await page.getByTestId('cockpit').getByTestId('winner').waitFor();
    await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
    assert.deepEqual(rawBits(await mainText(page)), [], `${who} review`);
    assert.deepEqual(problems, [], who);
    await context.close();
  }
});

test('at 400 px every main action of every role is reachable without scrolling the page sideways', async () => {
  const { sidewaysProblems } = await import('./lib/browser.mjs');
  const found = [];
  for (const who of ['demo-owner', 'demo-member', 'demo-auditor']) {
    const { context, page, problems } = await session(who, demo.passwords[who], 400);
    const routes = ['compare', 'evidence/workloads', 'evidence/offers', 'evidence/benchmarks', 'evidence/runs', 'evidence/uploads', 'evidence/usage', 'reviews', 'account'];
    if (who !== 'demo-auditor') routes.push('evidence/upload');
    if (who === 'demo-owner') routes.push('alerts', 'audit');
    if (who === 'demo-auditor') routes.push('audit');
    for (const route of routes) {
      await openRoute(page, demo.srv, route);
      if (route === 'evidence/usage') await page.locator('.list-results[data-loads]').waitFor();
      if (route === 'compare') {
        await page.getByTestId('scenario-builder').getByRole('button', { name: 'Add an option' }).click();
      }
      for (const p of await sidewaysProblems(page)) found.push(`${who} #/${route}: ${p}`);
    }
    await openRoute(page, demo.srv, 'reviews');
    await page.getByRole('link', { name: DEMO_REVIEW }).click();
    await page.getByTestId('cockpit').getByTestId('winner').waitFor();
    await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
    for (const p of await sidewaysProblems(page)) found.push(`${who} review: ${p}`);
    assert.deepEqual(problems, [], who);
    await context.close();
  }
  assert.deepEqual(found, []);
});
