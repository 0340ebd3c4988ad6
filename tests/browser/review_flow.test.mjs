// The 90-day review as people use it (issue 11): one current decision per review (the form
// locks after signing, the status follows without a reload, a second decision must supersede
// the first and a 409 names the current one), the stored-scenario menu on Compare lists names,
// and each role sees only the forms it may submit and lands on its own page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, mintToken } from '../integration/lib/cli.mjs';
import { addOwner, buildEvidence, createReview, postDecision, record } from '../integration/ledger.lib.mjs';
import { drawnChart, launch, watchedPage, createUser, signIn, openRoute, apiOk, resultsDir } from './lib/browser.mjs';
import { startServer } from '../integration/lib/harness.mjs';

let srv;
let browser;
let ev;
let owner;
let ownerToken;
let admin;

before(async () => {
  srv = await startServer();
  browser = await launch();
  admin = { token: mintToken(srv, 'admin') };
  owner = await createUser(srv, { username: 'olga', role: 'owner' });
  ownerToken = mintToken(srv, 'olga');
  ev = await buildEvidence(srv.url, admin, { token: ownerToken });
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

async function session(user, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const { page, problems } = await watchedPage(context);
  await signIn(page, srv, user);
  return { context, page, problems };
}

test('the role table of the page is the server\'s route table', async () => {
  const { WRITES } = await import('../../static/js/roles.js');
  const routes = cli(srv, ['routes']).stdout.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/));
  const writes = Object.fromEntries(routes
    .filter(([m, p]) => m !== 'GET' && p.startsWith('/api/v1/') && !/^\/api\/v1\/(session|me|users|tokens|teams)/.test(p))
    .map(([m, p, roles]) => [`${m} ${p.slice('/api/v1'.length)}`, roles.split(',').filter((r) => r !== 'anonymous').sort()]));
  const mine = Object.fromEntries(Object.entries(WRITES).map(([k, v]) => [k, [...v].sort()]));
  assert.deepEqual(mine, writes);
});

test('each role lands on its page and sees only the forms it may submit', async () => {
  await apiOk(srv, 'POST', '/api/v1/teams', { body: { name: 'nlp' } });
  const users = {
    auditor: await createUser(srv, { username: 'aude', role: 'auditor' }),
    team: await createUser(srv, { username: 'tariq', role: 'team', teams: [ev.team] }),
  };
  for (const [user, landing] of [[users.auditor, 'audit'], [users.team, 'evidence'], [owner, 'reviews']]) {
    const { context, page, problems } = await session(user);
    await page.waitForFunction((l) => location.hash === `#/${l}`, landing);
    // A hand-typed page the role does not have lands there too.
    await page.goto(`${srv.url}/#/admin`);
    await page.waitForFunction((l) => location.hash === `#/${l}`, landing);
    assert.deepEqual(problems, [], user.username);
    await context.close();
  }

  // A team member uploads evidence but no price sheet (offers are owners' and admins'), and
  // creates no review.
  const { context, page, problems } = await session(users.team);
  await openRoute(page, srv, 'evidence/upload');
  assert.equal(await page.getByRole('heading', { name: /Price sheet/ }).count(), 0);
  assert.ok(await page.getByRole('heading', { name: /Job accounting/ }).count() > 0);
  assert.deepEqual(await page.getByLabel('Record type').locator('option').allTextContents(), ['workload', 'benchmark']);
  await openRoute(page, srv, 'reviews');
  assert.equal(await page.getByRole('button', { name: 'Create review' }).count(), 0);
  assert.deepEqual(problems, []);
  await context.close();

  // An auditor has no upload tab and no form on a review.
  const a = await session(users.auditor);
  await openRoute(a.page, srv, 'evidence');
  assert.equal(await a.page.getByRole('link', { name: 'Upload', exact: true }).count(), 0);
  await a.context.close();
});

