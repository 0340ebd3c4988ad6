// What-if: the team's own job history replayed under candidate capacity arrangements
// (docs/whatif.md). Pick the runs (team, cluster, partition, class, window), the pool offer and a
// sweep of owned GPUs, the overflow offer and its wait, and a p90 wait target; POST /whatif
// replays and stores it. Shown: a plain sentence of the result, the frontier (cost per completed
// job against p90 wait, one point per pool size, the recommendation marked), the backtest
// (observed against replayed waits) when the cluster records its capacity, the table, and what a
// replay cannot know. The stored replay's hash is what a review or a decision cites.
import { h, field, alertBox, busy, copyButton } from '../dom.js';
import { table } from '../listing.js';
import { request, listAll, ApiError } from '../api.js';
import { problemList } from '../problems.js';
import { money, percent, duration, number } from '../format.js';

const CANNOT_KNOW = 'A replay cannot know the demand that never arrived because the queue was long: '
  + 'jobs people did not submit (or submitted smaller, or later) under the old capacity are not in the '
  + 'history, so more GPUs would meet more demand than the replay shows.';

function chartLib() {
  return typeof window !== 'undefined' && window.Chart ? window.Chart : null;
}

// "Owning 48 GPUs and bursting after 20 min to on-demand: p90 wait 14 min, 71 % busy, $38.20 per
// completed job"
export function sentence(a, currency) {
  const parts = [`Owning ${number(a.pool_gpus)} GPU${a.pool_gpus === 1 ? '' : 's'}`];
  parts.push(a.overflow ? ` and bursting after ${duration(a.overflow.after_wait_s)}` : ' and no burst');
  parts.push(`: p90 wait ${duration(a.wait_s.p90)}`);
  if (a.pool_utilization !== null) parts.push(`, ${percent(a.pool_utilization)} busy`);
  if (a.cost_per_completed_job !== null) parts.push(`, ${money(a.cost_per_completed_job, currency || 'USD')} per completed job`);
  if (a.unschedulable) parts.push(`; ${a.unschedulable} jobs never run`);
  return parts.join('');
}

function frontierFigure(result) {
  const currency = result.currency || 'USD';
  const pts = result.arrangements.filter((a) => a.wait_s.p90 !== null && a.cost_per_completed_job !== null && !a.unschedulable);
  const summary = `Cost per completed job against p90 wait for ${pts.length} arrangements; recommended: ${result.recommended || 'none'}.`;
  const canvas = h('canvas', { role: 'img', 'aria-label': summary });
  const fig = h('figure', { class: 'chart', 'data-chart': 'whatif-frontier' }, h('div', { class: 'chart-box' }, canvas),
    h('figcaption', null, h('strong', null, 'Frontier'), ' ', h('span', { class: 'chart-summary', 'data-testid': 'whatif-frontier-summary' }, summary)));
  const Chart = chartLib();
  if (Chart) {
    requestAnimationFrame(() => {
      const point = (a) => ({ x: a.wait_s.p90 / 60, y: a.cost_per_completed_job, name: a.name });
      const onFrontier = new Set(result.frontier);
      new Chart(canvas, {
        type: 'scatter',
        data: {
          datasets: [
            { label: 'arrangement', data: pts.filter((a) => !onFrontier.has(a.name)).map(point), backgroundColor: '#9aa5b1' },
            { label: 'frontier', data: pts.filter((a) => onFrontier.has(a.name)).map(point), backgroundColor: '#1f5fa8', showLine: true, borderColor: '#1f5fa8' },
            { label: 'recommended', data: pts.filter((a) => a.name === result.recommended).map(point), backgroundColor: '#c2571a', pointRadius: 9, pointStyle: 'star' },
          ],
        },
        options: {
          responsive: true, maintainAspectRatio: false, animation: false,
          scales: { x: { title: { display: true, text: 'p90 wait (min)' } }, y: { title: { display: true, text: `cost per completed job (${currency})` } } },
          plugins: { tooltip: { callbacks: { label: (c) => `${c.raw.name}: ${number(c.raw.x)} min, ${money(c.raw.y, currency)}` } } },
        },
      });
      fig.dataset.drawn = 'true';
    });
  }
  return fig;
}

function backtestFigure(bt) {
  const summary = `Observed p90 wait ${duration(bt.observed.p90)}, replayed ${duration(bt.replayed.p90)} (${bt.jobs} jobs of ${bt.arrangement}).`;
  const canvas = h('canvas', { role: 'img', 'aria-label': summary });
  const fig = h('figure', { class: 'chart', 'data-chart': 'whatif-backtest' }, h('div', { class: 'chart-box' }, canvas),
    h('figcaption', null, h('strong', null, 'Backtest'), ' ', h('span', { class: 'chart-summary', 'data-testid': 'whatif-backtest-summary' }, summary)));
  const Chart = chartLib();
  if (Chart && bt.observed_quantiles_s && bt.replayed_quantiles_s) {
    requestAnimationFrame(() => {
      const labels = bt.observed_quantiles_s.map((_, k) => k);
      new Chart(canvas, {
        type: 'line',
        data: {
          labels,
          datasets: [
            { label: 'observed wait (min)', data: bt.observed_quantiles_s.map((s) => s / 60), borderColor: '#455a64', pointRadius: 0 },
            { label: 'replayed wait (min)', data: bt.replayed_quantiles_s.map((s) => s / 60), borderColor: '#1f5fa8', pointRadius: 0 },
          ],
        },
        options: { responsive: true, maintainAspectRatio: false, animation: false, scales: { x: { title: { display: true, text: 'percentile' } } } },
      });
      fig.dataset.drawn = 'true';
    });
  }
  return fig;
}

