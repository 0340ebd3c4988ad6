// The Compare page on the two worked examples of docs/cost-model.md: the hourly-price trap is
// flagged with its ratio, the winner and ranking match the engine, each option's stacked bar
// is made of segments that sum to its expected cost per outcome, infeasible options say why,
// and the break-even list reads as sentences. Screenshots go to test-results/ for a human look.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { api, startServer } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { drawnChart, launch, watchedPage, createTeam, createUser, signIn, readData, resultsDir, apiOk } from './lib/browser.mjs';

let srv;
let browser;
let user;

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  user = await createUser(srv, { username: 'tariq', role: 'team', teams: ['vision'] });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

const close = (a, b, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

// Fills the scenario and presses Compare; waits for the server's answer (status: what it must
// be; null: the page refuses the text itself and sends nothing).
async function compareOnPage(page, scenarioText, { status = 200 } = {}) {
  await page.goto(`${srv.url}/#/compare`);
  await page.locator('[data-route="compare"]').waitFor({ state: 'attached' });
  await page.getByLabel('Scenario JSON').fill(scenarioText);
  const button = page.getByRole('button', { name: 'Compare', exact: true });
  if (status === null) {
    await button.click();
    return;
  }
  // The answer the page renders: not a 429 or 503 it waits out (the engine busy).
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/compare' &&
    r.request().method() === 'POST' && ![429, 503].includes(r.status()), { timeout: 90_000 });
  answered.catch(() => {}); // awaited below; a refusal by the page may leave it to time out
  await button.click();
  const refused = page.locator('.compare-form .form-status .alert').waitFor({ timeout: 90_000 }).then(() => null, () => answered);
  const reply = await Promise.race([answered, refused]);
  if (!reply) {
    throw new Error(`the page sent nothing: "${await page.locator('.compare-form .form-status').innerText()}"; ` +
      `the text box holds ${(await page.getByLabel('Scenario JSON').inputValue()).length} characters of ${scenarioText.length}`);
  }
  assert.equal(reply.status(), status, await reply.text());
}

// What the page drew for each option: segment values, their total, widths in pixels.
function readBars(page) {
  return page.$$eval('article.option', (cards) => cards.map((card) => {
    const bar = card.querySelector('.stack');
    const segs = [...bar.querySelectorAll('.seg')];
    return {
      name: card.dataset.option,
      total: Number(bar.dataset.total),
      values: segs.map((s) => Number(s.dataset.value)),
      keys: segs.map((s) => s.dataset.key),
      segWidthPx: segs.reduce((n, s) => n + s.getBoundingClientRect().width, 0),
      trackPx: bar.getBoundingClientRect().width,
      text: card.innerText,
    };
  }));
}

