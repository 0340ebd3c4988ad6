// Renders a comparison document (docs/cost-model.md) so the hourly-price trap is impossible to miss:
// flags first, then each option's cost per outcome with a stacked bar of where the money goes,
// then the sentences that say what would change the winner. Used by the Compare page and to
// show a stored comparison cited by a review.
import { h } from './dom.js';
import { money, number, percent, duration, ratio } from './format.js';
import { costDistributionChart, tornadoChart, demandChart, sloChart } from './charts.js';

// Breakdown items in drawing order, with their labels (batch then inference-only items).
export const BREAKDOWN_ITEMS = [
  ['useful', 'useful compute'],
  ['input_stall', 'input stall'],
  ['other_idle', 'other idle'],
  ['setup', 'setup'],
  ['checkpoint_and_interruption', 'checkpoint / interruption'],
  ['failed_attempts', 'failed attempts'],
  ['rejected_runs', 'rejected runs'],
  ['retries', 'retries'],
  ['idle_capacity', 'idle capacity'],
  ['spares', 'spares'],
  ['cold_starts', 'cold starts'],
  ['interruptions', 'interruptions'],
  ['unused_reservation', 'unused reservation'],
  ['orchestration', 'orchestration'],
  ['storage', 'storage'],
  ['transfer', 'transfer'],
  ['review', 'review'],
  ['engineer_wait', 'engineer wait'],
  ['unserved', 'unserved requests'],
];
const LABEL = Object.fromEntries(BREAKDOWN_ITEMS);

const REASON_TEXT = {
  memory: 'does not fit in GPU memory',
  quota: 'over the GPU quota',
  supply: 'no regional supply',
  slo: 'cannot meet the SLO',
  interruptions: 'interrupted too often to finish',
  out_of_range: 'figures too large to represent',
  slo_capacity: 'cannot hold the SLO under every demand scenario',
};

function isInference(comparison, scenario) {
  if (scenario && scenario.workload && scenario.workload.kind) return scenario.workload.kind === 'inference';
  return (comparison.options || []).some((o) => 'capacity_rps_per_replica' in o);
}

export function currencyOf(comparison, scenario) {
  if (comparison.currency) return comparison.currency;
  const o = scenario && scenario.options && scenario.options.find((x) => x.offer && x.offer.currency);
  return o ? o.offer.currency : 'USD';
}

function outcomeWord(inference, scenario) {
  if (inference) return 'accepted request';
  const w = scenario && scenario.workload;
  return w && w.target_units && w.unit ? `completed run (${number(w.target_units)} ${w.unit})` : 'completed run';
}

function breakdownTotal(breakdown) {
  return Object.values(breakdown || {}).reduce((s, v) => s + (Number.isFinite(v) ? v : 0), 0);
}

// A stacked bar whose full track is `scale` (the largest total among the options), so bars of
// different options compare by length. Widths go through CSSOM (el.style.width), which the CSP
// allows, unlike style attributes.
export function breakdownBar(option, scale, currency, inference) {
  const breakdown = option.breakdown || {};
  const total = breakdownTotal(breakdown);
  const bar = h('div', {
    class: 'stack',
    role: 'img',
    'data-total': String(total),
    'aria-label': `${option.name}: ${money(total, currency)} ${inference ? 'in total' : 'per outcome'}, ` + BREAKDOWN_ITEMS
      .filter(([k]) => breakdown[k] > 0).map(([k, label]) => `${label} ${percent(breakdown[k] / total)}`).join(', '),
  });
  for (const [key, label] of BREAKDOWN_ITEMS) {
    const v = breakdown[key];
    if (!(v > 0)) continue;
    const seg = h('div', {
      class: `seg seg-${key}`,
      'data-key': key,
      'data-value': String(v),
      title: `${label}: ${money(v, currency)} (${percent(v / total, 1)})`,
    });
    seg.style.width = `${(100 * v) / scale}%`;
    bar.append(seg);
  }
  return bar;
}