test('the stored-scenario menu on Compare lists scenarios by name', async () => {
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, 'compare');
  const menu = page.getByLabel('…or start from a stored scenario');
  const options = await menu.locator('option').allTextContents();
  assert.deepEqual(options, ['Choose…', `llm slice (${ev.team})`]);
  assert.ok(!(await menu.innerHTML()).includes('[object'));
  await menu.selectOption({ label: `llm slice (${ev.team})` });
  await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('"options"'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('a signed decision locks the form, updates the status, and the next one must supersede it', async () => {
  const review = await createReview(srv.url, { token: ownerToken }, [ev.workloadId], { title: 'Evaluation capacity' });
  const pavel = await addOwner(srv, 'pavel');
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, `reviews/${review.id}`);
  assert.match(await page.getByTestId('review-status').innerText(), /open/);
  const form = page.locator('form.decision-form');
  assert.equal(await form.getByLabel('Supersedes').inputValue(), '');
  // Cited by name (scenario and date) in the review's comparisons: the cockpit's is ticked.
  await form.locator(`fieldset[data-picker=comparisons] input[value="${ev.comparison.sha256}"]`).check();
  await page.waitForFunction(() => document.querySelector('form.decision-form input[name=chosen_option]').value !== '');
  await form.getByLabel('Accepted by').fill('ravi');
  // Evidence by name too: a benchmark (workload on offer, team, date).
  await form.locator('fieldset[data-picker=benchmarks] input[type=checkbox]').first().check();
  await form.getByLabel('Justification').fill('The winner on reliable cost; the boundary test comes next.');

  // Another owner decides first: this page's record supersedes nothing → 409 names the
  // current decision, and the form takes it.
  const early = await postDecision(srv.url, pavel, record(pavel, review.id, { decision: 'stop' }));
  assert.equal(early.status, 201, early.text);
  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const conflict = form.getByRole('alert').filter({ hasText: 'HTTP 409' });
  await conflict.waitFor();
  // The current decision by what and when (its id only in the link).
  assert.equal(await conflict.locator(`a[href="#/decisions/${early.json.id}"]`).count(), 1);
  assert.doesNotMatch(await conflict.innerText(), new RegExp(early.json.id));
  assert.equal(await form.getByLabel('Supersedes').inputValue(), early.json.id);

  await form.getByRole('button', { name: 'Sign and submit' }).click();
  const receipt = page.getByTestId('decision-receipt');
  await receipt.locator('.alert.success').filter({ hasText: 'recomputed the inclusion proof' }).waitFor();
  const mine = await receipt.locator('dd button[data-id]').first().getAttribute('data-id');
  // Locked: nothing can be sent twice; the status reads "decided" without a reload.
  assert.equal(await form.getAttribute('data-locked'), 'true');
  assert.equal(await form.getByRole('button', { name: 'Sign and submit' }).count(), 0);
  assert.ok(await form.getByLabel('Accepted by').isDisabled());
  await page.getByTestId('review-status').filter({ hasText: 'decided' }).waitFor();
  fs.mkdirSync(resultsDir, { recursive: true });
  await page.screenshot({ path: path.join(resultsDir, 'review-locked.png'), fullPage: true });

  // A new decision: the form names the current one as the one it supersedes.
  await page.getByRole('button', { name: 'Record a new decision that supersedes this one' }).click();
  const again = page.locator('form.decision-form');
  assert.equal(await again.getByLabel('Supersedes').inputValue(), mine);
  // Superseding a decision someone else superseded meanwhile would fork the line: refused next
  // to "Supersedes", which then names the current decision.
  const late = await postDecision(srv.url, pavel, record(pavel, review.id, { decision: 'stop' }));
  assert.equal(late.status, 201, late.text);
  await again.getByLabel('Accepted by').fill('ravi');
  await again.getByRole('button', { name: 'Sign and submit' }).click();
  const err = again.locator('.field[data-field="supersedes"] .field-error');
  await err.waitFor();
  assert.match(await err.innerText(), /already superseded/);
  await page.waitForFunction((id) => document.querySelector('form.decision-form select[name=supersedes]').value === id, late.json.id);
  await again.getByRole('button', { name: 'Sign and submit' }).click();
  await page.getByTestId('decision-receipt').waitFor();
  const list = await apiOk(srv, 'GET', `/api/v1/decisions?review=${review.id}`, { token: ownerToken });
  assert.deepEqual(list.items.map((d) => d.record.supersedes), [null, early.json.id, mine, late.json.id]);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a review is created by picking its workloads by name', async () => {
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, 'reviews');
  await page.getByLabel('Title').fill('Evaluation GPUs for next quarter');
  await page.getByLabel('Question', { exact: true }).fill('Which capacity gives the lowest reliable cost per completed evaluation?');
  const picker = page.locator('fieldset[data-picker=workloads]');
  await picker.getByLabel('Name starts with').fill('LLM-7B');
  const box = picker.getByRole('checkbox', { name: new RegExp(`^llm-7b-pretrain-slice \\(${ev.team}\\) · training`) });
  await box.check();
  assert.match(await picker.locator('.picker-chosen').innerText(), /Chosen: llm-7b-pretrain-slice/);
  // A prefix that matches nothing lists nothing, and the choice stays.
  await picker.getByLabel('Name starts with').fill('zzz');
  await picker.getByText('No match.').waitFor();
  await page.getByRole('button', { name: 'Create review' }).click();
  await page.getByTestId('review-workloads').filter({ hasText: 'llm-7b-pretrain-slice' }).waitFor();
  const id = page.url().split('/').pop();
  const review = await apiOk(srv, 'GET', `/api/v1/reviews/${id}`, { token: ownerToken });
  assert.deepEqual(review.workload_ids, [ev.workloadId]);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the review page is the cockpit: comparison chosen by name, its checklist equal to the gate\'s verdict', async () => {
  const today = new Date();
  const started = new Date(today.getTime() - 84 * 86_400_000).toISOString().slice(0, 10); // day 85
  const review = await createReview(srv.url, { token: ownerToken }, [ev.workloadId], { title: 'Cockpit', started_on: started });
  // A second comparison of the same workload under another scenario name.
  const sc = await apiOk(srv, 'POST', '/api/v1/scenarios', {
    token: ownerToken,
    body: { name: 'llm slice, cached dataset', team: ev.team, workload_ids: [ev.workloadId], document: { ...(await apiOk(srv, 'GET', `/api/v1/scenarios/${ev.scenarioId}`, { token: ownerToken })).document, assumptions: { engineer_rate_per_hour: 110, engineer_blocked_fraction: 0.2, failure_probability: 0.08, failure_progress_fraction: 0.5, trials: 2000, seed: 11 } } },
  });
  const second = await apiOk(srv, 'POST', `/api/v1/scenarios/${sc.id}/comparisons`, { token: ownerToken });
  await apiOk(srv, 'POST', `/api/v1/reviews/${review.id}/artifacts`, { token: ownerToken, body: { title: 'Profile data loading', phase: 'evidence_plan', contributor: 'tariq', due_on: '2026-01-02' } });

  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, `reviews/${review.id}`);
  assert.match(await page.getByTestId('review-day').innerText(), /^Day 85 of 90 · Days 61–90: boundary test$/);
  assert.match(await page.getByTestId('review-workloads').innerText(), new RegExp(`llm-7b-pretrain-slice \\(${ev.team}\\)`));
  assert.match(await page.locator('[data-overdue=true]').innerText(), /overdue/);

  const picker = page.getByLabel('Comparison', { exact: true });
  const labels = await picker.locator('option').allTextContents();
  assert.equal(labels.length, 2);
  assert.match(labels[0], /^llm slice, cached dataset · /);
  assert.match(labels[1], /^llm slice · .* — winner /);
  // The newest is shown first; choose the other by its name.
  await page.getByTestId('gate-verdict').waitFor();
  await picker.selectOption({ label: labels[1] });
  await page.waitForFunction((sha) => document.querySelector('[data-testid=cockpit-sha]')?.textContent === sha, ev.comparison.sha256);
  await page.locator('html[data-busy="0"]').waitFor({ state: 'attached' });
  const cockpit = page.getByTestId('cockpit');
  assert.equal(await cockpit.getByTestId('winner').innerText(), ev.result.winner);
  assert.equal(await cockpit.locator('article.option .stack').count(), ev.result.options.length);
  assert.ok(await cockpit.locator('.break-even').count() === 1);
  // Charts of that comparison, each with its words: the Monte Carlo distribution (expected and
  // p90 marked, and why p90 can sit below the mean) and the break-even tornado.
  assert.match(await drawnChart(page, 'cost-distribution'), new RegExp(`${ev.result.winner} expected \\$[0-9,.]+, worst-10% mean \\$`));
  assert.match(await cockpit.getByTestId('p90-why').innerText(), /the reliable figure is the mean cost of the worst 10% of those months/);
  if ((ev.result.break_even || []).length) assert.match(await drawnChart(page, 'tornado'), /before the winner changes, nearest first: /);
  // The decision form cites it.
  const cited = page.locator('form.decision-form fieldset[data-picker=comparisons]');
  assert.deepEqual(await cited.locator('input:checked').evaluateAll((els) => els.map((e) => e.value)), [ev.comparison.sha256]);
  assert.match(await cited.locator(`label[for$="${ev.comparison.sha256.slice(0, 40)}"]`).innerText(), new RegExp(`winner ${ev.result.winner}[\\s\\S]*${ev.comparison.sha256}`), 'named by scenario and date, the hash beside it');
  assert.equal(await page.locator('form.decision-form textarea[name=comparison_sha256]').count(), 0, 'no hash to paste');

  // The checklist shown is the gate's: the same items as the API's checklist on that comparison,
  // and the verdict is what the real append of an advance answers.
  await page.waitForFunction(() => document.querySelector('[data-testid=gate-verdict]'));
  const cl = await apiOk(srv, 'GET', `/api/v1/reviews/${review.id}/checklist?comparison=${ev.comparison.sha256}`, { token: ownerToken });
  const shown = await page.locator('.checklist li[data-item]').evaluateAll((els) => els.map((e) => [e.dataset.item, e.classList.contains('covered')]));
  assert.deepEqual(shown, cl.items.map((i) => [i.item, i.covered]));
  const verdict = page.getByTestId('gate-verdict');
  // Nobody accepts the next stage yet: refused, and the verdict says so.
  assert.equal(await verdict.getAttribute('data-outcome'), 'refused');
  assert.match(await verdict.innerText(), /accepting the next stage/);
  const uncovered = cl.items.filter((i) => !i.covered).map((i) => i.item);
  for (const item of uncovered) assert.match(await verdict.innerText(), new RegExp(item));
  // Naming who accepts it re-asks the gate: it passes exactly when the checklist is covered.
  await page.locator('form.decision-form').getByLabel('Accepted by').fill('ravi');
  await page.locator('form.decision-form').getByLabel('Accepted by').blur();
  await page.locator(`[data-testid=gate-verdict][data-outcome=${cl.covered ? 'accepted' : 'refused'}]`).waitFor();
  assert.ok(!(await page.getByTestId('gate-verdict').innerText()).includes('accepting the next stage'));
  assert.notEqual(second.sha256, ev.comparison.sha256);

  fs.mkdirSync(path.join(process.cwd(), 'build', 'screenshots'), { recursive: true });
  await page.screenshot({ path: path.join('build', 'screenshots', 'review-cockpit.png'), fullPage: true });
  // The top of it (what the README shows): the comparison, its trap banner and charts.
  await page.screenshot({ path: path.join('build', 'screenshots', 'review-cockpit-top.png'), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 2400 } });
  assert.deepEqual(problems, []);
  await context.close();
});

