// Charts of a comparison, drawn with Chart.js — Debian's libjs-chart.js, served by capledger at
// /vendor/chart.js/chart.min.js (a classic script loaded before the app: window.Chart). Each
// chart is a <figure> whose canvas carries a one-line description (role="img") and whose
// caption says in words what the chart shows, with the figures in a table, so nothing is
// only visible as a picture. Without the library (not installed) the words and tables remain.
import { h } from './dom.js';
import { table as dataTable } from './listing.js';
import { money, percent, number, duration } from './format.js';

const PALETTE = ['#1f5fa8', '#c2571a', '#2e7d32', '#7b3fa0', '#8a6d00', '#00838f', '#ad1457', '#455a64'];

function chartLib() {
  return typeof window !== 'undefined' && window.Chart ? window.Chart : null;
}

// A figure: canvas (drawn when the library is there), caption, optional table of the figures.
function figure({ id, title, summary, details, draw }) {
  const canvas = h('canvas', { role: 'img', 'aria-label': summary, id: `${id}-canvas` });
  const fig = h('figure', { class: 'chart', 'data-chart': id },
    h('div', { class: 'chart-box' }, canvas),
    h('figcaption', null, h('strong', null, title), ' ', h('span', { class: 'chart-summary', 'data-testid': `${id}-summary` }, summary)),
    details || null);
  const Chart = chartLib();
  if (Chart) {
    // Drawn once the figure is in the document (Chart.js measures its parent).
    requestAnimationFrame(() => {
      try {
        draw(Chart, canvas);
        fig.dataset.drawn = 'true';
      } catch (e) {
        fig.append(h('p', { class: 'hint' }, `The chart could not be drawn: ${e.message}`));
      }
    });
  } else {
    fig.dataset.drawn = 'false';
    fig.append(h('p', { class: 'hint' }, 'Charts need Debian\'s libjs-chart.js on the server; the figures are in the table.'));
  }
  return fig;
}

const BASE_OPTIONS = {
  responsive: true,
  maintainAspectRatio: false,
  animation: false,
  plugins: { legend: { position: 'bottom' } },
};

// The Monte Carlo cost per outcome of each option as a cumulative distribution (percentiles
// 1–99 from the API), with the expected cost and the reliable quantile marked.
// `charts` is the API's charts document (POST /compare/charts, GET /comparisons/{sha}/charts).
const chartsOf = (charts) => Object.fromEntries(((charts && charts.options) || []).map((o) => [o.name, o]));