function breakdownLegend(option, currency, inference) {
  const breakdown = option.breakdown || {};
  const total = breakdownTotal(breakdown);
  const rows = BREAKDOWN_ITEMS.filter(([k]) => breakdown[k] > 0);
  return h('details', { class: 'legend' },
    h('summary', null, 'Where the money goes'),
    h('table', null,
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'item'), h('th', { scope: 'col', class: 'num' }, inference ? 'over the horizon' : 'per outcome'), h('th', { scope: 'col', class: 'num' }, 'share'))),
      h('tbody', null, rows.map(([k, label]) => h('tr', null,
        h('th', { scope: 'row' }, h('span', { class: `swatch seg-${k}`, 'aria-hidden': 'true' }), label),
        h('td', { class: 'num' }, money(breakdown[k], currency)),
        h('td', { class: 'num' }, percent(breakdown[k] / total, 1))))),
      h('tfoot', null, h('tr', null, h('th', { scope: 'row' }, 'total'), h('td', { class: 'num' }, money(total, currency)), h('td', { class: 'num' }, '100%')))));
}

function metric(label, value, extra) {
  return h('div', { class: 'metric' }, h('dt', null, label), h('dd', null, value, extra ? h('span', { class: 'sub' }, extra) : null));
}

function quantileText(q, fmt) {
  if (!q || !Number.isFinite(q.p50)) return null;
  return `p50 ${fmt(q.p50)} · p90 ${fmt(q.p90)} · p99 ${fmt(q.p99)}`;
}

// What the reliable figure is. Engine 2's default (risk_measure cvar) is the mean of the worst
// (1 − α) of months, each month the mean cost of its planned outcomes; engine 1's is a quantile
// of one outcome.
const VOLUME_NOUN = { evaluation: 'evaluations', training: 'training runs', fine_tuning: 'fine-tuning runs' };
export function reliableLabel(comparison, inference) {
  if (inference) return 'worst demand scenario';
  const q = comparison.reliable_quantile || 0.9;
  if (comparison.risk_measure === 'cvar') {
    const v = comparison.planned_outcomes_per_month || 1;
    const noun = VOLUME_NOUN[comparison.kind] || 'outcomes';
    return `the mean of the worst ${number(Math.round(1000 * (1 - q)) / 10)} % of months at ${number(v)} ${v === 1 ? noun.replace(/s$/, '') : noun} a month`;
  }
  return `p${Math.round(100 * q)} of the Monte Carlo`;
}

// Which engine made a comparison; one made by an older engine says so (it is recomputed with it).
export function engineNote(comparison) {
  const v = comparison.engine_version || '';
  const m = /^capledger-cost\/(\d+)\./.exec(v);
  const engine = m ? Number(m[1]) : null;
  if (engine === 1) return `Made by engine 1 (${v}): computed and recomputed with engine 1's model; new comparisons use engine 2.`;
  return engine ? `Engine ${engine} (${v})` : v;
}

function percentOf(x) {
  return Number.isFinite(x) ? `${(100 * x).toFixed(x >= 0.9995 || x === 0 ? 0 : 1)}%` : '—';
}

function sloByScenario(option) {
  const detail = option.by_demand_scenario_detail;
  if (!detail) return null;
  return h('span', { 'data-testid': 'slo-attainment' }, Object.entries(detail).map(([k, d]) =>
    `${k} ${percentOf(d.slo_attainment)}${d.slo_breach_hours > 0 ? ` (short in ${number(d.slo_breach_hours)} h)` : ''}`).join(' · '));
}