// The hand-off to the Compare page: a replay's arrangement whose waits and busy share an option
// of a scenario can rest on (docs/whatif.md, "Feeding the cost engine").
export const WHATIF_HANDOFF = 'capledger.whatif-arrangement';

function useInComparison(stored, preferred) {
  const names = stored.result.arrangements.filter((a) => !a.unschedulable).map((a) => a.name);
  if (!names.length) return null;
  const pick = h('select', null, ...names.map((n) => h('option', { value: n, selected: n === preferred }, n)));
  const pickField = field('Arrangement', pick, { name: 'whatif-use-arrangement' });
  const go = h('button', { type: 'button', 'data-testid': 'whatif-use' }, 'Use in a comparison');
  go.addEventListener('click', () => {
    sessionStorage.setItem(WHATIF_HANDOFF, JSON.stringify({ sha256: stored.sha256, arrangement: pick.value }));
    location.hash = '#/compare';
  });
  return h('div', { class: 'card whatif-use' },
    h('p', null, 'A comparison can rest on this replay: an option\'s queue waits become the arrangement\'s replayed waits, and a reserved offer\'s utilisation its busy share.'),
    pickField.wrap, go);
}

export function renderResult(stored) {
  const result = stored.result;
  const currency = result.currency || 'USD';
  const byName = Object.fromEntries(result.arrangements.map((a) => [a.name, a]));
  const rec = result.recommended ? byName[result.recommended] : null;
  const cheapestFast = [...result.arrangements].filter((a) => !a.unschedulable && a.wait_s.p90 !== null)
    .sort((x, y) => x.wait_s.p90 - y.wait_s.p90 || x.cost.total - y.cost.total)[0];
  const lines = [];
  if (rec) lines.push(`${sentence(rec, currency)} (recommended${result.wait_p90_max_s !== null ? ` within a p90 wait of ${duration(result.wait_p90_max_s)}` : ''}).`);
  else lines.push('No arrangement runs every job within the wait target.');
  if (cheapestFast && (!rec || cheapestFast.name !== rec.name)) lines.push(`${sentence(cheapestFast, currency)} (the shortest p90 wait).`);
  const columns = [
    { label: 'arrangement', value: (a) => a.name, sort: (a) => a.name },
    { label: 'GPUs', value: (a) => number(a.pool_gpus), sort: (a) => a.pool_gpus },
    { label: 'p50 wait', value: (a) => duration(a.wait_s.p50), sort: (a) => a.wait_s.p50 },
    { label: 'p90 wait', value: (a) => duration(a.wait_s.p90), sort: (a) => a.wait_s.p90 },
    { label: 'p99 wait', value: (a) => duration(a.wait_s.p99), sort: (a) => a.wait_s.p99 },
    { label: 'busy', value: (a) => percent(a.pool_utilization), sort: (a) => a.pool_utilization },
    { label: 'overflowed', value: (a) => String(a.overflowed), sort: (a) => a.overflowed },
    { label: 'unschedulable', value: (a) => String(a.unschedulable), sort: (a) => a.unschedulable },
    { label: 'cost', value: (a) => money(a.cost.total, currency), sort: (a) => a.cost.total },
    { label: 'per completed job', value: (a) => money(a.cost_per_completed_job, currency), sort: (a) => a.cost_per_completed_job },
  ];
  return h('section', { class: 'whatif-result', 'data-testid': 'whatif-result' },
    h('h3', null, 'Result'),
    ...lines.map((t) => h('p', { class: 'whatif-sentence', 'data-testid': 'whatif-sentence' }, t)),
    h('p', null, `${result.jobs} jobs, ${result.not_replayed} not replayed (never started, no end or no GPUs), over ${duration(result.horizon_s)}. Stored as `,
      h('code', { 'data-testid': 'whatif-sha' }, stored.sha256), ' ', copyButton(stored.sha256, { label: 'Copy hash' }),
      ' — cite it as evidence in a review artifact or a decision.'),
    frontierFigure(result),
    result.backtest ? backtestFigure(result.backtest) : h('p', { class: 'hint' }, 'No backtest: name the arrangement really in place as the baseline (the cluster\'s recorded capacity).'),
    table(columns, result.arrangements, { caption: 'Every arrangement replayed', csvName: 'whatif' }),
    useInComparison(stored, result.recommended),
    h('p', { class: 'hint', 'data-testid': 'whatif-cannot-know' }, CANNOT_KNOW));
}

