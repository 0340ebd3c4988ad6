// Issue 23, item 2: a team member compares without hand-editing JSON or typing an id. The
// scenario builder picks the workload and each option's offer and benchmark by name (search as
// you type), shows the assumptions' defaults, keeps the JSON view in step both ways; saving
// under a name the team already uses is refused with the existing scenario named and a free
// name offered (no second identical entry in the pickers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo } from './lib/demo.mjs';
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

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

async function pick(fieldset, search, text) {
  await fieldset.getByLabel('Name starts with').fill(search);
  const label = fieldset.locator('.picker-item label').filter({ hasText: text }).first();
  await label.waitFor();
  await label.click();
}

test('a team member builds a scenario by names, in step with the JSON view, and keeps it under a free name', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username: 'demo-member', password: demo.passwords['demo-member'] });
  await openRoute(page, demo.srv, 'compare');
  const b = page.getByTestId('scenario-builder');
  const json = page.getByLabel('Scenario JSON');
  await pick(b.locator('fieldset[data-picker=workloads]').first(), 'llm', 'llm-13b-eval-suite');
  await b.getByRole('button', { name: 'Add an option' }).click();
  const opt1 = b.locator('fieldset.builder-option').nth(0);
  await pick(opt1.locator('fieldset[data-picker=offers]'), 'h100', 'h100');
  await pick(opt1.locator('fieldset[data-picker=benchmarks]'), 'llm', 'h100-nvme-cache');
  await opt1.getByLabel('Option name').fill('h100-nvme-cache');
  await b.getByRole('button', { name: 'Add an option' }).click();
  const opt2 = b.locator('fieldset.builder-option').nth(1);
  await pick(opt2.locator('fieldset[data-picker=offers]'), 'a100', 'a100');
  await pick(opt2.locator('fieldset[data-picker=benchmarks]'), 'llm', 'a100-streamed');
  await opt2.getByLabel('Option name').fill('a100-streamed');
  // The assumptions show their defaults; one set here goes into the JSON.
  assert.equal(await b.getByLabel('Reliable quantile').getAttribute('placeholder'), 'default 0.9');
  await b.getByLabel('Failure probability per attempt').fill('0.04');
  let doc = JSON.parse(await json.inputValue());
  assert.match(doc.workload, UUID);
  assert.deepEqual(doc.options.map((o) => o.name), ['h100-nvme-cache', 'a100-streamed']);
  assert.ok(doc.options.every((o) => UUID.test(o.offer) && UUID.test(o.benchmark)));
  assert.equal(doc.assumptions.failure_probability, 0.04);
  // The JSON view back into the form.
  doc.assumptions.seed = 7;
  doc.options[1].name = 'a100 streamed from S3';
  await json.fill(JSON.stringify(doc, null, 2));
  await page.waitForFunction(() => document.querySelector('input[data-key=seed]').value === '7');
  assert.equal(await b.locator('fieldset.builder-option').nth(1).getByLabel('Option name').inputValue(), 'a100 streamed from S3');
  // No field a person typed into holds an id.
  const typed = await page.locator('main input[type=text], main input[type=search]').evaluateAll((els) => els.map((e) => e.value));
  assert.ok(!typed.some((v) => UUID.test(v)), typed.join(' | '));

  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await page.getByTestId('winner').waitFor();
  // Keep it under the demo scenario's own name: refused, the existing one named, a free name offered.
  const taken = 'Nightly eval: A100 streamed vs H100 with NVMe cache';
  await page.getByLabel('Scenario name').fill(taken);
  await page.getByRole('button', { name: 'Save scenario and store its comparison' }).click();
  const refusal = page.getByTestId('name-taken');
  await refusal.waitFor();
  assert.match(await refusal.innerText(), new RegExp(`this team already has a scenario named “${taken}” \\(stored \\d{4}-\\d\\d-\\d\\d by demo-owner\\)`));
  await refusal.getByRole('button', { name: `Use “${taken} (2)”` }).click();
  assert.equal(await page.getByLabel('Scenario name').inputValue(), `${taken} (2)`);
  await page.getByRole('button', { name: 'Save scenario and store its comparison' }).click();
  await page.getByTestId('comparison-sha').waitFor();
  const list = await apiOk(demo.srv, 'GET', '/api/v1/scenarios?limit=100', { token: demo.tokens['demo-member'] });
  const names = list.items.map((s) => s.name);
  assert.equal(names.filter((n) => n === taken).length, 1);
  assert.equal(names.filter((n) => n === `${taken} (2)`).length, 1);
  assert.deepEqual(problems.filter((p) => !/status of 409/.test(p)), []);
  await context.close();
});

test('a refused scenario puts each problem at the builder\'s field, in words', async () => {
  const context = await browser.newContext({ viewport: { width: 400, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username: 'demo-member', password: demo.passwords['demo-member'] });
  await openRoute(page, demo.srv, 'compare');
  const b = page.getByTestId('scenario-builder');
  await b.getByRole('button', { name: 'Add an option' }).click();
  await b.getByLabel('Failure probability per attempt').fill('abc');
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  const err = b.locator('.field[data-field="assumption-failure_probability"] .field-error');
  await err.waitFor();
  assert.equal(await err.innerText(), 'must be a number');
  assert.equal(await b.getByLabel('Failure probability per attempt').getAttribute('aria-invalid'), 'true');
  assert.match(await b.locator('fieldset.builder-option fieldset[data-picker=offers]').locator('.field-error').innerText(), /required/);
  assert.match(await page.locator('main .result').innerText(), /Assumptions › Failure probability: must be a number/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a stored scenario with offers written out in full: the pickers say where they are', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page, problems } = await watchedPage(context);
  await signIn(page, demo.srv, { username: 'demo-member', password: demo.passwords['demo-member'] });
  await openRoute(page, demo.srv, 'compare');
  const stored = page.getByLabel('…or start from a stored scenario');
  const value = await stored.locator('option').filter({ hasText: /^Nightly eval: A100 streamed vs H100 with NVMe cache/ }).first().getAttribute('value');
  await stored.selectOption(value);
  const b = page.getByTestId('scenario-builder');
  await b.locator('fieldset.builder-option').nth(1).waitFor();
  const doc = JSON.parse(await page.getByLabel('Scenario JSON').inputValue());
  // Each option's offer is a stored one, written out, or the benchmark's own: the picker says which.
  const said = await b.locator('fieldset[data-picker=offers] .picker-chosen').allInnerTexts();
  doc.options.forEach((o, i) => {
    if (typeof o.offer === 'object') assert.match(said[i], /^Written out in the JSON view/);
    else if (!o.offer && typeof o.benchmark === 'string') assert.match(said[i], /^The benchmark's own offer/);
    else assert.match(said[i], /^Chosen: /);
  });
  assert.ok(!said.includes('Nothing chosen yet.'), said.join(' | '));
  if (typeof doc.workload === 'object') {
    assert.match(await b.locator('fieldset[data-picker=workloads] .picker-chosen').first().innerText(), /^Written out in the JSON view/);
  }
  assert.deepEqual(problems, []);
  await context.close();
});
