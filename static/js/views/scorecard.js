// Realised against predicted (docs/reviews.md): a decision's scorecard — the realised compute
// cost per completed run of its review's workloads since it, beside what its comparison
// predicted for the chosen option — and the track record of every decision, per owner and team.
import { h, alertBox, notice } from '../dom.js';
import { table } from '../listing.js';
import { get } from '../api.js';
import { money, number, percent, dateTime } from '../format.js';

const VERDICT = {
  within: 'within the prediction',
  drift: 'over the prediction: the review needs a decision',
  too_few_runs: 'too few runs yet',
  no_completed_run: 'no run completed yet',
  not_comparable: 'not comparable',
};

const signed = (e) => (Number.isFinite(e) ? `${e >= 0 ? '+' : ''}${percent(e, 1)}` : 'n/a');

// The scorecard of decision `id`, filled when its outcome arrives.
export function scorecard(id) {
  const box = h('section', { class: 'card scorecard', 'aria-labelledby': `score-${id}`, 'data-testid': 'scorecard', 'aria-live': 'polite' },
    h('h3', { id: `score-${id}` }, 'Realised against predicted'),
    h('p', { class: 'loading' }, 'Scoring the decision against the runs since…'));
  get(`/decisions/${encodeURIComponent(id)}/outcome`).then(({ data: o }) => {
    const p = o.predicted || {};
    const r = o.realised || {};
    const cur = r.currency || p.currency || 'USD';
    box.dataset.verdict = o.verdict;
    box.replaceChildren(...[
      h('h3', { id: `score-${id}` }, 'Realised against predicted'),
      h('p', { class: `verdict verdict-${o.verdict}`, 'data-testid': 'scorecard-verdict' }, VERDICT[o.verdict] || o.verdict, ': ', o.reason),
      h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Realised against predicted' }, h('table', { class: 'data' },
        h('caption', null, `Option ${p.option || '—'}, runs since ${dateTime(o.window && o.window.from)}${o.window && o.window.until ? ` until ${dateTime(o.window.until)}` : ''}`),
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, ''), h('th', { scope: 'col' }, 'Predicted'), h('th', { scope: 'col' }, 'Realised'))),
        h('tbody', null,
          h('tr', null, h('th', { scope: 'row' }, 'Compute cost per completed run'),
            h('td', { 'data-testid': 'scorecard-predicted' }, money(p.compute_cost_per_outcome, p.currency || cur)),
            h('td', { 'data-testid': 'scorecard-realised' }, money(r.cost_per_completed, cur))),
          h('tr', null, h('th', { scope: 'row' }, 'Expected cost per outcome (all items)'),
            h('td', null, money(p.expected_cost_per_outcome, p.currency || cur)), h('td', null, '—')),
          h('tr', null, h('th', { scope: 'row' }, 'Error (realised / predicted − 1)'),
            h('td', null, `threshold ${percent(o.threshold, 0)}`), h('td', { 'data-testid': 'scorecard-error' }, signed(o.error))),
          h('tr', null, h('th', { scope: 'row' }, 'Runs (completed)'), h('td', null, `at least ${o.min_runs}`),
            h('td', { 'data-testid': 'scorecard-runs' }, `${r.runs} (${r.completed})`)),
          h('tr', null, h('th', { scope: 'row' }, 'Spent to date'), h('td', null, '—'),
            h('td', null, `${money(r.cost, cur)} over ${number(r.gpu_hours)} GPU-hours${r.unpriced_runs ? `; ${r.unpriced_runs} runs unpriced` : ''}`))))),
      (r.months || []).length
        ? h('div', { 'data-testid': 'scorecard-months' }, table([
          { label: 'Month', value: (m) => String(m.month).slice(0, 7), date: (m) => m.month },
          { label: 'Runs', class: 'num', value: (m) => String(m.runs) },
          { label: 'Completed', class: 'num', value: (m) => String(m.completed) },
          { label: 'Cost', class: 'num', sort: (m) => m.cost, value: (m) => money(m.cost, cur) },
          { label: 'Per completed run', class: 'num', sort: (m) => m.cost_per_completed, value: (m) => money(m.cost_per_completed, cur) },
        ], r.months, { caption: 'Per month', csvName: 'scorecard-per-month' }))
        : null,
      o.hidden_workloads ? notice(`${o.hidden_workloads} workload(s) of other teams are left out of these figures.`) : null,
      h('p', { class: 'sub' }, 'Realised: GPU-hours of the workloads\' runs priced by the cluster maps, over the runs that completed. Predicted: the comparison\'s compute items (no engineer wait, storage or transfer, which job accounting does not carry).'),
    ].filter(Boolean));
  }).catch((e) => box.replaceChildren(h('h3', { id: `score-${id}` }, 'Realised against predicted'), alertBox(`Scorecard unavailable: ${e.message}`)));
  return box;
}

function rows(list, key) {
  // The one table helper (listing.js): sortable, filterable, CSV with the API's fields.
  const w = h('div', { 'data-testid': `track-${key}s` }, table([
    { label: key === 'owner' ? 'Owner' : 'Team', value: (x) => x[key] },
    { label: 'Decisions', class: 'num', value: (x) => String(x.decisions) },
    { label: 'Scored', class: 'num', value: (x) => String(x.scored) },
    { label: 'Within threshold', class: 'num', sort: (x) => x.share_within_threshold, value: (x) => (x.share_within_threshold === null ? 'n/a' : `${x.within_threshold} (${percent(x.share_within_threshold, 0)})`) },
    { label: 'Median error', class: 'num', sort: (x) => x.median_error, value: (x) => signed(x.median_error) },
  ], list, { caption: key === 'owner' ? 'Per owner (who signed)' : 'Per team', csvName: `track-record-per-${key}` }));
  return w;
}

// The track record of decisions (GET /reports/decisions).
export function trackRecord() {
  const box = h('section', { class: 'card', 'aria-labelledby': 'track-title', 'data-testid': 'track-record', 'aria-live': 'polite' },
    h('h3', { id: 'track-title' }, 'Track record: decisions against what then happened'), h('p', { class: 'loading' }, 'Loading…'));
  get('/reports/decisions').then(({ data }) => {
    box.replaceChildren(h('h3', { id: 'track-title' }, 'Track record: decisions against what then happened'),
      ...(data.owners.length ? [rows(data.owners, 'owner'), rows(data.teams, 'team')] : [notice('No decision yet.')]),
      h('p', { class: 'sub' }, 'A decision is scored once at least 20 runs of its workloads ran after it; within threshold means the realised compute cost per completed run stayed within its review\'s outcome threshold of the prediction.'));
  }).catch((e) => box.replaceChildren(alertBox(`Track record unavailable: ${e.message}`)));
  return box;
}