test('training example: trap flag, winner, ranking, bars that sum to the total, break-even sentences', async () => {
  // engine 1's worked example and figures: pinned to engine 1 (new comparisons use engine 2)
  const scenarioText = JSON.stringify({ ...JSON.parse(readData('spec/example-training.json')), engine: 1 });
  const engine = await apiOk(srv, 'POST', '/api/v1/compare', { body: JSON.parse(scenarioText) });
  const expected = JSON.parse(readData('spec/example-training.expected.json'));

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);
  await compareOnPage(page, scenarioText);
  await page.getByTestId('winner').waitFor();

  // The trap, by name, with the ratio the engine computed.
  const trap = page.locator('[data-flag="hourly_price_trap"]');
  await trap.waitFor();
  const trapText = await trap.innerText();
  assert.match(trapText, /Hourly-price trap/);
  assert.match(trapText, /a100-40g-spot is the cheapest per GPU-hour \(\$1\.23\)/);
  assert.match(trapText, /h100-on-demand is the cheapest per completed result/);
  assert.match(trapText, /1\.83×/);
  assert.ok(close(Number(await trap.locator('.ratio').getAttribute('data-ratio')), expected.flags.hourly_price_trap.ratio));
  assert.match(await page.locator('[data-flag="overhead_dominates"]').innerText(), /a100-40g-spot, h100-reserved/);

  assert.equal(await page.getByTestId('winner').textContent(), engine.winner);
  assert.deepEqual(await page.locator('.ranking .rank-name').allTextContents(), engine.ranking);

  const bars = await readBars(page);
  assert.equal(bars.length, 4);
  const widest = Math.max(...bars.map((b) => b.total));
  for (const bar of bars) {
    const want = expected.options.find((o) => o.name === bar.name);
    const sum = bar.values.reduce((a, b) => a + b, 0);
    assert.ok(close(sum, want.expected_cost_per_outcome), `${bar.name}: segments sum to ${sum}, want ${want.expected_cost_per_outcome}`);
    assert.ok(close(bar.total, want.expected_cost_per_outcome), bar.name);
    // Drawn widths follow the values: the bar fills total/widest of the track (±2 px).
    assert.ok(Math.abs(bar.segWidthPx - (bar.trackPx * bar.total) / widest) <= 2, `${bar.name}: ${bar.segWidthPx} of ${bar.trackPx} px`);
    assert.ok(bar.keys.includes('useful') && bar.keys.includes('engineer_wait'), bar.name);
    assert.match(bar.text, /Expected cost per outcome/i);
    assert.match(bar.text, /p50 .* p90 .* p99/);
    assert.match(bar.text, /Time to result/i);
  }
  const l40s = bars.find((b) => b.name === 'l40s-on-demand');
  assert.match(l40s.text, /infeasible/);
  assert.match(l40s.text, /Not feasible: does not fit in GPU memory/);
  assert.match(bars.find((b) => b.name === 'a100-40g-spot').text, /\$5,101\.07/);

  const sentences = await page.locator('.break-even li').allTextContents();
  assert.equal(sentences.length, expected.break_even.length);
  assert.ok(sentences.includes("If h100-on-demand's price per hour rose from $55.00 to $79.71, h100-reserved would win."), sentences.join('\n'));
  assert.ok(sentences.includes("If h100-reserved's reserved utilisation rose from 45% to 65.1%, h100-reserved would win."), sentences.join('\n'));

  // Charts with data and words: the Monte Carlo distribution (expected and p90 marked, why p90
  // can sit below the mean) and how far each input can move before the winner changes.
  const dist = await drawnChart(page, 'cost-distribution');
  for (const o of expected.options.filter((x) => x.feasible)) assert.match(dist, new RegExp(`${o.name} expected \\$`));
  assert.match(await page.getByTestId('p90-why').innerText(), /p90 .*(below|mean)/);
  assert.match(await drawnChart(page, 'tornado'), /h100-on-demand's price per hour \+45%/);
  fs.mkdirSync(resultsDir, { recursive: true });
  await page.screenshot({ path: path.join(resultsDir, 'compare-training.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test('inference example: cost per accepted request, demand scenarios, the trap between l4 and the shared pool', async () => {
  const scenarioText = JSON.stringify({ ...JSON.parse(readData('spec/example-inference.json')), engine: 1 });
  const expected = JSON.parse(readData('spec/example-inference.expected.json'));
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);
  await compareOnPage(page, scenarioText);
  await page.getByTestId('winner').waitFor();
  assert.equal(await page.getByTestId('winner').textContent(), 'h100-shared-pool');
  const trapText = await page.locator('[data-flag="hourly_price_trap"]').innerText();
  assert.match(trapText, /l4-dedicated is the cheapest per GPU-hour \(\$0\.80\)/);
  assert.match(trapText, /cheapest per accepted request/);
  assert.match(await page.locator('.options > h3').innerText(), /Cost per accepted request/);
  const bars = await readBars(page);
  for (const bar of bars) {
    const want = expected.options.find((o) => o.name === bar.name);
    // The inference breakdown is of the total cost over the horizon.
    assert.ok(close(bar.values.reduce((a, b) => a + b, 0), want.expected_total_cost), bar.name);
    assert.match(bar.text, /By demand scenario\s*low \$[\d.]+ · expected \$[\d.]+ · high \$[\d.]+/i);
  }
  assert.match(bars.find((b) => b.name === 'h100-shared-pool').text, /\$0\.00065/);
  // Hourly demand against the replicas each option provisions, and latency against load with
  // the SLO line.
  assert.match(await drawnChart(page, 'demand'), /^Demand over 24 hours from 1 to 17 requests\/s; replicas provisioned: l4-dedicated 21–21; /);
  assert.match(await drawnChart(page, 'latency'), /ttft_p99_ms against the load served, SLO 800 ms: l4-dedicated meets it up to 1 req\/s served; h100-autoscaled meets it up to 9\.9 req\/s served/);
  await page.screenshot({ path: path.join(resultsDir, 'compare-inference.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test('an invalid scenario shows every problem, its field named in words (the API keeps the pointer)', async () => {
  const scenario = JSON.parse(readData('spec/example-training.json'));
  scenario.options[1].offer.price_per_hour = -5;
  delete scenario.workload.target_units;
  const context = await browser.newContext();
  const { page } = await watchedPage(context);
  await signIn(page, srv, user);
  await compareOnPage(page, JSON.stringify(scenario), { status: 422 });
  const alert = page.getByRole('alert').filter({ hasText: 'The scenario has problems' });
  await alert.waitFor();
  const text = await alert.innerText();
  assert.match(text, /Options › item 2 › Offer › Price per hour: must be > 0/);
  assert.match(text, /Workload › Target units: required field is missing/);
  assert.doesNotMatch(text, /\/options\/1|\/workload\//);
  await compareOnPage(page, '{"workload": ', { status: null });
  await page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor();
  await context.close();
});

// Engine 2 on the page: the reliable figure named for what it is, the cash cost beside the
// fully loaded one for the paid reservation, SLO attainment per demand scenario with the hours it
// falls short, and the engine that made each comparison (an engine-1 comparison says so).
test('engine 2: the reliable figure named, cash beside fully loaded, SLO attainment per scenario, the engine', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);

  await compareOnPage(page, readData('spec/example-training-v2.json'));
  await page.getByTestId('winner').waitFor();
  assert.equal(await page.getByTestId('engine').innerText(), 'Engine 2 (capledger-cost/2.0.0)');
  const reserved = page.locator('article.option[data-option="h100-reserved"]');
  assert.match(await reserved.innerText(), /Reliable cost per outcome\s*\$[\d,.]+\s*the mean of the worst 10 % of months at 4 training runs a month/i);
  assert.equal(await reserved.getByTestId('cash-cost').innerText(), '$1,220.27');
  assert.equal(await page.locator('article.option[data-option="h100-on-demand"]').getByTestId('cash-cost').count(), 0,
    'no cash line where nothing is paid already');
  assert.match(await page.locator('.summary').innerText(), /reliably: the mean of the worst 10 % of months at 4 training runs a month/);

  await compareOnPage(page, readData('spec/example-inference-v2.json'));
  await page.getByTestId('winner').waitFor();
  const fleet21 = page.locator('article.option[data-option="l4-dedicated-21"]');
  assert.equal(await fleet21.getByTestId('slo-attainment').innerText(), 'low 100% · expected 100% · high 86.0% (short in 240 h)');
  assert.match(await fleet21.innerText(), /Not feasible: cannot hold the SLO under every demand scenario/);
  assert.match(await fleet21.innerText(), /below the floor in high/);

  const one = { ...JSON.parse(readData('spec/example-training.json')), engine: 1 };
  await compareOnPage(page, JSON.stringify(one));
  await page.getByText('Made by engine 1').waitFor();
  assert.match(await page.getByTestId('engine').innerText(), /^Made by engine 1 \(capledger-cost\/1\.0\.0\)/);
  assert.match(await page.locator('article.option[data-option="h100-reserved"]').innerText(), /p90 of the Monte Carlo/);
  await page.screenshot({ path: path.join(resultsDir, 'compare-engine2.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});

// The engine runs one comparison per user at a time and refuses a second one with 429 and
// Retry-After (the page's own chart request for the previous result was enough: Compare
// pressed again at once failed with "you already have 1 comparison running"). The page waits
// as told, says why, and shows the result once the other one has finished.
test('Compare pressed while another comparison of the same user runs: the page waits, then shows the result', async () => {
  // A user of its own: the earlier tests' chart requests may still hold tariq's engine slot.
  const uma = await createUser(srv, { username: 'uma', role: 'team', teams: ['vision'] });
  const token = mintToken(srv, uma.username, 'heavy');
  const heavy = JSON.parse(readData('spec/example-training-v2.json'));
  heavy.assumptions.trials = 500_000; // 4 options x 500,000 trials: the engine's work limit, about 1.6 s
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, uma);
  const statuses = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname === '/api/v1/compare' && r.request().method() === 'POST') statuses.push(r.status());
  });
  let waited = false;
  for (let attempt = 0; attempt < 3 && !waited; attempt++) {
    await page.goto(`${srv.url}/#/compare`);
    await page.locator('[data-route="compare"]').waitFor({ state: 'attached' });
    await page.getByLabel('Scenario JSON').fill(readData('spec/example-training-v2.json'));
    statuses.length = 0;
    const running = api(srv.url, 'POST', '/api/v1/compare', { token, body: heavy, timeoutMs: 60_000 });
    await new Promise((resolve) => { setTimeout(resolve, 150); });
    await page.getByRole('button', { name: 'Compare', exact: true }).click();
    await page.locator('[data-testid="winner"], .result .alert').first().waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.result .alert').count(), 0, await page.locator('.result').innerText());
    const r = await running;
    assert.equal(r.status, 200, r.text);
    waited = statuses[0] === 429; // else the heavy one finished before the click: try again
  }
  assert.ok(waited, `the page's Compare never met the other comparison: ${statuses}`);
  assert.equal(statuses.at(-1), 200, String(statuses));
  assert.equal(await page.getByTestId('engine').innerText(), 'Engine 2 (capledger-cost/2.0.0)');
  assert.deepEqual(problems, []);
  await context.close();
});
