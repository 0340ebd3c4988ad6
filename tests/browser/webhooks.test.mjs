// Webhooks on the Alerts page: an owner adds one (the secret shown once), sends a test message
// to a local receiver that fails the first try, and sees it delivered; a refused URL names the
// field; a receiver that is down shows as failing with its error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServer } from '../integration/lib/harness.mjs';
import { launch, watchedPage, createUser, signIn, openRoute } from './lib/browser.mjs';

let srv;
let browser;
let receiver;
let owner;
const hits = [];

// The Alerts page afresh (a reload: the hash does not change), once its lists have rendered.
async function reloadAlerts(page) {
  await page.reload();
  await page.locator('main[data-route="alerts"]').waitFor({ state: 'attached' });
  await page.getByTestId('webhooks').getByRole('table', { name: 'Webhooks' }).waitFor();
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
}

before(async () => {
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.headers['webhook-id']);
      const first = hits.filter((id) => id === req.headers['webhook-id']).length === 1;
      res.writeHead(first ? 503 : 204);
      res.end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  srv = await startServer({ env: { CAPLEDGER_WEBHOOK_RETRY_BASE_S: '0.2', CAPLEDGER_WEBHOOK_TIMEOUT_S: '2' } });
  browser = await launch();
  owner = await createUser(srv, { username: 'olga', role: 'owner' });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
  await new Promise((r) => receiver?.close(r));
});

test('an owner adds a webhook, sees its secret once, sends a test and sees it delivered', async () => {
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, owner);
  await openRoute(page, srv, 'alerts');
  const section = page.getByTestId('webhooks');
  await section.getByText('No webhooks').waitFor();

  // A scheme the server refuses: the error names the URL.
  await section.getByLabel('URL').fill('ftp://files.example/hook');
  // type=url accepts ftp:, so the browser lets it through to the server's 422.
  await section.getByRole('button', { name: 'Add webhook' }).click();
  await section.getByRole('alert').filter({ hasText: 'only http and https' }).waitFor();

  const port = receiver.address().port;
  await section.getByLabel('URL').fill(`http://127.0.0.1:${port}/capacity`);
  await section.getByLabel('Description').fill('#gpu-capacity');
  await section.getByLabel('Format').selectOption('slack');
  await section.getByRole('button', { name: 'Add webhook' }).click();
  const secret = await section.getByTestId('webhook-secret').inputValue();
  assert.match(secret, /^whsec_/);
  const row = section.getByRole('row').filter({ hasText: '#gpu-capacity' });
  await row.waitFor();
  assert.match(await row.innerText(), /drift/);
  assert.match(await row.innerText(), /slack/);

  await row.getByRole('button', { name: /Send a test message/ }).click();
  // Retried after the receiver's 503, then delivered: the row says so after a reload.
  for (let i = 0; i < 60; i++) {
    await reloadAlerts(page);
    if (/1 delivered/.test(await page.getByTestId('webhooks').innerText())) break;
    await page.waitForTimeout(250);
  }
  const again = page.getByTestId('webhooks').getByRole('row').filter({ hasText: '#gpu-capacity' });
  assert.match(await again.innerText(), /1 delivered/);
  assert.ok(!(await page.getByTestId('webhooks').innerText()).includes(secret), 'the secret is not shown again');
  await again.getByRole('button', { name: /Show deliveries/ }).click();
  const deliveries = page.getByRole('table', { name: /Deliveries/ });
  await deliveries.waitFor();
  const text = await deliveries.innerText();
  assert.match(text, /ping/);
  assert.match(text, /delivered/);
  assert.match(text, /HTTP 204/);
  assert.equal(hits.length, 2);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a receiver that is down shows as failing, with the error', async () => {
  const context = await browser.newContext();
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, owner);
  await openRoute(page, srv, 'alerts');
  const section = page.getByTestId('webhooks');
  await section.getByLabel('URL').fill('http://127.0.0.1:9/down');
  await section.getByLabel('Description').fill('nobody listens');
  await section.getByRole('button', { name: 'Add webhook' }).click();
  const row = section.getByRole('row').filter({ hasText: 'nobody listens' });
  await row.getByRole('button', { name: /Send a test message/ }).click();
  let text = '';
  for (let i = 0; i < 60; i++) {
    await reloadAlerts(page);
    text = await page.getByTestId('webhooks').getByRole('row').filter({ hasText: 'nobody listens' }).innerText();
    if (/failing/.test(text) && /connect/i.test(text)) break;
    await page.waitForTimeout(250);
  }
  assert.match(text, /1 failing/);
  assert.match(text, /connect/i);
  await page.getByTestId('webhooks').getByRole('row').filter({ hasText: 'nobody listens' })
    .getByRole('button', { name: /Delete webhook/ }).click();
  await page.getByTestId('webhooks').getByRole('row').filter({ hasText: 'nobody listens' }).waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await context.close();
});