test('the decision page shows every field, the signer\'s key, a verified inclusion and the chain both ways', async () => {
  const all = await apiOk(srv, 'GET', '/api/v1/decisions?limit=500', { token: ownerToken });
  // The middle decision of the line signed in the browser above: it supersedes and is superseded.
  const d = all.items.find((x) => x.signer === 'olga' && x.record.supersedes && x.superseded_by);
  assert.ok(d, 'a decision in the middle of a line');
  const auditor = await createUser(srv, { username: 'audra', role: 'auditor' });
  const { context, page, problems } = await session(auditor);
  await openRoute(page, srv, 'audit');
  await page.locator(`a[href="#/decisions/${d.id}"]`).click();
  await page.locator(`main[data-route="decisions/${d.id}"]`).waitFor({ state: 'attached' });
  await page.locator('[data-testid=decision-inclusion][data-ok=true]').waitFor();
  const rec = d.record;
  const field = (name) => page.locator(`[data-testid=decision-record] dd[data-field=${name}]`).innerText();
  for (const name of ['decision', 'chosen_option', 'owner', 'accepted_by', 'question', 'baseline', 'residual_exposure', 'next_authority_boundary', 'created_at']) {
    assert.equal((await field(name)).trim(), rec[name] ?? '—', name);
  }
  // The record's id: only in its copy button.
  assert.equal(await page.locator('[data-testid=decision-record] dd[data-field=id] button[data-id]').getAttribute('data-id'), rec.id);
  for (const name of ['assumptions', 'unresolved_questions']) {
    assert.equal((await field(name)).trim(), rec[name].length ? rec[name].join('\n') : '—', name);
  }
  assert.match(await field('expected_operating_cost'), rec.expected_operating_cost ? new RegExp(rec.expected_operating_cost.amount) : /—/);
  // Justification and evidence as signed (this decision has both): the evidence by name, its id beside.
  assert.equal((await field('justification')).trim(), 'The winner on reliable cost; the boundary test comes next.');
  assert.equal(rec.evidence.length, 1);
  await page.waitForFunction(() => [...document.querySelectorAll('dd[data-field=evidence] .evidence-name')].every((x) => x.textContent !== ''));
  const evidenceShown = await field('evidence');
  assert.equal(await page.locator('dd[data-field=evidence] button[data-id]').first().getAttribute('data-id'), rec.evidence[0], 'the evidence id stays in a copy button');
  assert.match(evidenceShown, /^benchmark: .+ on .+ \(.+\) · measured \d{4}-\d\d-\d\d/, 'named');
  assert.equal(await page.getByTestId('signer').innerText(), 'olga');
  assert.equal(await page.getByTestId('signer-key').innerText(), rec.signer_key_id);
  assert.equal(await page.getByTestId('decision-leaf').innerText(), String(d.leaf_index));
  assert.equal(await page.getByTestId('supersedes').locator('a').getAttribute('href'), `#/decisions/${rec.supersedes}`);
  assert.equal(await page.getByTestId('superseded-by').locator('a').getAttribute('href'), `#/decisions/${d.superseded_by}`);
  assert.equal(await page.getByTestId('cited-comparison').getAttribute('href'), `#/reviews/${rec.review_id}?comparison=${rec.comparison_sha256[0]}`);
  fs.mkdirSync(path.join('build', 'screenshots'), { recursive: true });
  await page.screenshot({ path: path.join('build', 'screenshots', 'decision.png'), fullPage: true });
  // The chain both ways: follow "superseded by".
  await page.getByTestId('superseded-by').locator('a').click();
  await page.locator(`main[data-route="decisions/${d.superseded_by}"]`).waitFor({ state: 'attached' });
  assert.equal(await page.getByTestId('supersedes').locator('a').getAttribute('href'), `#/decisions/${d.id}`);
  assert.deepEqual(problems, []);
  await context.close();
});

