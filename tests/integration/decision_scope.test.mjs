// A team member reading a decision of a review shared with another team (issue 25, item 10):
// the signed record named the other team's evidence ids (the records themselves 404 for the
// member). Now each of them reads "hidden", in place, and evidence_hidden counts them; the
// owner and auditors still see the whole record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, createReview, postDecision, record } from './ledger.lib.mjs';

let srv, admin, owner, ana;
before(async () => {
  srv = await startServer();
  admin = mintToken(srv, 'admin');
  for (const name of ['vision', 'nlp']) {
    const t = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name } });
    assert.equal(t.status, 201, t.text);
  }
  owner = await addOwner(srv, 'olga');
  ana = addUser(srv, 'ana', 'team', ['vision']);
});
after(async () => { await srv?.stop(); });

const call = (token, method, path, body) => api(srv.url, method, `/api/v1${path}`, { token, body });

test('another team\'s evidence ids in a shared review\'s decision read "hidden" for a team member', async () => {
  const wl = {};
  const upload = {};
  for (const team of ['vision', 'nlp']) {
    const w = await call(owner.token, 'POST', '/workloads', { team, name: `train-${team}`, kind: 'training', class: 'production' });
    assert.equal(w.status, 201, w.text);
    wl[team] = w.json.id;
    const runs = [{ external_id: `${team}-1`, submitted_at: '2026-01-02T10:00:00Z', ended_at: '2026-01-02T11:00:00Z', state: 'COMPLETED', gpus: 1 }];
    const u = await api(srv.url, 'POST', `/api/v1/runs?cluster=c-${team}&team=${team}`, { token: owner.token, body: runs });
    assert.equal(u.status, 201, u.text);
    upload[team] = u.json.id;
  }
  const review = await createReview(srv.url, owner, [wl.vision, wl.nlp]);
  const rec = record(owner, review.id, { evidence: [upload.vision, upload.nlp] });
  const d = await postDecision(srv.url, owner, rec);
  assert.equal(d.status, 201, d.text);

  // the owner sees the record as signed
  const mine = await call(owner.token, 'GET', `/decisions/${rec.id}`);
  assert.equal(mine.status, 200, mine.text);
  assert.deepEqual(mine.json.record.evidence, [upload.vision, upload.nlp]);
  assert.equal(mine.json.evidence_hidden, undefined);

  // ana (vision) sees her team's id and "hidden" in the other's place, by id and in the list
  const one = await call(ana.token, 'GET', `/decisions/${rec.id}`);
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(one.json.record.evidence, [upload.vision, 'hidden']);
  assert.equal(one.json.evidence_hidden, 1);
  assert.ok(!one.text.includes(upload.nlp), one.text);
  const list = await call(ana.token, 'GET', `/decisions?review=${review.id}`);
  assert.equal(list.status, 200, list.text);
  const item = list.json.items.find((x) => x.id === rec.id);
  assert.deepEqual(item.record.evidence, [upload.vision, 'hidden']);
  assert.ok(!list.text.includes(upload.nlp), list.text);
  // and the other team's upload itself stays out of her reach
  assert.equal((await call(ana.token, 'GET', `/uploads/${upload.nlp}`)).status, 404);
  // nor through any other route a team member may read about the review and its decision
  for (const path of [`/decisions/${rec.id}/outcome`, `/reports/decisions`, `/reports/decisions?review=${review.id}`,
    `/reviews/${review.id}`, `/reviews/${review.id}/comparisons`, `/reviews/${review.id}/checklist`,
    `/reviews/${review.id}/artifacts`, `/reviews`, `/uploads`, `/decisions`]) {
    const r = await call(ana.token, 'GET', path);
    assert.ok(r.status < 500, `${path}: ${r.status}`);
    assert.ok(!r.text.includes(upload.nlp), `${path} names the other team's upload: ${r.text.slice(0, 400)}`);
  }
});
