// scripts/demo against this test's server, then the browser as each demo user: every main page
// shows the demo's data (the review in its second phase, the comparison with the trap banner,
// filled evidence lists, the charts drawn, the audit log with the decision), and a new owner
// signs a decision on the demo review without typing or pasting a single id or hash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../integration/lib/harness.mjs';
import { runDemo } from '../integration/lib/cli.mjs';
import { launch, watchedPage, signIn, openRoute, drawnChart, createUser, apiOk } from './lib/browser.mjs';

let srv;
let browser;
let dir;
let passwords;
const shots = path.join('build', 'screenshots');

before(async () => {
  srv = await startServer({ env: { CAPLEDGER_DRIFT_SWEEP_S: '0' } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-demo-browser-'));
  const stdout = runDemo(srv, dir);
  passwords = Object.fromEntries([...stdout.matchAll(/^\s+(demo-\w+)\s+\(\w+\)\s+password (\S+)$/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(Object.keys(passwords).sort(), ['demo-auditor', 'demo-member', 'demo-owner']);
  browser = await launch();
  fs.mkdirSync(shots, { recursive: true });
});
after(async () => {
  await browser?.close();
  await srv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function session(username, password = passwords[username]) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, { username, password });
  return { context, page, problems };
}
const landed = (page, route) => page.waitForFunction((l) => location.hash === `#/${l}`, route);
const rowsOf = async (page) => {
  await page.locator('.list-results[data-loads]').first().waitFor();
  return page.locator('.list-results tbody tr').count();
};
const REVIEW = 'Evaluation capacity for the 13B regression suite';

test('the owner: reviews, the cockpit with the trap, both comparisons\' charts, evidence and its charts, audit', async () => {
  const { context, page, problems } = await session('demo-owner');
  await landed(page, 'reviews');
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  await page.getByRole('link', { name: REVIEW }).click();
  await page.getByTestId('cockpit').getByTestId('winner').waitFor();
  assert.equal(await page.getByTestId('review-day').innerText(), 'Day 41 of 90 · Days 31–60: smallest complete workflow');
  assert.match(await page.getByTestId('review-status').innerText(), /needs decision/);
  const cockpit = page.getByTestId('cockpit');
  assert.equal(await cockpit.getByTestId('winner').innerText(), 'h100-nvme-cache');
  assert.match(await cockpit.locator('[data-flag=hourly_price_trap]').innerText(), /a100-streamed is the cheapest per GPU-hour/);
  assert.match(await drawnChart(page, 'cost-distribution'), /a100-streamed expected \$/);
  assert.match(await page.locator('.decisions tbody').innerText(), /revise\s+h100-nvme-cache\s+demo-owner/);
  assert.equal(await page.locator('.phases tbody tr').filter({ hasText: 'Boundary test: cache eviction' }).count(), 1);
  await page.screenshot({ path: path.join(shots, 'demo-review.png'), fullPage: true });

  // Compare: the stored scenarios by name; the inference one draws demand against replicas and
  // latency against load with the SLO.
  await openRoute(page, srv, 'compare');
  const stored = page.getByLabel('…or start from a stored scenario');
  await stored.selectOption({ label: 'Nightly eval: A100 streamed vs H100 with NVMe cache (eval-platform)' });
  await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('"options"'));
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await page.locator('[data-flag=hourly_price_trap]').waitFor();
  assert.equal(await page.getByTestId('winner').innerText(), 'h100-nvme-cache');
  await stored.selectOption({ label: 'Chat assistant: base routing vs KV-cache-aware routing on 4x L40S (eval-platform)' });
  await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('demand_rps_by_hour'));
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await page.getByTestId('winner').filter({ hasText: 'kvcache-routing-autoscaled' }).waitFor();
  assert.match(await drawnChart(page, 'demand'), /^Demand over 24 hours from 3 to 52 requests\/s; replicas provisioned: /);
  assert.match(await drawnChart(page, 'latency'), /^ttft_p99_ms against the load served, SLO 175 ms: base-routing-autoscaled meets it up to [0-9.]+ req\/s served; kvcache-routing-autoscaled meets it up to [0-9.]+ req\/s served/);
  await page.screenshot({ path: path.join(shots, 'demo-compare-inference.png'), fullPage: true });

  // Evidence: the lists are filled; a benchmark's duty cycle over time, idle stretch listed.
  await openRoute(page, srv, 'evidence/benchmarks');
  assert.equal(await rowsOf(page), 5);
  await page.locator('.list-results tbody tr').filter({ hasText: 'a100-streamed' }).getByRole('link').click();
  await page.getByTestId('benchmark-view').locator('h3').filter({ hasText: 'llm-13b-eval-suite on a100-streamed' }).waitFor();
  await page.locator('[data-testid=benchmark-view] .list-results[data-loads="1"]').waitFor({ state: 'attached' });
  const duty = await drawnChart(page, 'duty-cycle');
  assert.match(duty, /^Duty cycle of 7 samples from 1 GPU\(s\) over 30 s from 07:04:28 UTC: mean 17%\. 1 idle stretch \(duty cycle below 5% for at least 10 s\), 10 s in all; the longest 10 s from 07:04:28 UTC\.$/);
  assert.equal(await page.getByTestId('idle-stretches').locator('tbody tr').count(), 1);
  await page.screenshot({ path: path.join(shots, 'demo-duty-cycle.png'), fullPage: true });
  // A stricter rule (idle below 30%) finds the tail too: the chart and its table follow.
  await page.getByLabel('Idle below duty cycle').fill('0.3');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('.list-results[data-loads="2"]').waitFor();
  assert.match(await drawnChart(page, 'duty-cycle'), /1 idle stretch \(duty cycle below 30% for at least 10 s\)/);
  assert.match(await page.getByTestId('idle-stretches').locator('tbody tr').innerText(), /07:04:28 UTC\s+07:04:43 UTC\s+15 s\s+3/);

  for (const [route, min] of [['evidence/workloads', 2], ['evidence/offers', 3], ['evidence/runs', 20], ['evidence/uploads', 5]]) {
    await openRoute(page, srv, route);
    assert.ok(await rowsOf(page) >= min, route);
  }
  await openRoute(page, srv, 'evidence/usage');
  await page.locator('.list-results[data-loads="1"]').waitFor();
  assert.match(await drawnChart(page, 'usage'), /^GPU-hours by team and workload class: eval-platform production /);
  // The Fox jobs of 2025-09 and the nightly runs after the decision (dated from today) span months:
  // the chart goes per week by itself; per day on asking, the latest 120 days.
  assert.match(await drawnChart(page, 'usage-over-time'), /^GPU-hours per week from 2025-09-22 to \d{4}-\d\d-\d\d \(\d+ weeks\), by team and class: eval-platform · production [\d.,]+;/);
  await page.getByLabel('Over time, per').selectOption('day');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('.list-results[data-loads="2"]').waitFor();
  assert.match(await drawnChart(page, 'usage-over-time'), /^GPU-hours per day from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d \(120 days, the latest kept\), by team and class: eval-platform · production [\d.,]+;/);
  await page.screenshot({ path: path.join(shots, 'demo-usage.png'), fullPage: true });

  await openRoute(page, srv, 'alerts');
  assert.match(await page.locator('main').innerText(), /throughput: 185 → 112/);
  await openRoute(page, srv, 'audit');
  await page.locator('main tbody tr').filter({ hasText: 'revise' }).filter({ hasText: REVIEW }).first().waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('the team member lands on Evidence with the team\'s records; the auditor on Audit with the decision', async () => {
  const m = await session('demo-member');
  await landed(m.page, 'evidence');
  await m.page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  assert.match(await m.page.locator('.list-results tbody').innerText(), /llm-13b-eval-suite[\s\S]*chat-assistant-3b|chat-assistant-3b[\s\S]*llm-13b-eval-suite/);
  await openRoute(m.page, srv, 'reviews');
  assert.match(await m.page.locator('main').innerText(), new RegExp(REVIEW));
  assert.deepEqual(m.problems, []);
  await m.context.close();

  const a = await session('demo-auditor');
  await landed(a.page, 'audit');
  await a.page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  const entry = a.page.locator('main tbody tr').filter({ hasText: 'revise' }).filter({ hasText: REVIEW });
  assert.equal(await entry.count(), 1);
  await entry.getByRole('link', { name: 'full record' }).click();
  await a.page.locator('[data-testid=decision-inclusion][data-ok=true]').waitFor();
  assert.equal((await a.page.locator('[data-testid=decision-record] dd[data-field=chosen_option]').innerText()).trim(), 'h100-nvme-cache');
  await a.page.waitForFunction(() => [...document.querySelectorAll('dd[data-field=evidence] .evidence-name')].every((x) => x.textContent !== ''));
  assert.match(await a.page.locator('dd[data-field=evidence]').innerText(), /benchmark: llm-13b-eval-suite on a100-streamed[\s\S]*upload: GPU telemetry/);
  assert.deepEqual(a.problems, []);
  await a.context.close();
});

test('a new owner signs a decision on the demo review with pickers only: no id or hash typed', async () => {
  await createUser(srv, { username: 'nora', role: 'owner', password: 'nora has a long password 7' });
  const { context, page, problems } = await session('nora', 'nora has a long password 7');
  await landed(page, 'reviews');
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  await page.getByRole('link', { name: REVIEW }).click();
  await page.getByTestId('cockpit').getByTestId('winner').waitFor();
  const form = page.locator('form.decision-form');
  // Everything an id names is chosen, not typed: supersedes (the current decision, by what it
  // decided and when), the cited comparison (the cockpit's, by scenario and date), the chosen
  // option (its winner), and the evidence (benchmarks by workload on offer).
  await page.waitForFunction(() => document.querySelector('form.decision-form input[name=chosen_option]').value === 'h100-nvme-cache');
  assert.match(await form.getByLabel('Supersedes').locator('option:checked').innerText(), /^revise h100-nvme-cache \(\d{4}-\d\d-\d\d, leaf \d+\)$/);
  const cited = form.locator('fieldset[data-picker=comparisons] input:checked');
  assert.equal(await cited.count(), 1);
  assert.match(await form.locator(`label[for="${await cited.getAttribute('id')}"]`).innerText(), /^Nightly eval: A100 streamed vs H100 with NVMe cache · eval-platform · .* — winner h100-nvme-cache · hourly-price trap/);
  await form.locator('fieldset[data-picker=benchmarks]').getByRole('checkbox', { name: /^llm-13b-eval-suite on h100-nvme-cache \(eval-platform\)/ }).first().check();
  await form.getByLabel('Accepted by').fill('Head of ML platform');
  await form.getByLabel('Justification').fill('The cache was evicted once: revise until the boundary test has run.');
  // Nothing typed looks like an id or a hash.
  const typed = await form.locator('input[type=text], textarea').evaluateAll((els) => els.map((e) => e.value));
  assert.ok(typed.every((v) => !/[0-9a-f]{8}-[0-9a-f]{4}|[0-9a-f]{64}/.test(v)), JSON.stringify(typed));
  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const receipt = page.getByTestId('decision-receipt');
  await receipt.locator('.alert.success').filter({ hasText: 'recomputed the inclusion proof' }).waitFor();
  await page.getByTestId('review-status').filter({ hasText: 'decided' }).waitFor();
  const review = (await apiOk(srv, 'GET', '/api/v1/reviews')).items.find((r) => r.title === REVIEW);
  const decisions = (await apiOk(srv, 'GET', `/api/v1/decisions?review=${review.id}`)).items;
  assert.equal(decisions.length, 2);
  const mine = decisions.find((d) => d.signer === 'nora');
  const first = decisions.find((d) => d.signer === 'demo-owner');
  assert.equal(mine.record.supersedes, first.id);
  assert.deepEqual(mine.record.comparison_sha256, first.record.comparison_sha256);
  assert.equal(mine.record.chosen_option, 'h100-nvme-cache');
  assert.equal(mine.record.evidence.length, 1);
  await page.screenshot({ path: path.join(shots, 'demo-new-owner-signed.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});
