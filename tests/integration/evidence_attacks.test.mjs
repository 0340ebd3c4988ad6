// Attacks on issue 21's evidence paths (the adversarial pass): huge and hostile label sets,
// cross-team reads through *_from and ?workload=, and selections that find nothing the caller may
// read — each a named 4xx or a bounded answer, never another team's figure, never a 5xx.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload } from './evidence.lib.mjs';

let srv, as, offer, nlpWork;
before(async () => {
  ({ srv, as } = await evidenceServer());
  offer = await makeOffer(as, { gpu_model: 'A100-80GB' });
  nlpWork = await makeWorkload(as, 'bob', { team: 'nlp', name: 'secret', kind: 'training', class: 'production', runs_match: { wckey: 'secret' } });
});
after(async () => { await srv?.stop(); });

const base = { team: 'vision', submitted_at: '2025-06-01T00:00:00Z', started_at: '2025-06-01T00:01:00Z', ended_at: '2025-06-01T01:00:00Z', gpus: 1, state: 'FAILED' };

test('an upload with 1,100 distinct class labels keeps 1,024 and names every other line; hostile labels are stored as given', async () => {
  const lines = [];
  for (let i = 0; i < 1100; i++) lines.push(JSON.stringify({ ...base, external_id: `l${i}`, workload_class: i === 0 ? '<img src=x onerror=alert(1)>' : i === 1 ? '__proto__' : `label-${i}` }));
  const up = await as('ana', 'POST', '/runs?cluster=labels', { body: lines.join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
  assert.equal(up.status, 201, up.text.slice(0, 300));
  assert.equal(up.json.inserted, 1024);
  assert.equal(up.json.rejected_total, 76);
  assert.ok(up.json.rejected.every((e) => e.pointer === '/workload_class' && /1024 distinct workload classes/.test(e.message)));
  assert.equal(Object.keys(up.json.classes).length, 1024);
  const listed = await as('ana', 'GET', `/runs?class=${encodeURIComponent('<img src=x onerror=alert(1)>')}`);
  assert.equal(listed.json.items[0].workload_class, '<img src=x onerror=alert(1)>');
  const classes = await as('ana', 'GET', '/workload-classes');
  assert.equal(classes.status, 200);
  assert.equal(classes.json.unmapped_total, 1024);
  assert.ok(classes.json.unmapped.length <= 1000);
  // the report groups by every label, each as given
  const r = await as('ana', 'GET', '/reports/usage?group_by=workload_class');
  assert.equal(r.status, 200);
  assert.equal(r.json.groups.length, 1024);
});

test('another team\'s workload through ?workload= and *_from reveals nothing', async () => {
  // nlp runs with the secret WCKey; ana (vision) asks for them every way she can
  assert.equal((await as('bob', 'POST', '/runs?cluster=n', { body: [{ ...base, team: 'nlp', external_id: 's1', wckey: 'secret' }] })).status, 201);
  for (const path of [`/runs?workload=${nlpWork.id}`, `/reports/usage?workload=${nlpWork.id}`]) {
    const r = await as('ana', 'GET', path);
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.errors[0].message, /^no workload with this id$/);
  }
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'mine', kind: 'training', class: 'production', target_units: 1e6, unit: 'steps', memory_required_gb: 10 });
  for (const from of [{ failure_from: { workload: nlpWork.id } }, { queue_wait_from: { team: 'nlp' } }, { failure_from: { workload_class: 'production', team: 'nlp' } }]) {
    const sc = await as('ana', 'POST', '/scenarios', { body: { name: `x${Math.random()}`, team: 'vision', workload_ids: [w.id], document: { workload: w.id, assumptions: { trials: 100 }, options: [{ name: 'a', offer: offer.id, benchmark: { instances: 1, throughput_units_per_s: 100, ...from } }] } } });
    assert.equal(sc.status, 422, sc.text);
    assert.match(sc.json.errors[0].message, /selects no/);
  }
});