test('screenshots of each main page (build/screenshots/)', async () => {
  const dir = path.join('build', 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const { context, page, problems } = await session(owner);
  await openRoute(page, srv, 'compare');
  await page.getByLabel('…or start from a stored scenario').selectOption({ label: `llm slice (${ev.team})` });
  await page.waitForFunction(() => document.querySelector('textarea[name=scenario]').value.includes('"options"'));
  await page.getByRole('button', { name: 'Compare', exact: true }).click();
  await page.getByTestId('winner').waitFor();
  await drawnChart(page, 'cost-distribution');
  await page.screenshot({ path: path.join(dir, 'compare.png'), fullPage: true });
  await page.locator('section.charts').screenshot({ path: path.join(dir, 'compare-charts.png') });
  for (const route of ['reviews', 'evidence/workloads', 'evidence/benchmarks', 'evidence/usage', 'audit', 'alerts', 'account']) {
    await openRoute(page, srv, route);
    await page.screenshot({ path: path.join(dir, `${route.replace('/', '-')}.png`), fullPage: true });
    assert.ok(fs.statSync(path.join(dir, `${route.replace('/', '-')}.png`)).size > 0);
  }
  // A narrow window: the review cockpit stays usable (no horizontal scrolling of the page).
  await page.setViewportSize({ width: 420, height: 800 });
  const reviews = await apiOk(srv, 'GET', '/api/v1/reviews', { token: ownerToken });
  await openRoute(page, srv, `reviews/${reviews.items[0].id}`);
  await page.screenshot({ path: path.join(dir, 'review-narrow.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});
