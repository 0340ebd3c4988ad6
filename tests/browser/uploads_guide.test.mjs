// Issue 23, items 3 and 4: evidence uploads that guide. A file sent to the wrong upload is told
// which upload reads it (the server's looks_like, from core/formats/sniff, so API users get the
// same guess); the GPU-mismatch refusal names the form's check box, not ?force=true; the
// telemetry summary says memory in use is not memory required; an upload shows its progress in
// bytes and lines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../integration/lib/harness.mjs';
import { startDemo } from './lib/demo.mjs';
import { launch, watchedPage, signIn, openRoute, readData, apiOk } from './lib/browser.mjs';

let demo;
let browser;
let page;
let context;
let problems;
let benchA100;

before(async () => {
  demo = await startDemo();
  browser = await launch();
  const list = await apiOk(demo.srv, 'GET', '/api/v1/benchmarks?limit=50', { token: demo.tokens['demo-member'] });
  benchA100 = list.items.find((b) => /a100/.test(b.offer_name));
  assert.ok(benchA100, 'the demo has an A100 benchmark');
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  ({ page, problems } = await watchedPage(context));
  await signIn(page, demo.srv, { username: 'demo-member', password: demo.passwords['demo-member'] });
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

const uploadForm = (kind) => page.locator(`form[data-upload=${kind}]`);
async function pickBenchmark(form) {
  await form.getByLabel('Name starts with').fill('llm-13b');
  await form.locator('.picker-list label').filter({ hasText: /a100-streamed/ }).first().click();
}

test('the API: a sacct file sent as telemetry is answered with what it looks like', async () => {
  const r = await api(demo.srv.url, 'POST', `/api/v1/benchmarks/${benchA100.id}/telemetry`, {
    token: demo.tokens['demo-member'],
    headers: { 'Content-Type': 'text/csv' },
    body: readData('samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt'),
  });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.looks_like.upload, 'runs');
  assert.equal(r.json.looks_like.format, 'sacct');
  assert.match(r.json.detail, /^This looks like Slurm sacct output: upload it as job accounting \(POST \/api\/v1\/runs\)\.$/);
});

test('a sacct file in the telemetry form names Job accounting; an MLPerf log sent as vLLM names the tool', async () => {
  await openRoute(page, demo.srv, 'evidence/upload');
  const tele = uploadForm('telemetry');
  await pickBenchmark(tele);
  await tele.locator('input[type=file]').setInputFiles({ name: 'jobs.csv', mimeType: 'text/csv', buffer: Buffer.from(readData('samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt')) });
  await tele.getByRole('button', { name: 'Upload', exact: true }).click();
  const refused = tele.getByTestId('upload-refused');
  await refused.waitFor();
  assert.match(await refused.innerText(), /^This looks like Slurm sacct output: upload it under Job accounting \(Slurm sacct\)\./);
  assert.doesNotMatch(await refused.innerText(), /Columns/);
  assert.equal(await refused.getByRole('link', { name: 'Go to Job accounting' }).getAttribute('href'), '#/evidence/upload');

  const lt = uploadForm('loadtest');
  await lt.getByLabel('Tool').selectOption('vllm');
  await lt.locator('fieldset[data-picker=workloads] .picker-list label').first().click();
  await lt.locator('fieldset[data-picker=offers] .picker-list label').first().click();
  await lt.locator('input[type=file]').setInputFiles({ name: 'summary.txt', mimeType: 'text/plain', buffer: Buffer.from(readData('samples/mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt')) });
  await lt.getByRole('button', { name: 'Upload', exact: true }).click();
  const r2 = lt.getByTestId('upload-refused');
  await r2.waitFor();
  assert.match(await r2.innerText(), /^This looks like an MLPerf LoadGen log: choose the tool “MLPerf Inference” in this form and upload it again\./);
  assert.doesNotMatch(await r2.innerText(), /not JSON/);
  assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
});

test('telemetry of another GPU is refused with the form\'s check box named, then stored when ticked', async () => {
  await openRoute(page, demo.srv, 'evidence/upload');
  const tele = uploadForm('telemetry');
  await pickBenchmark(tele);
  await tele.locator('input[type=file]').setInputFiles({ name: 'h100.csv', mimeType: 'text/csv', buffer: Buffer.from(readData('samples/nvidia-smi/nvidia_gpu_exporter_h100-mig_590.48.01_load_query-gpu.csv')) });
  await tele.getByRole('button', { name: 'Upload', exact: true }).click();
  const refused = tele.getByTestId('upload-refused');
  await refused.waitFor();
  const words = await refused.innerText();
  assert.doesNotMatch(words, /force=true/);
  assert.match(words, /tick “Store even if it does not fit the offer” above and upload it again/);
  await tele.getByLabel('Store even if it does not fit the offer').check();
  await tele.getByRole('button', { name: 'Upload', exact: true }).click();
  await tele.getByTestId('upload-result').waitFor();
  // Memory in use is explained as not the requirement.
  assert.match(await tele.getByTestId('memory-used').innerText(), /Memory in use is not memory required/);
});

test('an upload shows its progress in bytes and lines', async () => {
  await openRoute(page, demo.srv, 'evidence/upload');
  const runs = uploadForm('runs');
  // 4 MB of sacct --parsable2 lines, one finished one-GPU job each.
  const lines = ['JobID|User|Account|Partition|State|Submit|Start|End|AllocTRES'];
  for (let i = 0; lines.length < 40000; i++) {
    lines.push(`${500000 + i}|ana|eval-platform|accel|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T01:00:00|billing=1,cpu=1,gres/gpu=1,mem=8G,node=1`);
  }
  const body = `${lines.join('\n')}\n`;
  await runs.getByLabel('Cluster').fill('progress-test');
  await runs.getByLabel('Team (instead of the Account column)').fill('eval-platform');
  await runs.locator('input[type=file]').setInputFiles({ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.from(body) });
  // Record every progress text the page shows while it sends.
  await page.evaluate(() => {
    window.__progress = [];
    const el = document.querySelector('form[data-upload=runs] .progress-text');
    new MutationObserver(() => window.__progress.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
  });
  await runs.getByRole('button', { name: 'Upload', exact: true }).click();
  await runs.getByTestId('upload-result').or(runs.getByRole('alert')).first().waitFor({ timeout: 60_000 });
  const seen = await page.evaluate(() => window.__progress);
  const mbText = `${(body.length / 1e6).toFixed(1)} MB`;
  const total = lines.length.toLocaleString('en-US');
  assert.ok(seen.some((t) => new RegExp(`^Sent [\\d.]+ MB of ${mbText.replace('.', '\\.')} \\(\\d+ %\\)`).test(t)), seen.join(' | '));
  assert.equal(seen.at(-1), `Sent ${mbText}, ${total} lines.`);
  assert.equal(await runs.locator('progress').evaluate((p) => p.value), 1);
});

test('a refused upload names its form fields in words, not query parameters', async () => {
  await openRoute(page, demo.srv, 'evidence/upload');
  const runs = uploadForm('runs');
  await runs.getByLabel('Cluster').fill('x'.repeat(300));
  await runs.locator('input[type=file]').setInputFiles({ name: 'jobs.txt', mimeType: 'text/plain', buffer: Buffer.from('JobID|State\n1|COMPLETED\n') });
  await runs.getByRole('button', { name: 'Upload', exact: true }).click();
  const alert = runs.getByRole('alert').first();
  await alert.waitFor();
  const text = await alert.innerText();
  assert.doesNotMatch(text, /query parameter|\?cluster/);
  assert.match(text, /“Cluster” is too long: at most 255 bytes/);
});
