// What stopped or misled a newcomer walking the demo as owner, team member and auditor:
// a name with an RTL override reordered the sentence around it (the trap's 1.13× read as ×31.1);
// "Go to Job accounting" after a refused upload left the app's route for an in-page anchor, with
// the file left behind and focus nowhere; a form hint with a long column list ran over the next
// field; the "Compare with another stored comparison" fold put its title under its marker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDemo, DEMO_REVIEW } from './lib/demo.mjs';
import { launch, watchedPage, signIn, openRoute, readData } from './lib/browser.mjs';

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

async function member(width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const w = await watchedPage(context);
  await signIn(w.page, demo.srv, { username: 'demo-member', password: demo.passwords['demo-member'] });
  return { context, ...w };
}

// The left edge of the first occurrence of `word` in the text node of `el` that holds `within`.
function wordX(el, within, word) {
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const at = n.data.indexOf(within);
    if (at < 0) continue;
    const r = document.createRange();
    const i = n.data.indexOf(word, at);
    r.setStart(n, i);
    r.setEnd(n, i + word.length);
    const box = r.getBoundingClientRect();
    return { x: box.left, y: box.top };
  }
  return null;
}

test('an option name with an RTL override does not reorder the sentence around it', async () => {
  const { context, page, problems } = await member();
  await openRoute(page, demo.srv, 'compare');
  await page.getByLabel('…or start from a stored scenario').selectOption({ label: 'Nightly eval: A100 streamed vs H100 with NVMe cache (eval-platform)' });
  const json = page.getByLabel('Scenario JSON');
  await page.waitForFunction(() => /a100-streamed/.test(document.querySelector('textarea')?.value || ''));
  const doc = JSON.parse(await json.inputValue());
  doc.options.find((o) => o.name === 'a100-streamed').name = 'a100\u202Eevil <b>x</b> 😀';
  await json.fill(JSON.stringify(doc, null, 2));
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  const trap = page.locator('[data-flag=hourly_price_trap] p');
  await trap.waitFor();
  assert.match(await trap.innerText(), /<b>x<\/b> 😀 is the cheapest per GPU-hour/);
  // On one line, LTR order: "cheapest" left of "GPU-hour" in the words after the name.
  const [a, b] = await trap.evaluate((el, f) => {
    const at = new Function(`return ${f}`)();
    return [at(el, ' is the cheapest per GPU-hour', 'cheapest'), at(el, ' is the cheapest per GPU-hour', 'GPU-hour')];
  }, wordX.toString());
  assert.equal(Math.round(a.y), Math.round(b.y), 'both words on one line');
  assert.ok(a.x < b.x, `"cheapest" (x ${a.x}) is left of "GPU-hour" (x ${b.x})`);
  const overhead = page.locator('[data-flag=overhead_dominates] p');
  if (await overhead.count()) {
    const [c, d] = await overhead.evaluate((el, f) => {
      const at = new Function(`return ${f}`)();
      return [at(el, ': idle time, stalls', 'idle'), at(el, ': idle time, stalls', 'stalls')];
    }, wordX.toString());
    if (Math.round(c.y) === Math.round(d.y)) assert.ok(c.x < d.x, 'the overhead sentence reads left to right');
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Go to Job accounting" keeps the page, brings the file along and focuses that form', async () => {
  const { context, page, problems } = await member();
  await openRoute(page, demo.srv, 'evidence/upload');
  const tele = page.locator('form[data-upload=telemetry]');
  await tele.getByLabel('Name starts with').fill('llm-13b');
  await tele.locator('.picker-list label').filter({ hasText: /a100-streamed/ }).first().click();
  await tele.locator('input[type=file]').setInputFiles({ name: 'jobs.txt', mimeType: 'text/plain', buffer: Buffer.from(readData('samples/sacct/sonar_fox_sacct_aP_noheader_gpu.txt')) });
  await tele.getByRole('button', { name: 'Upload', exact: true }).click();
  const go = tele.getByTestId('upload-refused').getByRole('link', { name: 'Go to Job accounting' });
  await go.focus();
  await page.keyboard.press('Enter');
  const runs = page.locator('form[data-upload=runs]');
  await page.waitForFunction(() => document.activeElement && document.activeElement.closest('form[data-upload=runs]'));
  assert.equal(new URL(page.url()).hash, '#/evidence/upload');
  assert.deepEqual(await runs.locator('input[type=file]').evaluate((i) => [...i.files].map((f) => f.name)), ['jobs.txt']);
  assert.equal(await page.evaluate(() => document.activeElement.closest('.field, label')?.textContent.trim().split('\n')[0]), 'Cluster');
  // A reload stays on the upload page.
  await page.reload();
  await page.locator('main[data-route="evidence/upload"]').waitFor({ state: 'attached' });
  assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
  await context.close();
});

test('form hints with long unbroken lists stay inside their field, at 1280 and 400 px', async () => {
  for (const width of [1280, 400]) {
    const { context, page } = await member(width);
    await openRoute(page, demo.srv, 'evidence/upload');
    const over = await page.evaluate(() => [...document.querySelectorAll('main .hint')]
      .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent));
    assert.deepEqual(over, [], `at ${width} px`);
    await context.close();
  }
});

test('the review\'s "Compare with another stored comparison" fold has its title beside its marker', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const { page } = await watchedPage(context, { folds: 'closed' });
  await signIn(page, demo.srv, { username: 'demo-owner', password: demo.passwords['demo-owner'] });
  await page.getByRole('link', { name: DEMO_REVIEW }).click();
  const chooser = page.getByTestId('diff-chooser').locator('> summary');
  await chooser.waitFor();
  const other = page.locator('details.fold[data-fold] > summary').first();
  const [h1, h2] = [await chooser.evaluate((e) => e.getBoundingClientRect().height), await other.evaluate((e) => e.getBoundingClientRect().height)];
  assert.ok(Math.abs(h1 - h2) < 4, `the chooser's summary is ${h1} px high, the other folds' ${h2} px`);
  await context.close();
});

test('a what-if replay at 400 px: its stored hash wraps, the page does not scroll sideways', async () => {
  const { context, page, problems } = await member(400);
  await openRoute(page, demo.srv, 'whatif');
  await page.getByRole('button', { name: 'Replay', exact: true }).click();
  await page.locator('main code').filter({ hasText: /^[0-9a-f]{64}$/ }).first().waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0);
  assert.deepEqual(problems, []);
  await context.close();
});