function optionCard(option, ctx) {
  const { currency, inference, scale, rank, winner, scenarioOption } = ctx;
  const offer = scenarioOption && scenarioOption.offer;
  const describe = [option.arrangement, offer && offer.gpu_model, offer && offer.purchase_option && offer.purchase_option.replace('_', '-')]
    .filter(Boolean).join(' · ');
  let badge;
  if (!option.feasible) {
    badge = h('span', { class: 'badge bad' }, 'infeasible');
  } else if (option.name === winner) {
    badge = h('span', { class: 'badge win' }, 'winner');
  } else if (rank > 0) {
    badge = h('span', { class: 'badge' }, `#${rank}`);
  }
  const reasons = (option.infeasible_reasons || []);
  const cq = option.cost_per_outcome_quantiles;
  const tq = option.time_to_result_quantiles;
  const dl = h('dl', { class: 'metrics' },
    metric('Expected cost per outcome', h('strong', null, money(option.expected_cost_per_outcome, currency))),
    metric('Reliable cost per outcome', money(option.reliable_cost_per_outcome, currency), ctx.reliableLabel),
    Number.isFinite(option.cash_cost_per_outcome) && option.cash_cost_per_outcome !== option.expected_cost_per_outcome
      ? metric('Cash cost per outcome', h('span', { 'data-testid': 'cash-cost' }, money(option.cash_cost_per_outcome, currency)),
        'the reservation is paid already, so its compute is no new cash — this assumes its spare capacity covers the volume')
      : null,
    cq && Number.isFinite(cq.p50) ? metric('Cost spread', quantileText(cq, (x) => money(x, currency))) : null,
    inference ? null : metric('Time to result', duration(option.time_to_result_s), quantileText(tq, duration)),
    metric('Price per GPU-hour', money(option.price_per_gpu_hour, currency)),
    inference ? metric('Capacity per replica', `${number(option.capacity_rps_per_replica)} req/s`) : null,
    inference ? metric('Replica-hours', number(option.replica_hours), `utilisation ${percent(option.utilization)}`) : null,
    inference ? metric('Per million output tokens', money(option.cost_per_million_output_tokens, currency)) : null,
    inference && option.by_demand_scenario ? metric('By demand scenario',
      Object.entries(option.by_demand_scenario).map(([k, v]) => `${k} ${money(v, currency)}`).join(' · ')) : null,
    inference && option.by_demand_scenario_detail ? metric('SLO attainment by demand scenario', sloByScenario(option),
      (option.slo_capacity_scenarios || []).length ? `below the floor in ${option.slo_capacity_scenarios.join(', ')}` : null) : null,
    !inference ? metric('Billed instance-hours', number(option.billed_instance_hours),
      Number.isFinite(option.checkpoint_interval_s) ? `checkpoint every ${duration(option.checkpoint_interval_s)}` : null) : null);
  return h('article', {
    class: ['option', option.feasible ? null : 'infeasible', option.name === winner ? 'is-winner' : null],
    'data-option': option.name,
    'aria-labelledby': `opt-${cssSafe(option.name)}`,
  },
  h('header', null,
    h('h4', { id: `opt-${cssSafe(option.name)}` }, option.name),
    badge,
    describe ? h('span', { class: 'describe' }, describe)
      : null),
  reasons.length ? h('p', { class: 'reasons' }, 'Not feasible: ', reasons.map((r) => REASON_TEXT[r] || r).join('; '), '.') : null,
  breakdownBar(option, scale, currency, inference),
  dl,
  (option.findings || []).length ? h('ul', { class: 'findings' }, option.findings.map((f) => h('li', null, f))) : null,
  breakdownLegend(option, currency, inference));
}

// The colours used by any option's bar, once for all bars.
function colourKey(options) {
  const used = BREAKDOWN_ITEMS.filter(([k]) => options.some((o) => o.breakdown && o.breakdown[k] > 0));
  return h('ul', { class: 'colour-key', 'aria-label': 'Colour key' },
    used.map(([k, label]) => h('li', null, h('span', { class: `swatch seg-${k}`, 'aria-hidden': 'true' }), label)));
}

function cssSafe(name) {
  return String(name).replace(/[^A-Za-z0-9_-]/g, '_');
}

