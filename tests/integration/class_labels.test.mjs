// Workload classes are the team's own labels (issue 21, item 1). The defect: JSON runs carrying
// their own workload_class (the Alibaba GPU trace's qos: LS, BE, Burstable, Guaranteed) were
// stored unclassified, the label dropped, because only exploratory and production were kept.
// Every label is stored and reported as given; owners map each label to a tier (exploratory or
// production) that the review checklist counts by; unmapped labels count as exploratory and are
// listed as unmapped. Expected figures are computed here from the trace file itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from './lib/harness.mjs';
import { evidenceServer, makeWorkload } from './evidence.lib.mjs';

let srv, as;
before(async () => { ({ srv, as } = await evidenceServer()); });
after(async () => { await srv?.stop(); });

const T0 = Date.parse('2023-01-01T00:00:00Z');
const iso = (s) => new Date(T0 + s * 1000).toISOString();

// The trace's pods that ran and ended, as JSON runs of team vision with the pod's qos as class.
function traceRuns() {
  const lines = fs.readFileSync(path.join(dataDir, 'traces/alibaba-gpu-v2023/openb_pod_list_default.csv'), 'utf8').trimEnd().split('\n');
  const cols = lines[0].split(',');
  const at = (n) => cols.indexOf(n);
  return lines.slice(1).map((l) => l.split(',')).filter((f) => f[at('scheduled_time')] !== '' && f[at('deletion_time')] !== '')
    .map((f) => ({
      external_id: f[at('name')], team: 'vision', workload_class: f[at('qos')],
      submitted_at: iso(Number(f[at('creation_time')])), started_at: iso(Number(f[at('scheduled_time')])),
      ended_at: iso(Number(f[at('deletion_time')])),
      gpus: Number(f[at('num_gpu')]) * (Number(f[at('gpu_milli')]) || 1000) / 1000,
      state: f[at('pod_phase')] === 'Failed' ? 'FAILED' : 'COMPLETED',
    }));
}

test('JSON runs keep their own class labels (the Alibaba trace\'s four qos classes), in the upload, the runs list, the usage report and the series', async () => {
  const runs = traceRuns();
  const want = {};
  for (const r of runs) want[r.workload_class] = (want[r.workload_class] || 0) + 1;
  assert.deepEqual(Object.keys(want).sort(), ['BE', 'Burstable', 'Guaranteed', 'LS']);
  const up = await as('ana', 'POST', '/runs?cluster=alibaba', { body: runs.map(JSON.stringify).join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.inserted, runs.length);
  assert.deepEqual(up.json.classes, want, 'every run counted under its own label');
  assert.equal(up.json.warnings.filter((w) => w.code === 'unclassified').length, 0, JSON.stringify(up.json.warnings));

  const listed = await as('ana', 'GET', '/runs?class=Guaranteed&limit=100');
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.json.items.length, want.Guaranteed);
  assert.ok(listed.json.items.every((r) => r.workload_class === 'Guaranteed'));

  const report = await as('ana', 'GET', '/reports/usage?group_by=workload_class');
  assert.equal(report.status, 200, report.text);
  assert.deepEqual(Object.fromEntries(report.json.groups.map((g) => [g.workload_class, g.runs])), want);

  const series = await as('ana', 'GET', '/reports/usage/series?bucket=month&from=2023-01-01T00:00:00Z&to=2024-01-01T00:00:00Z');
  assert.equal(series.status, 200, series.text);
  const seriesRuns = {};
  for (const g of series.json.groups) seriesRuns[g.workload_class] = g.runs.reduce((a, b) => a + b, 0);
  const startedIn2023 = {};
  for (const r of runs) if (r.started_at < '2024') startedIn2023[r.workload_class] = (startedIn2023[r.workload_class] || 0) + 1;
  assert.deepEqual(seriesRuns, startedIn2023);
});

