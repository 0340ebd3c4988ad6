// Uploads as a team member makes them from the browser: a real sacct file (no header line,
// columns named in the form) is sent as text/csv and answers inserted / skipped / duplicates;
// a file missing required columns shows each problem with its line; the runs list filters.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { drawnChart, launch, watchedPage, createTeam, createUser, signIn, dataDir, apiOk } from './lib/browser.mjs';

let srv;
let browser;
let tariq;

const FOX_FIELDS = 'JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,AveVMSize,' +
  'ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,Reservation,Submit,Suspended,' +
  'SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,Priority,JobName';
const sample = (name) => path.join(dataDir, 'samples/sacct', name);

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  tariq = await createUser(srv, { username: 'tariq', role: 'team', teams: ['vision'] });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('a sacct upload reports inserted, skipped and, on the second upload, duplicates', async () => {
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, tariq);
  await page.goto(`${srv.url}/#/evidence/upload`);
  const form = page.locator('form.upload').filter({ hasText: 'Job accounting' });
  await form.getByLabel('Cluster').fill('fox');
  await form.getByLabel('Team').fill('vision');
  await form.getByLabel('Columns').fill(FOX_FIELDS);
  await form.getByLabel('sacct file').setInputFiles(sample('sonar_fox_sacct_aP_noheader_gpu.txt'));
  const count = (name) => form.locator(`[data-count="${name}"]`).textContent();

  await form.getByRole('button', { name: 'Upload' }).click();
  await form.getByTestId('upload-result').waitFor();
  const inserted = Number(await count('inserted'));
  assert.ok(inserted > 0);
  // Jobs still RUNNING or PENDING are not stored: 100 + 31 in this file, less their steps.
  assert.ok(Number(await count('skipped')) > 0);
  assert.equal(await count('rejected'), '0');
  // No cluster map and no ?class=: the runs are unclassified, and the result says so.
  assert.match(await form.getByTestId('upload-warnings').textContent(), /unclassified: \d+ runs have no workload class/);

  await form.getByRole('button', { name: 'Upload' }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=upload-result]').length === 1 &&
    document.querySelector('[data-count=duplicates]').textContent !== '0');
  assert.equal(Number(await count('duplicates')), inserted);
  assert.equal(await count('inserted'), '0');

  // The same file for another cluster, classed in the form: no warning.
  await form.getByLabel('Cluster').fill('fox2');
  await form.getByLabel('Workload class').selectOption('production');
  await form.getByRole('button', { name: 'Upload' }).click();
  await page.waitForFunction((n) => document.querySelector('[data-count=inserted]')?.textContent === n, String(inserted));
  assert.equal(await form.getByTestId('upload-warnings').count(), 0);

  // The uploads tab lists the uploads, each with its warnings (stored with the upload).
  await page.goto(`${srv.url}/#/evidence/uploads`);
  await page.locator('.list-results[data-loads="1"]').waitFor();
  assert.equal(await page.locator('.list-results tbody tr').count(), 3);
  assert.equal(await page.locator('[data-testid=upload-warnings] li[data-code=unclassified]').count(), 1,
    'only the first upload stored runs without a class');

  // The runs are listed, and the state filter narrows them.
  await page.goto(`${srv.url}/#/evidence/runs`);
  await page.locator('.list-results[data-loads="1"]').waitFor();
  assert.ok(await page.locator('.list-results tbody tr').count() > 0);
  await page.getByLabel('State').selectOption('FAILED');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.locator('.list-results[data-loads="2"]').waitFor();
  const states = await page.locator('.list-results tbody td .state').allTextContents();
  assert.ok(states.length > 0 && states.every((s) => s === 'FAILED'), states.join(','));

  // The usage report groups them by team and class, with GPU-hours and failure rates: the
  // classed copy under production, the first upload's runs without a class.
  await page.goto(`${srv.url}/#/evidence/usage`);
  await page.locator('.list-results[data-loads="1"]').waitFor();
  const usage = await page.getByRole('table', { name: 'Job accounting by group' }).innerText();
  assert.match(usage, /team\s+class\s+Runs\s+GPU-hours\s+Failure rate/);
  assert.match(usage, /vision\s+production\s+59\s+30\.66\s+9%/);
  assert.match(usage, /vision\s+59\s+30\.66\s+9%/);
  // No cluster has a price map yet: the page says which runs have no price, by cluster.
  const unpriced = await page.getByRole('table', { name: /GPU runs without a price/ }).innerText();
  assert.match(unpriced, /fox2\s/);
  assert.match(unpriced, /fox\s/);
  // The same figures as a chart (Chart.js) with its text summary.
  assert.match(await drawnChart(page, 'usage'), /^GPU-hours by team and workload class: .*vision .*production 30\.66/);
  // And over time (GET /reports/usage/series): the jobs started on two days, so per day.
  assert.match(await drawnChart(page, 'usage-over-time'), /^GPU-hours per day from 2025-09-25 to 2025-09-26 \(2 days\), by team and class: vision · unclassified 30\.66; vision · production 30\.66;/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a sacct file without the required columns shows each problem with its line', async () => {
  const context = await browser.newContext();
  const { page } = await watchedPage(context);
  await signIn(page, srv, tariq);
  await page.goto(`${srv.url}/#/evidence/upload`);
  const form = page.locator('form.upload').filter({ hasText: 'Job accounting' });
  await form.getByLabel('Cluster').fill('galvani');
  await form.getByLabel('Team').fill('vision');
  await form.getByLabel('sacct file').setInputFiles(sample('cluster_utils_issue87_sacct_parsable2.txt'));
  await form.getByRole('button', { name: 'Upload' }).click();
  const alert = form.getByRole('alert').filter({ hasText: 'Upload refused (HTTP 422)' });
  await alert.waitFor();
  const text = await alert.innerText();
  assert.match(text, /line 1, Submitted: missing column Submit/);  // the field in words, not its JSON Pointer
  assert.match(text, /missing column End/);
  await context.close();
});

