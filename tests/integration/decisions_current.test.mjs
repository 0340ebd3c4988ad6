// One current decision per review, and the gate's dry run. A review's decisions form one line:
// a new decision must name the current one in `supersedes` (409 naming it otherwise), so the
// same decision cannot be logged twice side by side. `POST /decisions?dry_run=true` runs the
// append's own checks (gate and checklist included) on an unsigned record and writes nothing,
// so a page that shows its verdict before signing agrees with the 422 of the real append.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, buildEvidence, createReview, postDecision, record } from './ledger.lib.mjs';

let srv;
let admin;
let olga;
let member;
let ev;

const logSize = () => Number(psql('SELECT size FROM log_head', { database: srv.db }));
const dryRun = (rec, who = olga, body = { record: rec }) => api(srv.url, 'POST', '/api/v1/decisions?dry_run=true', { token: who.token, body });

before(async () => {
  srv = await startServer();
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  ev = await buildEvidence(srv.url, admin, olga, { complete: false });
  member = addUser(srv, 'tom', 'team', [ev.team]);
});
after(async () => { await srv?.stop(); });

test('a second decision that does not supersede the current one is refused with 409 naming it', async () => {
  const review = await createReview(srv.url, olga, [ev.workloadId]);
  const first = record(olga, review.id, { decision: 'stop', supersedes: null });
  assert.equal((await postDecision(srv.url, olga, first)).status, 201);
  const size = logSize();

  // The same decision again, superseding nothing: the bug logged it twice.
  const twin = record(olga, review.id, { decision: 'stop', supersedes: null });
  let r = await postDecision(srv.url, olga, twin);
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.current_decision, first.id);
  assert.match(r.json.detail, new RegExp(`current decision is ${first.id}`));
  assert.equal(logSize(), size, 'nothing appended');

  // Naming the current one goes through; then it is the current one.
  const second = record(olga, review.id, { decision: 'revise', supersedes: first.id });
  r = await postDecision(srv.url, olga, second);
  assert.equal(r.status, 201, r.text);
  r = await postDecision(srv.url, olga, record(olga, review.id, { decision: 'stop', supersedes: null }));
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.current_decision, second.id);
  // Superseding an older one is a fork: refused as before (422, already superseded).
  r = await postDecision(srv.url, olga, record(olga, review.id, { supersedes: first.id }));
  assert.equal(r.status, 422, r.text);
  assert.equal(logSize(), size + 1);
});

test('concurrent first decisions of one review: exactly one is appended', async () => {
  const review = await createReview(srv.url, olga, [ev.workloadId]);
  const replies = await Promise.all(Array.from({ length: 6 }, () => postDecision(srv.url, olga, record(olga, review.id, { supersedes: null }))));
  const statuses = replies.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409], replies.map((r) => r.text).join('\n'));
  const winner = replies.find((r) => r.status === 201).json.id;
  for (const r of replies.filter((x) => x.status === 409)) assert.equal(r.json.current_decision, winner);
});

test('the dry run answers what the append would, with the gate\'s checklist, and writes nothing', async () => {
  const review = await createReview(srv.url, olga, [ev.workloadId]);
  const size = logSize();
  const sha = ev.comparison.sha256;
  const advance = record(olga, review.id, { decision: 'advance', comparison_sha256: [sha], chosen_option: ev.result.winner, accepted_by: null, supersedes: null });

  // Unsigned: no signature needed in a dry run.
  const dry = await dryRun(advance);
  assert.equal(dry.status, 200, dry.text);
  assert.equal(dry.json.dry_run, true);
  assert.equal(dry.json.outcome, 'refused');
  assert.equal(dry.json.status, 422);
  assert.equal(dry.json.checklist.comparison_sha256, sha);
  assert.equal(dry.json.checklist.items.length, 7);
  assert.equal(dry.json.current_decision, null);

  // The real append refuses with exactly those errors.
  const real = await postDecision(srv.url, olga, advance);
  assert.equal(real.status, 422, real.text);
  assert.deepEqual(dry.json.errors, real.json.errors);
  assert.equal(dry.json.error_count, real.json.error_count);
  // The checklist the dry run shows is the review's checklist on that comparison.
  const cl = await api(srv.url, 'GET', `/api/v1/reviews/${review.id}/checklist?comparison=${sha}`, { token: olga.token });
  assert.deepEqual(dry.json.checklist, cl.json);
  // Every uncovered item of that checklist is one of the gate's errors.
  const uncovered = cl.json.items.filter((i) => !i.covered).map((i) => i.item);
  assert.ok(uncovered.length > 0);
  for (const item of uncovered) assert.ok(real.json.errors.some((e) => e.message.includes(`'${item}'`)), item);

  // A revise passes; the dry run says so and appends nothing.
  const revise = record(olga, review.id, { decision: 'revise', comparison_sha256: [sha], chosen_option: ev.result.winner, supersedes: null });
  const ok = await dryRun(revise);
  assert.equal(ok.json.outcome, 'accepted');
  assert.equal(ok.json.status, 201);
  assert.deepEqual(ok.json.errors, []);
  assert.equal(logSize(), size, 'a dry run writes nothing');
  assert.equal((await postDecision(srv.url, olga, revise)).status, 201);

  // Now a decision that does not supersede it: the dry run names the current decision.
  const next = await dryRun(record(olga, review.id, { decision: 'stop', supersedes: null }));
  assert.equal(next.json.outcome, 'not_current');
  assert.equal(next.json.status, 409);
  assert.equal(next.json.current_decision, revise.id);
  const chained = await dryRun(record(olga, review.id, { decision: 'stop', supersedes: revise.id }));
  assert.equal(chained.json.outcome, 'accepted');

  // Shape errors are listed as in the append; a bad flag is 422; team members cannot dry-run.
  const bad = await dryRun(null, olga, { record: { ...revise, decision: 'maybe' } });
  assert.equal(bad.json.outcome, 'invalid');
  assert.ok(bad.json.errors.some((e) => e.pointer === '/record/decision'));
  const flag = await api(srv.url, 'POST', '/api/v1/decisions?dry_run=perhaps', { token: olga.token, body: { record: revise } });
  assert.equal(flag.status, 422);
  assert.equal(flag.json.errors[0].pointer, '?dry_run');
  assert.equal((await dryRun(revise, member)).status, 403);
  assert.equal(logSize(), size + 1);
});