export function costDistributionChart(comparison, charts, currency, reliableQuantile = 0.9) {
  const extra = chartsOf(charts);
  const options = (comparison.options || []).filter((o) => o.feasible && extra[o.name] && Array.isArray(extra[o.name].cost_per_outcome_percentiles))
    .map((o) => ({ ...o, cost_per_outcome_percentiles: extra[o.name].cost_per_outcome_percentiles }));
  if (!options.length) return null;
  const q = Math.round(100 * reliableQuantile);
  // "Expected" is the figure the option cards show (the engine's expected cost per outcome);
  // the trials' own mean, which differs from it by the sampling, is in the table.
  const lines = options.map((o) => {
    const trialsMean = o.cost_per_outcome_quantiles && o.cost_per_outcome_quantiles.mean;
    const mean = Number.isFinite(o.expected_cost_per_outcome) ? o.expected_cost_per_outcome : trialsMean;
    const below = o.cost_per_outcome_percentiles.filter((v) => v !== null && v < mean).length;
    return { o, mean, trialsMean, rel: o.reliable_cost_per_outcome, meanRank: below };
  });
  const above = lines.filter((l) => Number.isFinite(l.mean) && l.rel < l.mean);
  // Engine 2's reliable figure (risk_measure cvar): the mean of the worst (1 − α) of the trials,
  // each trial a month of planned outcomes.
  const cvar = comparison.risk_measure === 'cvar';
  const relName = cvar ? `worst-${100 - q}% mean` : `p${q}`;
  const summary = `Cost per outcome from the Monte Carlo trials, one curve per option: ${lines.map((l) =>
    `${l.o.name} expected ${money(l.mean, currency)}, ${relName} ${money(l.rel, currency)}`).join('; ')}.`;
  const why = h('p', { class: 'chart-why', 'data-testid': 'p90-why' },
    cvar
      ? `Each trial is a month of ${number(comparison.planned_outcomes_per_month || 1)} planned outcomes; the reliable figure is the mean cost of the worst ${100 - q}% of those months, so it always sits at or above the expected cost and sees risks rarer than one month in ${Math.round(100 / (100 - q))}.`
      : above.length
      ? `${above.map((l) => l.o.name).join(', ')}: the reliable p${q} sits below the expected cost because the expected cost is a mean — a few very expensive trials (failed attempts, interruptions) above the ${q}th percentile pull the mean up, while the p${q} only says that ${q}% of trials cost less.`
      : `The reliable p${q} is the cost that ${q}% of trials stay under; it can sit below the expected cost (a mean) when a rare expensive tail — failed attempts, interruptions — lies above it.`);
  const PCTS = [10, 25, 50, 75, 90, 99];
  const table = h('details', { class: 'legend' }, h('summary', null, 'Percentiles as a table'),
    dataTable([
      { label: 'option', value: (r) => r.option },
      ...PCTS.map((p) => ({ label: `p${p}`, class: 'num', sort: (r) => r[`p${p}`], value: (r) => money(r[`p${p}`], currency) })),
      { label: 'mean of the trials', class: 'num', sort: (r) => r.mean_of_trials, value: (r) => money(r.mean_of_trials, currency) },
    ], lines.map((l) => ({ option: l.o.name, ...Object.fromEntries(PCTS.map((p) => [`p${p}`, l.o.cost_per_outcome_percentiles[p - 1]])), mean_of_trials: l.trialsMean })),
    { caption: 'Cost per outcome percentiles', toolbar: false }));
  const fig = figure({
    id: 'cost-distribution',
    title: 'How the cost per outcome is spread.',
    summary,
    details: h('div', null, why, table),
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'line',
      data: {
        datasets: lines.flatMap((l, i) => [
          {
            label: l.o.name,
            data: l.o.cost_per_outcome_percentiles.map((v, k) => ({ x: v, y: (k + 1) / 100 })).filter((p) => p.x !== null),
            borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length], pointRadius: 0, borderWidth: 2,
          },
          {
            label: `${l.o.name}: expected (●) and ${relName} (◆)`,
            data: [{ x: l.mean, y: l.meanRank / 100 },
              { x: l.rel, y: cvar ? l.o.cost_per_outcome_percentiles.filter((v) => v !== null && v < l.rel).length / 100 : reliableQuantile }],
            showLine: false, pointStyle: ['circle', 'rectRot'], pointRadius: 6,
            borderColor: PALETTE[i % PALETTE.length],
            backgroundColor: [PALETTE[i % PALETTE.length], '#ffffff'], // ● filled, ◆ open
          },
        ]),
      },
      options: {
        ...BASE_OPTIONS,
        scales: {
          x: { type: 'linear', title: { display: true, text: `cost per outcome (${currency})` } },
          y: { min: 0, max: 1, title: { display: true, text: 'share of trials costing less' } },
        },
      },
    }),
  });
  return fig;
}

// How far each uncertain input can move (relative to its current value) before the winner
// changes: a "tornado" of horizontal bars, the shortest first.
export function tornadoChart(comparison, describe) {
  const items = (comparison.break_even || []).filter((b) => Number.isFinite(b.current) && b.current !== 0 && Number.isFinite(b.flips_at))
    .map((b) => ({ ...b, change: (b.flips_at - b.current) / Math.abs(b.current), label: describe(b.input) }))
    .sort((a, b) => Math.abs(a.change) - Math.abs(b.change));
  if (!items.length) return null;
  const summary = `How far each input can move before the winner changes, nearest first: ${items.map((b) =>
    `${b.label} ${b.change > 0 ? '+' : ''}${percent(b.change, 0)} (then ${b.new_winner} wins)`).join('; ')}.`;
  return figure({
    id: 'tornado',
    title: 'What would change the decision.',
    summary,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'bar',
      data: {
        labels: items.map((b) => b.label),
        datasets: [{
          label: 'change before the winner changes',
          data: items.map((b) => 100 * b.change),
          backgroundColor: items.map((b) => (b.change < 0 ? '#b3261e' : '#1f5fa8')),
        }],
      },
      options: {
        ...BASE_OPTIONS,
        indexAxis: 'y',
        plugins: { legend: { display: false } },
        scales: { x: { title: { display: true, text: '% change from today\'s value' } } },
      },
    }),
  });
}