test('a vLLM sweep imports as a benchmark and nvidia-smi telemetry attaches to it, with its summary', async () => {
  await createUser(srv, { username: 'olga', role: 'owner', teams: ['vision'] });
  const ownerToken = mintToken(srv, 'olga');
  const workload = await apiOk(srv, 'POST', '/api/v1/workloads', {
    token: ownerToken, body: { team: 'vision', name: 'chat-3b', kind: 'inference', class: 'production', output_tokens_per_request: 250 },
  });
  const offer = await apiOk(srv, 'POST', '/api/v1/offers', {
    token: ownerToken,
    body: { provider: 'cloud', region: 'eu-1', instance_type: 'g6e.xlarge', gpu_model: 'L40S-48GB', gpus_per_instance: 1, gpu_memory_gb: 48, purchase_option: 'on_demand', price_per_hour: 1.86, currency: 'USD' },
  });
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, tariq);
  await page.goto(`${srv.url}/#/evidence/upload`);
  const lt = page.locator('form.upload').filter({ hasText: 'Load test' });
  await lt.getByLabel('Tool').selectOption('vllm');
  // Workload and offer are picked by name, never by id.
  await lt.getByRole('radio', { name: /^chat-3b \(vision\) · inference/ }).check();
  await lt.getByRole('radio', { name: /^g6e\.xlarge · cloud eu-1 · on_demand/ }).check();
  await lt.getByLabel('Only results where').fill('deployment=base');
  await lt.getByLabel('Result file').setInputFiles(path.join(dataDir, 'samples/vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl'));
  await lt.getByRole('button', { name: 'Upload' }).click();
  await lt.getByTestId('upload-result').waitFor();
  assert.equal(await lt.locator('[data-count="load points"]').textContent(), '3');
  const benchmarkId = await lt.locator('.upload-result button[data-id]').getAttribute('data-id');
  assert.match(benchmarkId, /^[0-9a-f-]{36}$/);

  const tel = page.locator('form.upload').filter({ hasText: 'GPU telemetry' });
  // The new benchmark is found by its workload's name.
  await tel.getByLabel('Name starts with').fill('chat');
  await tel.getByRole('radio', { name: /^chat-3b on g6e\.xlarge \(vision\)/ }).check();
  await tel.getByLabel('Telemetry file').setInputFiles(path.join(dataDir, 'samples/nvidia-smi/nesi_a100_nounits_l5_timeseries.csv'));
  await tel.getByRole('button', { name: 'Upload' }).click();
  // An 80 GB A100's samples for a benchmark on a 48 GB L40S offer: refused, with the reason.
  const refused = tel.getByTestId('upload-refused');
  await refused.waitFor();
  assert.match(await refused.innerText(), /^Not stored: the telemetry does not fit the benchmark's offer\./);
  assert.match(await refused.innerText(), /memory_mismatch: the GPUs report 80\.0 GiB/);
  await tel.getByLabel('Store even if it does not fit the offer').check();
  await tel.getByRole('button', { name: 'Upload' }).click();
  const summary = tel.getByTestId('telemetry-summary');
  await summary.waitFor();
  assert.equal(await tel.locator('[data-count="samples"]').textContent(), '7');
  assert.match(await summary.innerText(), /Duty cycle\s+mean 17%/);
  assert.match(await summary.innerText(), /GPU memory in use \(peak\)\s+78\.38 GB of 80 GB/);
  assert.match(await tel.getByTestId('upload-warnings').innerText(), /memory mismatch: .*stored because force was asked/);
  assert.deepEqual(problems, []);
  await context.close();
});
