// Runs belong to workloads (issue 21, item 2): a workload names how its runs are recognised in
// job accounting (sacct WCKey, Comment, a job-name glob, or a JSON run's workload field); the
// sacct importer keeps WCKey, Comment and JobName when printed; the runs list and the usage
// report narrow to a workload's runs. Expected figures are computed here from the lines sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeWorkload, text } from './evidence.lib.mjs';

let srv, as, w;
before(async () => {
  ({ srv, as } = await evidenceServer());
  w = await makeWorkload(as, 'ana', { team: 'vision', name: 'resnet50', kind: 'training', class: 'production', runs_match: { wckey: 'resnet' } });
});
after(async () => { await srv?.stop(); });

// sacct -P -o JobID,Account,State,Submit,Start,End,AllocTRES,WCKey,Comment,JobName
const HEADER = 'JobID|Account|State|Submit|Start|End|AllocTRES|WCKey|Comment|JobName';
function sacctLines() {
  const lines = [];
  for (let i = 0; i < 30; i++) {
    const wckey = i % 3 === 0 ? 'resnet' : (i % 3 === 1 ? 'bert' : '');
    const comment = i % 5 === 0 ? 'sweep 7' : '';
    const name = i % 2 ? `train-${i}` : `eval_${i}`;
    const state = i % 4 === 0 ? 'FAILED' : 'COMPLETED';
    const h = String(10 + (i % 10)).padStart(2, '0');
    lines.push({ i, wckey, comment, name, state, hours: 1 + (i % 3), line: `${1000 + i}|vision|${state}|2025-03-0${1 + (i % 5)}T${h}:00:00|2025-03-0${1 + (i % 5)}T${h}:10:00|2025-03-0${1 + (i % 5)}T${String(10 + (i % 10) + 1 + (i % 3)).padStart(2, '0')}:10:00|billing=8,gres/gpu=2|${wckey}|${comment}|${name}` });
  }
  return lines;
}

test('sacct keeps WCKey, Comment and JobName; the runs list and the usage report narrow to a workload\'s runs', async () => {
  const lines = sacctLines();
  const up = await as('ana', 'POST', '/runs?cluster=fox', text([HEADER, ...lines.map((l) => l.line)].join('\n') + '\n'));
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.inserted, 30);
  // the same WCKey on another team's runs is not the workload's
  const other = await as('owner1', 'POST', '/runs?cluster=fox2', text([HEADER, '1|nlp|COMPLETED|2025-03-01T10:00:00|2025-03-01T10:00:00|2025-03-01T11:00:00|gres/gpu=1|resnet||x'].join('\n') + '\n'));
  assert.equal(other.status, 201, other.text);

  const mine = lines.filter((l) => l.wckey === 'resnet');
  const listed = await as('ana', 'GET', `/runs?workload=${w.id}&limit=100`);
  assert.equal(listed.status, 200, listed.text);
  assert.deepEqual(listed.json.items.map((r) => r.external_id).sort(), mine.map((l) => String(1000 + l.i)).sort());
  const one = listed.json.items.find((r) => r.external_id === '1000');
  assert.deepEqual([one.wckey, one.comment, one.job_name], ['resnet', 'sweep 7', 'eval_0']);

  const report = await as('ana', 'GET', `/reports/usage?workload=${w.id}&group_by=state`);
  assert.equal(report.status, 200, report.text);
  const want = {};
  for (const l of mine) {
    const g = want[l.state] ??= { runs: 0, gh: 0 };
    g.runs++;
    g.gh += 2 * l.hours;
  }
  assert.deepEqual(Object.fromEntries(report.json.groups.map((g) => [g.state, g.runs])), Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v.runs])));
  for (const g of report.json.groups) assert.ok(Math.abs(g.gpu_hours - want[g.state].gh) < 1e-9, `${g.state}: ${g.gpu_hours}`);
  assert.equal(report.json.groups[0].queue_wait_s.approximate, false);
  const series = await as('ana', 'GET', `/reports/usage/series?workload=${w.id}&bucket=month`);
  assert.equal(series.status, 200, series.text);
  assert.equal(series.json.groups.reduce((s, g) => s + g.runs.reduce((a, b) => a + b, 0), 0), mine.length);

  // a job-name glob and a comment: any of the rule's members (a merge patch keeps the wckey)
  const v = (await as('ana', 'GET', `/workloads/${w.id}`)).headers.etag;
  const patch = await as('ana', 'PATCH', `/workloads/${w.id}`, { body: { runs_match: { job_name: 'train-1*', comment: 'sweep 7' } }, headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': v } });
  assert.equal(patch.status, 200, patch.text);
  const byName = await as('ana', 'GET', `/runs?workload=${w.id}&limit=100`);
  const expect = lines.filter((l) => /^train-1/.test(l.name) || l.comment === 'sweep 7' || l.wckey === 'resnet').map((l) => String(1000 + l.i)).sort();
  assert.deepEqual(byName.json.items.map((r) => r.external_id).sort(), expect);
});

test('JSON runs name their workload; a workload without a rule or of another team is named in the 422', async () => {
  const base = { team: 'vision', submitted_at: '2025-04-01T00:00:00Z', started_at: '2025-04-01T00:05:00Z', ended_at: '2025-04-01T01:05:00Z', gpus: 4, state: 'COMPLETED' };
  const w2 = await makeWorkload(as, 'ana', { team: 'vision', name: 'vit', kind: 'training', class: 'exploratory', runs_match: { workload: 'vit' } });
  const up = await as('ana', 'POST', '/runs?cluster=json', { body: [{ ...base, external_id: 'j1', workload: 'vit' }, { ...base, external_id: 'j2', workload: 'other' }, { ...base, external_id: 'j3' }] });
  assert.equal(up.status, 201, up.text);
  const listed = await as('ana', 'GET', `/runs?workload=${w2.id}`);
  assert.deepEqual(listed.json.items.map((r) => r.external_id), ['j1']);
  assert.equal(listed.json.items[0].workload, 'vit');

  const bare = await makeWorkload(as, 'ana', { team: 'vision', name: 'bare', kind: 'training', class: 'exploratory' });
  const r1 = await as('ana', 'GET', `/runs?workload=${bare.id}`);
  assert.equal(r1.status, 422, r1.text);
  assert.equal(r1.json.errors[0].pointer, '?workload');
  assert.match(r1.json.errors[0].message, /names no runs_match/);
  const r2 = await as('bob', 'GET', `/reports/usage?workload=${w2.id}`);
  assert.equal(r2.status, 422, r2.text);
  assert.match(r2.json.errors[0].message, /no workload with this id/);
  const bad = await as('ana', 'POST', '/workloads', { body: { team: 'vision', name: 'x', kind: 'training', class: 'exploratory', runs_match: { wckey: '', colour: 'red' } } });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(), ['/runs_match/colour', '/runs_match/wckey']);
});