// "/options/1/offer/price_per_hour" → a phrase and a value formatter.
export function describeInput(pointer, scenario, currency) {
  const m = /^\/options\/(\d+)\/(offer|benchmark)\/([a-z_]+)$/.exec(pointer);
  const asMoney = (x) => money(x, currency);
  const asPercent = (x) => percent(x, 1);
  if (m) {
    const opt = scenario && scenario.options && scenario.options[Number(m[1])];
    const name = opt ? opt.name : `option ${m[1]}`;
    const unit = scenario && scenario.workload && scenario.workload.unit;
    const fields = {
      price_per_hour: ['price per hour', asMoney],
      throughput_units_per_s: ['throughput', (x) => `${number(x)} ${unit ? `${unit}/s` : 'units/s'}`],
      interruption_rate_per_hour: ['interruption rate', (x) => `${number(x, 3)} per hour`],
      reserved_utilization: ['reserved utilisation', asPercent],
    };
    const [label, fmt] = fields[m[3]] || [m[3].replace(/_/g, ' '), (x) => number(x, 3)];
    return { subject: `${name}'s ${label}`, fmt };
  }
  const assumptions = {
    '/assumptions/failure_probability': ['the failure probability', asPercent],
    '/assumptions/engineer_rate_per_hour': ['the engineer rate', (x) => `${money(x, currency)} per hour`],
    '/assumptions/engineer_blocked_fraction': ['the share of engineer time blocked', asPercent],
  };
  const [subject, fmt] = assumptions[pointer] || [pointer, (x) => number(x, 3)];
  return { subject, fmt };
}

export function breakEvenSentence(item, scenario, currency) {
  const { subject, fmt } = describeInput(item.input, scenario, currency);
  const verb = item.flips_at > item.current ? 'rose' : 'fell';
  return `If ${subject} ${verb} from ${fmt(item.current)} to ${fmt(item.flips_at)}, ${item.new_winner} would win.`;
}

function flagsSection(comparison, scenario, currency, inference) {
  const flags = comparison.flags || {};
  const byName = Object.fromEntries((comparison.options || []).map((o) => [o.name, o]));
  const out = [];
  const trap = flags.hourly_price_trap;
  if (trap) {
    const cheapH = byName[trap.cheapest_hourly] || {};
    const cheapO = byName[trap.cheapest_per_outcome] || {};
    out.push(h('section', { class: 'flag flag-trap', 'data-flag': 'hourly_price_trap', 'aria-labelledby': 'flag-trap-title' },
      h('h3', { id: 'flag-trap-title' }, 'Hourly-price trap'),
      h('p', null,
        h('strong', null, trap.cheapest_hourly), ` is the cheapest per GPU-hour (${money(cheapH.price_per_gpu_hour, currency)}), but `,
        h('strong', null, trap.cheapest_per_outcome), ` is the cheapest per ${inference ? 'accepted request' : 'completed result'}. `,
        `Choosing by hourly price would cost `, h('strong', { class: 'ratio', 'data-ratio': String(trap.ratio) }, ratio(trap.ratio)),
        ` as much per outcome (${money(cheapH.expected_cost_per_outcome, currency)} against ${money(cheapO.expected_cost_per_outcome, currency)}).`)));
  }
  const overhead = flags.overhead_dominates || [];
  if (overhead.length) {
    out.push(h('section', { class: 'flag flag-overhead', 'data-flag': 'overhead_dominates' },
      h('h3', null, 'Overhead dominates'),
      h('p', null, 'Useful compute is under half the cost of ', overhead.map((n, i) => [i ? ', ' : '', h('strong', null, n)]), ': idle time, stalls, failures, reservation or people cost more than the work itself.')));
  }
  if (flags.demand_sensitive) {
    const winners = comparison.winner_by_demand_scenario || {};
    out.push(h('section', { class: 'flag flag-demand', 'data-flag': 'demand_sensitive' },
      h('h3', null, 'Demand sensitive'),
      h('p', null, 'The winner changes with demand: ',
        Object.entries(winners).map(([k, v]) => `${k} → ${v ?? 'none feasible'}`).join('; '), '.')));
  }
  return out;
}