// GPU-hours by team and workload class (the usage report), stacked per team.
export function usageChart(groups) {
  const rows = (groups || []).filter((g) => g.team !== undefined && Number.isFinite(g.gpu_hours));
  if (!rows.length) return null;
  const teams = [...new Set(rows.map((g) => g.team))];
  const byClass = rows.some((g) => 'workload_class' in g);
  const classOf = (g) => (byClass ? g.workload_class || 'unclassified' : 'all classes');
  const classes = [...new Set(rows.map(classOf))];
  const value = (t, c) => rows.filter((g) => g.team === t && classOf(g) === c).reduce((s, g) => s + g.gpu_hours, 0);
  const summary = `GPU-hours by team and workload class: ${teams.map((t) => `${t} ${classes.map((c) => `${c} ${number(value(t, c))}`).join(', ')}`).join('; ')}.`;
  return figure({
    id: 'usage',
    title: 'Where the GPU-hours went.',
    summary,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'bar',
      data: {
        labels: teams,
        datasets: classes.map((c, i) => ({ label: c, data: teams.map((t) => value(t, c)), backgroundColor: PALETTE[i % PALETTE.length] })),
      },
      options: { ...BASE_OPTIONS, scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: 'GPU-hours' } } } },
    }),
  });
}

// Inference: the hourly demand of one profile day against the replicas each option provisions
// (from the API's replicas_by_profile_hour, at the expected demand).
export function demandChart(comparison, charts, scenario) {
  const demand = scenario && scenario.service && scenario.service.demand_rps_by_hour;
  const extra = chartsOf(charts);
  const options = (comparison.options || []).filter((o) => extra[o.name] && Array.isArray(extra[o.name].replicas_by_profile_hour))
    .map((o) => ({ ...o, replicas_by_profile_hour: extra[o.name].replicas_by_profile_hour }));
  if (!Array.isArray(demand) || !demand.length || !options.length) return null;
  const hours = demand.map((_, i) => `${i}`);
  const peak = Math.max(...demand);
  const summary = `Demand over ${demand.length} hours from ${number(Math.min(...demand))} to ${number(peak)} requests/s; replicas provisioned: ${options.map((o) =>
    `${o.name} ${number(Math.min(...o.replicas_by_profile_hour))}–${number(Math.max(...o.replicas_by_profile_hour))}`).join('; ')}.`;
  return figure({
    id: 'demand',
    title: 'Hourly demand and the replicas provisioned for it.',
    summary,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'line',
      data: {
        labels: hours,
        datasets: [
          { label: 'demand (requests/s)', data: demand, borderColor: '#222', backgroundColor: '#222', yAxisID: 'rps', stepped: true },
          ...options.map((o, i) => ({ label: `${o.name} replicas`, data: o.replicas_by_profile_hour, borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length], yAxisID: 'replicas', stepped: true, borderDash: [4, 3] })),
        ],
      },
      options: {
        ...BASE_OPTIONS,
        scales: {
          x: { title: { display: true, text: 'hour of the demand profile' } },
          rps: { position: 'left', title: { display: true, text: 'requests/s' }, beginAtZero: true },
          replicas: { position: 'right', title: { display: true, text: 'replicas' }, beginAtZero: true, grid: { drawOnChartArea: false } },
        },
      },
    }),
  });
}

// Inference: each option's latency (the SLO's metric) against the load it served (achieved
// requests/s: the basis the engine sizes replicas on), with the SLO.
export function sloChart(scenario) {
  const slo = scenario && scenario.service && scenario.service.slo;
  const opts = ((scenario && scenario.options) || []).filter((o) => o.benchmark && Array.isArray(o.benchmark.load_points));
  if (!slo || !opts.length) return null;
  const metric = slo.metric;
  const series = opts.map((o) => ({
    name: o.name,
    pts: o.benchmark.load_points.map((p) => ({ x: Number.isFinite(p.achieved_rps) ? p.achieved_rps : p.offered_rps, y: p[metric] })).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)).sort((a, b) => a.x - b.x),
  })).filter((s) => s.pts.length);
  if (!series.length) return null;
  const xs = series.flatMap((s) => s.pts.map((p) => p.x));
  const summary = `${metric} against the load served, SLO ${number(slo.target_ms)} ms: ${series.map((s) => {
    const ok = s.pts.filter((p) => p.y <= slo.target_ms);
    return `${s.name} meets it up to ${ok.length ? `${number(ok[ok.length - 1].x)} req/s served` : 'no measured load'}`;
  }).join('; ')}.`;
  return figure({
    id: 'latency',
    title: 'Latency against load, and the SLO.',
    summary,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'line',
      data: {
        datasets: [
          ...series.map((s, i) => ({ label: s.name, data: s.pts, borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length] })),
          { label: `SLO (${number(slo.target_ms)} ms)`, data: [{ x: Math.min(...xs), y: slo.target_ms }, { x: Math.max(...xs), y: slo.target_ms }], borderColor: '#b3261e', borderDash: [6, 4], pointRadius: 0 },
        ],
      },
      options: { ...BASE_OPTIONS, scales: { x: { type: 'linear', title: { display: true, text: 'requests/s served (achieved)' } }, y: { title: { display: true, text: `${metric}` } } } },
    }),
  });
}

