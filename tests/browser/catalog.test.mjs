// A SkyPilot price catalog uploaded from the browser by an owner: the price-sheet form sends it
// to POST /offers/import with the cloud named in the form, and the answer counts new offers,
// CPU-only rows left out and, sent again, unchanged offers; the offers list shows them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../integration/lib/harness.mjs';
import { launch, watchedPage, createUser, signIn, dataDir } from './lib/browser.mjs';

let srv;
let browser;
let olga;
const LAMBDA = path.join(dataDir, 'samples/skypilot-catalog/lambda_vms_v7_excerpt.csv');

before(async () => {
  srv = await startServer();
  browser = await launch();
  olga = await createUser(srv, { username: 'olga', role: 'owner' });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('an owner imports a SkyPilot catalog from the price-sheet form; again: all unchanged', async () => {
  // From the file: the rows with an accelerator, and those without one (CPU-only).
  const rows = fs.readFileSync(LAMBDA, 'utf8').trimEnd().split('\n').slice(1);
  const gpuRows = rows.filter((l) => l.split(',')[1] !== '').length;
  const cpuRows = rows.length - gpuRows;
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, olga);
  await page.goto(`${srv.url}/#/evidence/upload`);
  const form = page.locator('form.upload').filter({ hasText: 'Price sheet' });
  await form.getByLabel('Format').selectOption('skypilot');
  await form.getByLabel('Cloud of a SkyPilot catalog').fill('lambda');
  await form.getByLabel('Offers CSV').setInputFiles(LAMBDA);
  const count = (name) => form.locator(`[data-count="${name}"]`).textContent();
  await form.getByRole('button', { name: 'Upload' }).click();
  await form.getByTestId('upload-result').waitFor();
  assert.equal(Number(await count('new offers')), gpuRows, 'Lambda sells no spot: one offer per GPU row');
  assert.equal(Number(await count('CPU-only rows')), cpuRows);
  await form.getByRole('button', { name: 'Upload' }).click();
  await page.waitForFunction((n) => document.querySelector('[data-count="unchanged"]')?.textContent === n, String(gpuRows));
  assert.equal(await count('new offers'), '0');

  await page.goto(`${srv.url}/#/evidence/offers`);
  await page.locator('.list-results[data-loads="1"]').waitFor();
  assert.ok(await page.locator('.list-results tbody tr').count() >= 20, 'the offers are listed');
  assert.deepEqual(problems, []);
  await context.close();
});