test('owners map labels to tiers; unmapped labels count as exploratory and are listed; the checklist counts by tier', async () => {
  const classes = await as('ana', 'GET', '/workload-classes');
  assert.equal(classes.status, 200, classes.text);
  assert.deepEqual(classes.json.items.map((c) => [c.label, c.tier]), [['exploratory', 'exploratory'], ['production', 'production']]);
  assert.deepEqual(classes.json.unmapped.map((u) => u.label).sort(), ['BE', 'Burstable', 'Guaranteed', 'LS']);
  const ls = classes.json.unmapped.find((u) => u.label === 'LS');
  assert.equal(ls.runs, traceRuns().filter((r) => r.workload_class === 'LS').length);

  // A production workload of team vision: no production-tier runs while LS is unmapped.
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'serving', kind: 'inference', class: 'production' });
  const review = await as('owner1', 'POST', '/reviews', { body: { title: 'serving capacity', workload_ids: [w.id], started_on: '2026-01-05' } });
  assert.equal(review.status, 201, review.text);
  const failures = async () => {
    const c = await as('ana', 'GET', `/reviews/${review.json.id}/checklist`);
    assert.equal(c.status, 200, c.text);
    return c.json;
  };
  let c = await failures();
  assert.match(c.items.find((i) => i.item === 'failure and rerun rate').missing.join(' '), /backed by 0 GPU runs of team 'vision' and class 'production'/);
  assert.deepEqual(c.unmapped_classes.sort(), ['BE', 'Burstable', 'Guaranteed', 'LS']);

  // Only owners set the mapping; a bad tier or label is named.
  assert.equal((await as('ana', 'PUT', '/workload-classes/LS', { body: { tier: 'production' } })).status, 403);
  const bad = await as('owner1', 'PUT', '/workload-classes/LS', { body: { tier: 'urgent', colour: 1 } });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(), ['/colour', '/tier']);
  const ctl = await as('owner1', 'PUT', `/workload-classes/${encodeURIComponent('a\u0007b')}`, { body: { tier: 'production' } });
  assert.ok([400, 422].includes(ctl.status), ctl.text); // the router refuses control characters in a path
  const long = await as('owner1', 'PUT', `/workload-classes/${'x'.repeat(64)}`, { body: { tier: 'production' } });
  assert.equal(long.status, 422, long.text);
  const builtin = await as('owner1', 'PUT', '/workload-classes/production', { body: { tier: 'exploratory' } });
  assert.equal(builtin.status, 422, builtin.text);
  assert.equal(builtin.json.errors[0].pointer, '/tier');
  const put = await as('owner1', 'PUT', '/workload-classes/LS', { body: { tier: 'production' } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual([put.json.label, put.json.tier], ['LS', 'production']);

  c = await failures();
  const item = c.items.find((i) => i.item === 'failure and rerun rate');
  assert.equal(item.covered, true, JSON.stringify(item));
  assert.deepEqual(c.unmapped_classes.sort(), ['BE', 'Burstable', 'Guaranteed']);
  const after = await as('aud', 'GET', '/workload-classes');
  assert.deepEqual(after.json.items.map((x) => [x.label, x.tier]).sort(), [['LS', 'production'], ['exploratory', 'exploratory'], ['production', 'production']]);
});

test('class labels: hostile and oversized labels are refused by line, ?class= takes a label, a cluster map gives labels', async () => {
  const base = { team: 'vision', submitted_at: '2025-03-01T00:00:00Z', started_at: '2025-03-01T00:01:00Z', ended_at: '2025-03-01T01:00:00Z', gpus: 1, state: 'COMPLETED' };
  const body = [
    { ...base, external_id: 'h1', workload_class: 'a\u0001b' },
    { ...base, external_id: 'h2', workload_class: '' },
    { ...base, external_id: 'h3', workload_class: 'x'.repeat(64) },
    { ...base, external_id: 'h4', workload_class: 'Guaranteed' },
  ];
  const up = await as('ana', 'POST', '/runs?cluster=hostile', { body });
  assert.equal(up.status, 201, up.text);
  assert.deepEqual(up.json.rejected.map((e) => e.pointer), ['/0/workload_class', '/1/workload_class', '/2/workload_class']);
  assert.deepEqual(up.json.classes, { Guaranteed: 1 });
  const q = await as('ana', 'POST', '/runs?cluster=hostile2&class=BE', { body: [{ ...base, external_id: 'q1' }] });
  assert.equal(q.status, 201, q.text);
  assert.deepEqual(q.json.classes, { BE: 1 });
  const tab = await as('ana', 'POST', `/runs?cluster=hostile3&class=${encodeURIComponent('a\tb')}`, { body: [{ ...base, external_id: 'q2' }] });
  assert.ok([400, 422].includes(tab.status), tab.text);
  const reserved = await as('ana', 'POST', '/runs?cluster=hostile3&class=unclassified', { body: [{ ...base, external_id: 'q2' }] });
  assert.equal(reserved.status, 422, reserved.text);
  assert.equal(reserved.json.errors[0].pointer, '?class');
  const map = await as('owner1', 'PUT', '/clusters/labelled', { body: { default_class: 'Burstable', partitions: [{ partition: 'p', workload_class: 'LS' }] } });
  assert.equal(map.status, 200, map.text);
  const m = await as('ana', 'POST', '/runs?cluster=labelled', { body: [{ ...base, external_id: 'm1', partition: 'p' }, { ...base, external_id: 'm2', partition: 'other' }] });
  assert.deepEqual(m.json.classes, { LS: 1, Burstable: 1 });
});