// "07:04:28 UTC" (with the date when it is not the first point's day).
function clock(ms, dayOf) {
  const iso = new Date(ms).toISOString();
  const t = `${iso.slice(11, 19)} UTC`;
  return dayOf && iso.slice(0, 10) !== new Date(dayOf).toISOString().slice(0, 10) ? `${iso.slice(0, 10)} ${t}` : t;
}
function elapsed(s) {
  const v = Math.round(s);
  const hh = Math.floor(v / 3600);
  const mm = Math.floor((v % 3600) / 60);
  const ss = v % 60;
  return hh ? `${hh}h${String(mm).padStart(2, '0')}m` : mm ? `${mm}m${String(ss).padStart(2, '0')}s` : `${ss}s`;
}

// Telemetry: a benchmark's duty cycle over time (GET /benchmarks/{id}/telemetry/series: the
// mean of all GPUs per time bucket, with the min–max band when there are several), its idle
// stretches shaded and listed. The x axis is the time since the first sample.
export function dutyCycleChart(series) {
  const pts = ((series && series.points) || []).filter((p) => p.t && Number.isFinite(p.duty_cycle_mean));
  if (!pts.length) return null;
  const t0 = Date.parse(series.first_ts || pts[0].t);
  const at = (text) => (Date.parse(text) - t0) / 1000;
  const stretches = series.idle_stretches || [];
  const total = series.idle_stretches_total ?? stretches.length;
  const mean = pts.reduce((s, p) => s + p.duty_cycle_mean * p.samples, 0) / pts.reduce((s, p) => s + p.samples, 0);
  const rule = `duty cycle below ${percent(series.idle_below, 1)} for at least ${duration(series.idle_min_s)}`;
  const longest = stretches.reduce((m, s) => (s.duration_s > m.duration_s ? s : m), stretches[0] || { duration_s: 0 });
  const span = (Date.parse(series.last_ts) - t0) / 1000;
  const summary = `Duty cycle of ${number(series.samples, 0)} samples from ${number(series.gpus, 0)} GPU(s) over ${duration(span)} from ${clock(t0)}${pts.length < series.samples ? `, shown as ${pts.length} averaged points` : ''}: mean ${percent(mean)}. `
    + (total
      ? `${number(total, 0)} idle stretch${total === 1 ? '' : 'es'} (${rule}), ${duration(series.idle_seconds_total)} in all; the longest ${duration(longest.duration_s)} from ${clock(Date.parse(longest.start), t0)}.`
      : `No idle stretch (${rule}).`);
  const listed = h('details', { class: 'legend', open: stretches.length > 0 && stretches.length <= 10 ? true : null },
    h('summary', null, total ? `Idle stretches (${total > stretches.length ? `first ${stretches.length} of ${total}` : total})` : 'Idle stretches (none)'),
    stretches.length ? h('div', { 'data-testid': 'idle-stretches' }, dataTable([
      { label: 'GPU', value: (x) => x.gpu },
      { label: 'from', value: (x) => clock(Date.parse(x.start), t0), sort: (x) => x.start },
      { label: 'to', value: (x) => clock(Date.parse(x.end), t0), sort: (x) => x.end },
      { label: 'lasting', class: 'num', value: (x) => duration(x.duration_s), sort: (x) => x.duration_s },
      { label: 'samples', class: 'num', value: (x) => number(x.samples, 0), sort: (x) => x.samples },
    ], stretches, { caption: `Idle: ${rule}.`, csvName: 'idle-stretches' }))
      : h('p', { class: 'hint' }, `No run of samples with ${rule}.`));
  const band = series.gpus > 1;
  return figure({
    id: 'duty-cycle',
    title: 'GPU duty cycle over time, idle stretches shaded.',
    summary,
    details: listed,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'line',
      data: {
        datasets: [
          {
            label: `idle stretch (${rule})`,
            data: stretches.flatMap((s) => [{ x: at(s.start), y: 1 }, { x: at(s.end), y: 1 }, { x: at(s.end), y: null }]),
            borderColor: 'rgba(179, 38, 30, 0.35)', backgroundColor: 'rgba(179, 38, 30, 0.15)', fill: 'origin', pointRadius: 0, borderWidth: 1, spanGaps: false,
          },
          {
            label: band ? 'duty cycle (mean of the GPUs)' : 'duty cycle',
            data: pts.map((p) => ({ x: at(p.t), y: p.duty_cycle_mean })),
            borderColor: PALETTE[0], backgroundColor: PALETTE[0], pointRadius: pts.length > 60 ? 0 : 2, borderWidth: 2,
          },
          ...(band ? [{
            label: 'lowest GPU', data: pts.map((p) => ({ x: at(p.t), y: p.duty_cycle_min })),
            borderColor: '#9aa5b1', backgroundColor: '#9aa5b1', borderDash: [3, 3], pointRadius: 0, borderWidth: 1,
          }] : []),
        ],
      },
      options: {
        ...BASE_OPTIONS,
        scales: {
          x: { type: 'linear', min: 0, title: { display: true, text: `time since ${clock(t0)}` }, ticks: { callback: (v) => elapsed(v) } },
          y: { min: 0, max: 1, title: { display: true, text: 'duty cycle' }, ticks: { callback: (v) => `${Math.round(v * 100)}%` } },
        },
      },
    }),
  });
}

