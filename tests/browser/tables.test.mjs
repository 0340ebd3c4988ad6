// Issue 23, item 7: every table sorts, filters, picks a date range and downloads CSV with the
// API's fields as columns (one helper, listing.js table()); related records link (a run → its
// upload → its benchmark; a benchmark → its telemetry uploads).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startDemo, DEMO_REVIEW } from './lib/demo.mjs';
import { launch, watchedPage, signIn, openRoute, apiOk } from './lib/browser.mjs';

let demo;
let browser;

before(async () => {
  demo = await startDemo();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

async function session(who) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username: who, password: demo.passwords[who] });
  return { context, page, problems };
}

// A minimal CSV reader (quotes, doubled quotes, CRLF) for the downloaded files.
function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') q = false; else cell += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\n') { row.push(cell.replace(/\r$/, '')); rows.push(row); row = []; cell = ''; } else cell += c;
  }
  return rows;
}

test('the runs table sorts, filters, takes a date range and downloads the API\'s fields as CSV', async () => {
  const { context, page, problems } = await session('demo-member');
  await openRoute(page, demo.srv, 'evidence/runs');
  const list = page.locator('.list-results');
  await list.locator('tbody tr').first().waitFor();
  const rows = list.locator('tbody tr:not([hidden])');
  const total = await rows.count();
  assert.ok(total >= 40, `runs listed: ${total}`);
  const submitted = list.locator('thead th').filter({ hasText: 'Submitted' });
  const col = await list.locator('thead th').evaluateAll((ths) => ths.findIndex((t) => t.textContent.startsWith('Submitted')));
  const texts = async () => rows.evaluateAll((trs, i) => trs.map((tr) => tr.children[i].textContent), col);
  await submitted.getByRole('button').click();
  assert.equal(await submitted.getAttribute('aria-sort'), 'ascending');
  const asc = await texts();
  assert.deepEqual(asc, [...asc].sort());
  await submitted.getByRole('button').click();
  assert.equal(await submitted.getAttribute('aria-sort'), 'descending');
  const desc = await texts();
  assert.deepEqual(desc, [...asc].reverse());

  await page.getByLabel('Filter rows of Runs').fill('TIMEOUT');
  const n = await rows.count();
  assert.ok(n > 0 && n < total);
  assert.ok((await rows.allInnerTexts()).every((t) => t.includes('TIMEOUT')));
  assert.match(await page.locator('.table-count').first().innerText(), new RegExp(`^${n} of ${total} rows$`));
  await page.getByLabel('Filter rows of Runs').fill('');

  await page.getByLabel('Runs: Submitted from').fill('2025-09-26');
  const dated = await texts();
  assert.ok(dated.length > 0 && dated.length < total);
  assert.ok(dated.every((d) => d >= '2025-09-26'), dated.join(','));

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).first().click()]);
  assert.equal(download.suggestedFilename(), 'runs.csv');
  const csv = parseCsv(fs.readFileSync(await download.path(), 'utf8'));
  const api = await apiOk(demo.srv, 'GET', '/api/v1/runs?limit=1', { token: demo.tokens['demo-member'] });
  assert.deepEqual(csv[0], Object.keys(api.items[0]), 'the API\'s fields are the columns');
  assert.equal(csv.length - 1, dated.length, 'the rows shown');
  assert.ok(csv.slice(1).every((r) => r[csv[0].indexOf('submitted_at')] >= '2025-09-26'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('a run links to its upload, the upload to its benchmark\'s telemetry and back', async () => {
  const { context, page, problems } = await session('demo-member');
  await openRoute(page, demo.srv, 'evidence/runs');
  await page.locator('.list-results tbody tr').first().getByRole('link', { name: 'its upload' }).click();
  const view = page.getByTestId('upload-view');
  await view.waitFor();
  assert.match(await view.locator('h3').innerText(), /^job accounting \(sacct\) · eval-platform · \d+ records · by demo-member/);
  // A benchmark's telemetry upload opens its upload page, which leads back to the benchmark.
  await openRoute(page, demo.srv, 'evidence/benchmarks');
  await page.locator('.list-results tbody tr').filter({ hasText: 'a100-streamed' }).first().getByRole('link').first().click();
  await page.getByTestId('benchmark-view').locator('tbody a').first().click();
  await view.locator('h3').waitFor(); // the view is there at once, empty until the upload is read
  assert.match(await view.innerText(), /GPU telemetry/);
  await view.getByRole('link', { name: 'the benchmark it belongs to' }).click();
  await page.getByTestId('benchmark-view').waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('every table on every main page of every role has sortable headers', async () => {
  for (const who of ['demo-owner', 'demo-member', 'demo-auditor']) {
    const { context, page, problems } = await session(who);
    const routes = ['evidence/workloads', 'evidence/offers', 'evidence/benchmarks', 'evidence/runs', 'evidence/uploads', 'evidence/usage', 'reviews', 'account'];
    if (who === 'demo-owner') routes.push('alerts', 'audit');
    if (who === 'demo-auditor') routes.push('audit');
    for (const route of routes) {
      await openRoute(page, demo.srv, route);
      if (route === 'evidence/usage') await page.locator('.list-results[data-loads]').waitFor();
      const unsortable = await page.locator('main table').evaluateAll((ts) => ts.filter((t) => [...t.querySelectorAll('thead th')].some((th) => th.textContent && !th.querySelector('button.sort'))).length);
      assert.equal(unsortable, 0, `${who} ${route}`);
    }
    await openRoute(page, demo.srv, 'reviews');
    await page.getByRole('link', { name: DEMO_REVIEW }).click();
    await page.locator('.decisions table').waitFor();
    assert.equal(await page.locator('.decisions thead th button.sort').count(), await page.locator('.decisions thead th').count());
    assert.deepEqual(problems, [], who);
    await context.close();
  }
});