export async function renderWhatif(root, ctx) {
  const teams = ctx.user.teams || [];
  const offers = await listAll('/offers').catch(() => []);
  const offerOptions = (none) => [none ? h('option', { value: '' }, none) : null,
    ...offers.map((o) => h('option', { value: o.id }, `${o.name || o.instance_type} — ${money(o.price_per_hour / o.gpus_per_instance, o.currency)}/GPU-h`))];
  const input = (attrs) => h('input', attrs);
  const f = {
    team: field('Team', teams.length ? h('select', null, teams.map((t) => h('option', { value: t }, t))) : input({ type: 'text', maxlength: 64 }), { name: 'team' }),
    cluster: field('Cluster', input({ type: 'text', maxlength: 127 }), { name: 'cluster', hint: 'The cluster name given when its runs were uploaded.' }),
    partition: field('Partition', input({ type: 'text', maxlength: 127 }), { name: 'partition' }),
    workload_class: field('Workload class', input({ type: 'text', maxlength: 127 }), { name: 'workload_class' }),
    from: field('Submitted from', input({ type: 'date' }), { name: 'from' }),
    to: field('to (excluded)', input({ type: 'date' }), { name: 'to' }),
    pool_offer: field('Pool offer (owned GPUs)', h('select', null, offerOptions(null)), { name: 'pool_offer' }),
    sweep_from: field('Owned GPUs from', input({ type: 'number', min: 0, step: 'any', value: 1 }), { name: 'sweep_from' }),
    sweep_to: field('to', input({ type: 'number', min: 0, step: 'any', value: 8 }), { name: 'sweep_to' }),
    sweep_step: field('step', input({ type: 'number', min: 0, step: 'any', value: 1 }), { name: 'sweep_step' }),
    overflow_offer: field('Overflow offer', h('select', null, offerOptions('no overflow')), { name: 'overflow_offer' }),
    after_wait: field('Burst after (minutes of waiting)', input({ type: 'number', min: 0, step: 1, value: 20 }), { name: 'after_wait' }),
    target: field('p90 wait target (minutes)', input({ type: 'number', min: 0, step: 'any', value: 30 }), { name: 'target' }),
    baseline: field('Backtest against the cluster\'s recorded capacity', input({ type: 'checkbox' }), { name: 'baseline' }),
  };
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const out = h('div', { class: 'result' });
  const run = h('button', { type: 'submit', class: 'primary' }, 'Replay');
  const form = h('form', { class: 'whatif-form', 'data-testid': 'whatif-form' },
    h('fieldset', null, h('legend', null, 'Which jobs'), ...['team', 'cluster', 'partition', 'workload_class', 'from', 'to'].map((k) => f[k].wrap)),
    h('fieldset', null, h('legend', null, 'Arrangements'), ...['pool_offer', 'sweep_from', 'sweep_to', 'sweep_step', 'overflow_offer', 'after_wait', 'target', 'baseline'].map((k) => f[k].wrap)),
    run, status);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(run, async () => {
      status.replaceChildren();
      const v = (k) => f[k].control.value.trim();
      const jobs = { team: v('team') };
      for (const k of ['cluster', 'partition', 'workload_class']) if (v(k)) jobs[k] = v(k);
      if (v('from')) jobs.from = `${v('from')}T00:00:00Z`;
      if (v('to')) jobs.to = `${v('to')}T00:00:00Z`;
      const own = { name: 'own', pool_gpus: { from: Number(v('sweep_from')), to: Number(v('sweep_to')), step: Number(v('sweep_step')) }, pool_offer: v('pool_offer') };
      if (v('overflow_offer')) own.overflow = { offer: v('overflow_offer'), after_wait_s: Math.round(Number(v('after_wait')) * 60) };
      const body = { jobs, arrangements: [own] };
      if (v('target') !== '') body.wait_p90_max_s = Number(v('target')) * 60;
      if (f.baseline.control.checked) {
        body.arrangements.push({ name: 'recorded', pool_gpus: 'cluster', pool_offer: v('pool_offer') });
        body.baseline = 'recorded';
      }
      try {
        const { data } = await request('POST', '/whatif', { json: body });
        out.replaceChildren(renderResult(data));
      } catch (e) {
        if (e instanceof ApiError && e.errors.length) status.append(alertBox('The replay was refused:', problemList(e.errors)));
        else status.append(alertBox(`The replay failed: ${e.message}`));
      }
    });
  });
  root.append(h('h2', null, 'What-if'),
    h('p', null, 'Replay your own job history on a pool of owned GPUs, swept over its size, bursting to another offer after a wait: what jobs wait, what sits idle, and what a completed job costs.'),
    h('p', { class: 'hint' }, CANNOT_KNOW),
    form, out);
}
