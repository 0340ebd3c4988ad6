// The What-if page: a team member replays the team's runs (a Slurm sample uploaded through the
// API) on 1 to 4 owned GPUs bursting to another offer, and reads the plain sentence, the frontier
// chart (drawn, recommendation marked), the table and what a replay cannot know; the figures on
// the page are those of the stored replay the API returns. A refusal names its field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../integration/lib/harness.mjs';
import { api } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { launch, watchedPage, createTeam, createUser, signIn, apiOk, drawnChart, dataDir } from './lib/browser.mjs';

let srv, browser, user, token, a100, h100;

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  user = await createUser(srv, { username: 'mei', role: 'team', teams: ['vision'] });
  await createUser(srv, { username: 'olga', role: 'owner' });
  const owner = mintToken(srv, 'olga');
  const offer = (name, price) => apiOk(srv, 'POST', '/api/v1/offers', { token: owner, body: { provider: 'lambda', region: 'us-east-1', instance_type: name, gpu_model: 'A100-80GB', gpus_per_instance: 1, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: price, currency: 'USD' } });
  a100 = await offer('gpu_1x_a100', 1.29);
  h100 = await offer('gpu_1x_h100', 2.49);
  token = mintToken(srv, 'mei');
  const sacct = fs.readFileSync(path.join(dataDir, 'samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt'));
  const fields = 'JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,Priority,JobName';
  const up = await api(srv.url, 'POST', `/api/v1/runs?cluster=fox&team=vision&fields=${fields}`, { token, body: sacct, headers: { 'Content-Type': 'text/csv' } });
  assert.equal(up.status, 201, up.text);
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

test('What-if: replay, sentence, frontier and the figures of the stored replay', async () => {
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);
  await page.goto(`${srv.url}/#/whatif`);
  await page.getByLabel('Cluster', { exact: true }).fill('fox');
  await page.getByLabel('Pool offer (owned GPUs)').selectOption(a100.id);
  await page.getByLabel('to', { exact: true }).fill('4');
  await page.getByLabel('Overflow offer').selectOption(h100.id);
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.getByTestId('whatif-result').waitFor();
  const sha = await page.getByTestId('whatif-sha').innerText();
  const stored = await apiOk(srv, 'GET', `/api/v1/whatif/${sha}`, { token });
  const rec = stored.result.arrangements.find((a) => a.name === stored.result.recommended);
  assert.ok(rec, 'a recommendation within 30 minutes');
  const sentence = await page.getByTestId('whatif-sentence').first().innerText();
  assert.match(sentence, new RegExp(`^Owning ${rec.pool_gpus} GPUs? and bursting after 20 min: p90 wait`));
  assert.ok(sentence.includes(`$${rec.cost_per_completed_job.toFixed(2)} per completed job`), sentence);
  assert.deepEqual(stored.result.arrangements.map((a) => a.name), ['own@1', 'own@2', 'own@3', 'own@4']);
  // drawn (painted pixels), its words the canvas's description
  assert.match(await drawnChart(page, 'whatif-frontier'), new RegExp(`recommended: ${rec.name}`));
  assert.match(await page.getByTestId('whatif-cannot-know').innerText(), /demand that never arrived/);
  assert.deepEqual(problems, []);

  // One click hands an arrangement to the Compare page, whose option then rests on the replay:
  // the comparison the server computes has the replayed waits (resolved before hashing).
  await page.getByTestId('whatif-use').click();
  await page.getByTestId('whatif-handoff').waitFor();
  assert.match(await page.getByTestId('whatif-handoff').innerText(), new RegExp(`From the what-if replay: ${rec.name}`));
  const scenario = {
    workload: { kind: 'evaluation', name: 'nightly eval', target_units: 36000, unit: 'samples' },
    assumptions: { trials: 2000 },
    options: [{ name: 'owned', offer: { gpu_model: 'A100-80GB', gpus_per_instance: 1, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: 1.29, currency: 'USD' },
                benchmark: { throughput_units_per_s: 10, queue_wait_s: 60 } }],
  };
  await page.getByLabel('Scenario JSON').fill(JSON.stringify(scenario));
  await page.getByLabel('Scenario JSON').dispatchEvent('input');
  await page.getByLabel('Option', { exact: true }).selectOption({ label: 'owned' });
  await page.getByTestId('whatif-apply-waits').click();
  const written = JSON.parse(await page.getByLabel('Scenario JSON').inputValue());
  assert.deepEqual(written.options[0].benchmark.queue_wait_from_whatif, { sha256: sha, arrangement: rec.name });
  assert.equal(written.options[0].benchmark.queue_wait_s, undefined);
  const computed = await apiOk(srv, 'POST', '/api/v1/compare', { token, body: written });
  // the same hash as typing the arrangement's waits in: resolved before hashing
  const typed = structuredClone(written);
  delete typed.options[0].benchmark.queue_wait_from_whatif;
  typed.options[0].benchmark.queue_wait_quantiles_s = rec.wait_quantiles_s;
  assert.equal(computed.input_sha256, (await apiOk(srv, 'POST', '/api/v1/compare', { token, body: typed })).input_sha256);
  await page.goto(`${srv.url}/#/whatif`);

  // a refusal names the field
  await page.getByLabel('step').fill('0');
  await page.getByRole('button', { name: 'Replay' }).click();
  await page.locator('.form-status [role=alert]').waitFor();
  assert.match(await page.locator('.form-status [role=alert]').innerText(), /Step: .*a number > 0/);
  await context.close();
});
