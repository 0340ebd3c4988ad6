// Sign-in, the header and menu by role, sign-out, and the CSP: every page of every role renders
// without a single Content-Security-Policy violation or script error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, api } from '../integration/lib/harness.mjs';
import { launch, watchedPage, createTeam, createUser, signIn, openRoute } from './lib/browser.mjs';

let srv;
let browser;
const users = {};

before(async () => {
  srv = await startServer();
  browser = await launch();
  await createTeam(srv, 'vision');
  users.owner = await createUser(srv, { username: 'olga', role: 'owner', teams: ['vision'] });
  users.team = await createUser(srv, { username: 'tariq', role: 'team', teams: ['vision'] });
  users.auditor = await createUser(srv, { username: 'aude', role: 'auditor' });
  users.admin = { username: 'admin', password: srv.adminPassword, role: 'admin' };
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

const MENU = {
  owner: ['Compare', 'What-if', 'Evidence', 'Reviews', 'Alerts', 'Audit', 'Account'],
  team: ['Compare', 'What-if', 'Evidence', 'Reviews', 'Account'],
  auditor: ['Compare', 'Evidence', 'Reviews', 'Audit', 'Account'],
  admin: ['Compare', 'Audit', 'Admin', 'Account'],
};

test('wrong password is refused with an alert, and nothing is signed in', async () => {
  const context = await browser.newContext();
  const { page } = await watchedPage(context);
  await page.goto(`${srv.url}/`);
  await page.getByLabel('Username').fill('olga');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await assert.doesNotReject(page.getByRole('alert').filter({ hasText: 'Wrong username or password' }).waitFor());
  assert.equal(await page.getByTestId('current-user').count(), 0);
  await context.close();
});

test('sign in shows user and role, the menu fits the role, a reload keeps the session, sign out ends it', async () => {
  for (const role of ['owner', 'team', 'auditor', 'admin']) {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    await signIn(page, srv, users[role]);
    assert.equal(await page.getByTestId('current-user').textContent(), users[role].username);
    assert.equal(await page.getByTestId('current-role').textContent(), role);
    const header = await page.locator('#who').innerText();
    assert.ok(!/null|undefined/.test(header), header);
    if (users[role].teams?.length) assert.match(header, new RegExp(users[role].teams.join(', ')));
    const menu = await page.locator('#nav a').allTextContents();
    assert.deepEqual(menu, MENU[role], role);

    // A reload keeps the cookie; GET /me hands back a CSRF token, so the user stays signed in.
    await page.reload();
    await page.getByTestId('current-user').waitFor();

    const cookies = await context.cookies();
    assert.ok(cookies.length >= 1, 'a session cookie is set');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The old cookie no longer authenticates anyone.
    const cookieHeader = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const me = await api(srv.url, 'GET', '/api/v1/me', { cookie: cookieHeader });
    assert.equal(me.status, 401, `${role}: the session must end at sign-out`);
    assert.deepEqual(problems, [], role);
    await context.close();
  }
});

test('no CSP violation or script error on any page of any role', async () => {
  for (const role of ['owner', 'team', 'auditor', 'admin']) {
    const context = await browser.newContext();
    const { page, problems } = await watchedPage(context);
    await signIn(page, srv, users[role]);
    // Every page of the role's menu, and every tab of Evidence.
    const menu = (await page.locator('#nav a').evaluateAll((as) => as.map((a) => a.getAttribute('href').slice(2))));
    const pages = menu.flatMap((p) => (p === 'evidence'
      ? ['evidence/workloads', 'evidence/offers', 'evidence/benchmarks', 'evidence/runs', 'evidence/usage', ...(role === 'auditor' ? [] : ['evidence/upload'])]
      : [p]));
    assert.ok(pages.length >= 3);
    for (const p of pages) await openRoute(page, srv, p);
    assert.deepEqual(problems, [], `${role}: ${problems.join('\n')}`);
    if (role === 'admin') {
      // The watcher itself must see a violation when there is one: markup with a style
      // attribute is what the CSP blocks.
      await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<p style="color: red">x</p>'));
      await page.waitForTimeout(200);
      assert.ok(problems.some((p) => p.startsWith('CSP: style-src')), problems.join('\n'));
    }
    await context.close();
  }
});

test('the page is keyboard usable: Tab reaches the sign-in form and Enter submits', async () => {
  const context = await browser.newContext();
  const { page } = await watchedPage(context);
  await page.goto(`${srv.url}/`);
  await page.getByLabel('Username').waitFor();
  // The username field has focus on arrival.
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('autocomplete')), 'username');
  await page.keyboard.type(users.team.username);
  await page.keyboard.press('Tab');
  await page.keyboard.type(users.team.password);
  await page.keyboard.press('Enter');
  await page.getByTestId('current-user').waitFor();
  // Every input and select on the evidence upload page has a label.
  await page.goto(`${srv.url}/#/evidence/upload`);
  await page.locator('form.upload').first().waitFor();
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('main input, main select, main textarea')]
    .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map((el) => el.outerHTML));
  assert.deepEqual(unlabelled, []);
  await context.close();
});