// The whole comparison. `scenario` (optional) gives names of inputs and units; loadCharts
// (optional) returns a promise of the API's charts document for it.
export function renderComparison(comparison, scenario, { loadCharts } = {}) {
  const inference = isInference(comparison, scenario);
  const currency = currencyOf(comparison, scenario);
  const options = comparison.options || [];
  const ranking = comparison.ranking || [];
  const winner = comparison.winner ?? ranking[0] ?? null;
  const scale = Math.max(...options.map((o) => breakdownTotal(o.breakdown)), 1e-300);
  const scenarioByName = Object.fromEntries(((scenario && scenario.options) || []).map((o) => [o.name, o]));
  const winnerOpt = options.find((o) => o.name === winner);
  const rel = scenario && scenario.assumptions && scenario.assumptions.reliable_quantile;

  const summary = h('section', { class: 'summary', 'aria-labelledby': 'summary-title' },
    h('h3', { id: 'summary-title' }, winner ? 'Winner: ' : 'No feasible option', winner ? h('span', { class: 'winner-name', 'data-testid': 'winner' }, winner) : null),
    winnerOpt ? h('p', null, `${money(winnerOpt.reliable_cost_per_outcome, currency)} per ${outcomeWord(inference, scenario)}, reliably: ${reliableLabel(comparison, inference)} (expected ${money(winnerOpt.expected_cost_per_outcome, currency)}).`) : null,
    ranking.length ? h('ol', { class: 'ranking', 'aria-label': 'Ranking by reliable cost per outcome' },
      ranking.map((n) => {
        const o = options.find((x) => x.name === n);
        return h('li', null, h('span', { class: 'rank-name' }, n), ' ', h('span', { class: 'sub' }, o ? money(o.reliable_cost_per_outcome, currency) : ''));
      })) : null,
    h('p', { class: 'engine', 'data-testid': 'engine' }, engineNote(comparison)),
    h('p', { class: 'meta' }, [
      comparison.engine_version, Number.isInteger(comparison.seed) ? `seed ${comparison.seed}` : null,
      comparison.trials ? `${number(comparison.trials)} trials` : null,
      comparison.input_sha256 ? `input ${comparison.input_sha256.slice(0, 12)}…` : null,
    ].filter(Boolean).join(' · ')));

  const rankOf = (name) => ranking.indexOf(name) + 1;
  const cards = h('section', { class: 'options', 'aria-label': 'Options' },
    h('h3', null, `Cost per ${outcomeWord(inference, scenario)}`),
    h('p', { class: 'hint' }, 'Bars share one scale: a shorter bar is a cheaper outcome. Colours show where the money goes.'),
    colourKey(options),
    options.map((o) => optionCard(o, { currency, inference, scale, rank: rankOf(o.name), winner, scenarioOption: scenarioByName[o.name], reliableLabel: reliableLabel(comparison, inference) })));

  const be = comparison.break_even || [];
  const breakEven = h('section', { class: 'break-even', 'aria-labelledby': 'be-title' },
    h('h3', { id: 'be-title' }, 'What would change the decision'),
    be.length
      ? h('ul', null, be.map((item) => h('li', { 'data-input': item.input }, breakEvenSentence(item, scenario, currency))))
      : h('p', null, 'No single input, moved alone over a tenfold range, changes the winner.'),
    be.length ? h('p', { class: 'hint' }, 'Each value is where the winner by expected cost changes, with every other input held.') : null);

  // Charts: the break-even tornado at once; the distribution and the hourly replicas when the
  // charts document arrives (loadCharts: a promise of it, from the caller).
  const chartSection = h('section', { class: 'charts', 'aria-labelledby': 'charts-title' },
    h('h3', { id: 'charts-title' }, 'In pictures'),
    tornadoChart(comparison, (input) => describeInput(input, scenario, currency).subject),
    inference ? sloChart(scenario) : null);
  if (loadCharts) {
    loadCharts().then((charts) => {
      const first = chartSection.querySelector('h3');
      first.after(...[
        inference ? null : costDistributionChart(comparison, charts, currency, rel || comparison.reliable_quantile || 0.9),
        inference ? demandChart(comparison, charts, scenario) : null,
      ].filter(Boolean));
    }, (e) => chartSection.append(h('p', { class: 'hint' }, `The charts' figures are unavailable: ${e.message}`)));
  }

  return h('div', { class: 'comparison', 'data-testid': 'comparison' },
    flagsSection(comparison, scenario, currency, inference), summary, cards, chartSection, breakEven);
}
