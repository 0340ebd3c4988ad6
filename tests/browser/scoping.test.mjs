// Team scoping as a team member sees it in the browser: the Evidence page lists their teams'
// workloads and never another team's, even when they filter by that team's name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { launch, watchedPage, createTeam, createUser, signIn, apiOk } from './lib/browser.mjs';

let srv;
let browser;
let tariq;
let auditor;

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  await createTeam(srv, 'nlp');
  await createUser(srv, { username: 'olga', role: 'owner' });
  tariq = await createUser(srv, { username: 'tariq', role: 'team', teams: ['vision'] });
  auditor = await createUser(srv, { username: 'aude', role: 'auditor' });
  const ownerToken = mintToken(srv, 'olga');
  const workload = (team, name) => apiOk(srv, 'POST', '/api/v1/workloads', {
    token: ownerToken,
    body: { team, name, kind: 'training', class: 'production', target_units: 1e9, unit: 'tokens', memory_required_gb: 40 },
  });
  await workload('vision', 'resnet-sweep');
  await workload('vision', 'detector-finetune');
  await workload('nlp', 'secret-llm-pretrain');
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

// The names listed once the list has answered `loads` times.
async function workloadNames(page, loads = 1) {
  await page.locator(`[data-list="/workloads"] .list-results[data-loads="${loads}"]`).waitFor();
  return page.locator('[data-list="/workloads"] tbody tr td:first-child').allTextContents();
}

test("a team member sees their team's workloads and not another team's", async () => {
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, tariq);
  await page.goto(`${srv.url}/#/evidence/workloads`);
  const names = await workloadNames(page);
  assert.deepEqual(names.sort(), ['detector-finetune', 'resnet-sweep']);
  assert.ok(!(await page.locator('main').innerText()).includes('secret-llm-pretrain'));

  // Asking for the other team by name shows nothing of it either.
  await page.getByLabel('Team').fill('nlp');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const filtered = await workloadNames(page, 2);
  assert.ok(!filtered.includes('secret-llm-pretrain'), filtered.join(','));
  assert.ok(!(await page.locator('main').innerText()).includes('secret-llm-pretrain'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('an auditor sees every team\'s workloads', async () => {
  const context = await browser.newContext();
  const { page } = await watchedPage(context);
  await signIn(page, srv, auditor);
  await page.goto(`${srv.url}/#/evidence/workloads`);
  const names = await workloadNames(page);
  assert.deepEqual(names.sort(), ['detector-finetune', 'resnet-sweep', 'secret-llm-pretrain']);
  await context.close();
});