// GPU-hours per day, week or month by team and workload class (GET /reports/usage/series),
// stacked per bucket.
export function usageOverTimeChart(doc) {
  const buckets = (doc && doc.buckets) || [];
  const groups = ((doc && doc.groups) || []).filter((g) => Array.isArray(g.gpu_hours));
  if (!buckets.length || !groups.length) return null;
  const name = (g) => `${g.team ?? 'no team'} · ${g.workload_class || 'unclassified'}`;
  const totals = groups.map((g) => g.gpu_hours.reduce((s, v) => s + v, 0));
  const busiest = buckets.map((b, i) => groups.reduce((s, g) => s + g.gpu_hours[i], 0));
  const peak = busiest.indexOf(Math.max(...busiest));
  const summary = `GPU-hours per ${doc.bucket} from ${buckets[0]} to ${buckets[buckets.length - 1]} (${buckets.length} ${doc.bucket}${buckets.length === 1 ? '' : 's'}${doc.truncated ? ', the latest kept' : ''}), by team and class: ${groups.map((g, i) => `${name(g)} ${number(totals[i])}`).join('; ')}; the busiest ${doc.bucket} began ${buckets[peak]} with ${number(busiest[peak])}.`;
  const details = h('details', { class: 'legend' }, h('summary', null, `GPU-hours per ${doc.bucket} as a table`),
    dataTable([
      { label: `${doc.bucket} from`, value: (r) => r.period, date: (r) => r.period },
      ...groups.map((g) => ({ label: name(g), class: 'num', sort: (r) => r[name(g)], value: (r) => number(r[name(g)]) })),
    ], buckets.map((b, i) => ({ period: b, ...Object.fromEntries(groups.map((g) => [name(g), g.gpu_hours[i]])) })),
    { caption: `GPU-hours per ${doc.bucket}`, csvName: `gpu-hours-per-${doc.bucket}` }));
  return figure({
    id: 'usage-over-time',
    title: `GPU-hours per ${doc.bucket}, by team and class.`,
    summary,
    details,
    draw: (Chart, canvas) => new Chart(canvas, {
      type: 'bar',
      data: {
        labels: buckets,
        datasets: groups.map((g, i) => ({ label: name(g), data: g.gpu_hours, backgroundColor: PALETTE[i % PALETTE.length], stack: 'gpu-hours' })),
      },
      options: { ...BASE_OPTIONS, scales: { x: { stacked: true, title: { display: true, text: `${doc.bucket} beginning (UTC)` } }, y: { stacked: true, title: { display: true, text: 'GPU-hours' } } } },
    }),
  });
}
