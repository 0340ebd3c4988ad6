// Two stored comparisons side by side: the inputs that differ (the resolved scenarios, leaf by
// leaf, named as the break-even sentences name them) and the figures they moved (winner, each
// option's reliable and expected cost per outcome, time to result), and which changed input
// crossed a break-even point of the older comparison — the input that moved the winner.
import { h, notice } from './dom.js';
import { describeInput, currencyOf } from './comparison.js';
import { fieldName } from './problems.js';
import { money, number, percent, duration, dateTime } from './format.js';
import { table } from './listing.js';

// Leaves of a JSON document as pointer → value (arrays of scalars kept whole).
export function leaves(doc, prefix = '', out = new Map()) {
  if (doc && typeof doc === 'object' && !(Array.isArray(doc) && doc.every((x) => x === null || typeof x !== 'object'))) {
    for (const [k, v] of Object.entries(doc)) leaves(v, `${prefix}/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  } else {
    out.set(prefix, doc);
  }
  return out;
}

// Options are matched by name, not position: "/options/1/…" → "/options/<name>/…".
function byName(scenario) {
  const s = JSON.parse(JSON.stringify(scenario || {}));
  if (Array.isArray(s.options)) s.options = Object.fromEntries(s.options.map((o, i) => [o.name || `#${i + 1}`, o]));
  return s;
}

function indexOf(scenario, name) {
  return (scenario.options || []).findIndex((o) => o.name === name);
}

// A pointer of the name-keyed form back to the scenario's own (for describeInput).
function realPointer(p, scenario) {
  const m = p.match(/^\/options\/([^/]+)(\/.*)?$/);
  if (!m) return p;
  const name = m[1].replace(/~1/g, '/').replace(/~0/g, '~');
  return `/options/${indexOf(scenario, name)}${m[2] || ''}`;
}

function show(v, fmt) {
  if (v === undefined) return 'absent';
  if (v === null) return 'none';
  if (typeof v === 'number') return fmt ? fmt(v) : number(v, 3);
  if (Array.isArray(v)) return v.join(', ');
  return String(v);
}

// {inputs: [{pointer, subject, before, after, crosses}], figures: [...], winner: {before, after}}
export function diffComparisons(a, b) {
  const la = leaves(byName(a.scenario));
  const lb = leaves(byName(b.scenario));
  const currency = currencyOf(b.result, b.scenario);
  const inputs = [];
  for (const p of new Set([...la.keys(), ...lb.keys()])) {
    const x = la.get(p);
    const y = lb.get(p);
    if (JSON.stringify(x) === JSON.stringify(y)) continue;
    if (p.endsWith('/id')) continue; // a stored record's id: its figures are compared instead
    const real = realPointer(p, lb.has(p) ? b.scenario : a.scenario);
    const d = /^\/options\/\d+\//.test(real) || /^\/assumptions\//.test(real) ? describeInput(real, lb.has(p) ? b.scenario : a.scenario, currency) : null;
    const subject = d && !d.subject.startsWith('/') ? d.subject : fieldName(p);
    // Did this change cross a break-even point of the older comparison?
    const be = (a.result.break_even || []).find((e) => realPointer(p, a.scenario) === e.input);
    const crosses = be && typeof x === 'number' && typeof y === 'number'
      && (be.flips_at - x) * (be.flips_at - y) <= 0 ? be : null;
    inputs.push({ pointer: p, subject, before: show(x, d && d.fmt), after: show(y, d && d.fmt), crosses });
  }
  inputs.sort((p, q) => Number(Boolean(q.crosses)) - Number(Boolean(p.crosses)));
  const oa = Object.fromEntries((a.result.options || []).map((o) => [o.name, o]));
  const ob = Object.fromEntries((b.result.options || []).map((o) => [o.name, o]));
  const cur = (c) => (v) => money(v, c);
  const figures = [];
  const FIGS = [
    ['reliable_cost_per_outcome', 'reliable cost per outcome', cur(currencyOf(a.result, a.scenario))],
    ['expected_cost_per_outcome', 'expected cost per outcome', cur(currencyOf(a.result, a.scenario))],
    ['time_to_result_s', 'time to result', duration],
  ];
  for (const name of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
    for (const [k, label, fmt] of FIGS) {
      const x = oa[name] ? oa[name][k] : undefined;
      const y = ob[name] ? ob[name][k] : undefined;
      if (x === y || (x === undefined && y === undefined)) continue;
      const change = typeof x === 'number' && typeof y === 'number' && x !== 0 ? (y - x) / Math.abs(x) : null;
      figures.push({ option: name, figure: label, before: show(x, fmt), after: show(y, fmt), change });
    }
  }
  return { inputs, figures, winner: { before: a.result.winner ?? null, after: b.result.winner ?? null } };
}

function label(c) {
  return `${c.scenario_name || 'scenario'} · ${dateTime(c.created_at)}`;
}

// The side-by-side view of two stored comparisons (each {sha256, scenario, result} as GET
// /comparisons/{sha} answers, plus the list item's scenario_name and created_at).
export function comparisonDiffView(a, b) {
  const d = diffComparisons(a, b);
  const moved = d.winner.before !== d.winner.after;
  const crossing = d.inputs.filter((i) => i.crosses);
  return h('section', { class: 'card comparison-diff', 'data-testid': 'comparison-diff', 'aria-labelledby': 'diff-title' },
    h('h3', { id: 'diff-title' }, 'What changed between the two comparisons'),
    h('div', { class: 'grid-2 diff-sides' },
      h('p', null, h('strong', null, 'Before: '), label(a), ` — winner ${d.winner.before ?? 'none'}`),
      h('p', null, h('strong', null, 'After: '), label(b), ` — winner ${d.winner.after ?? 'none'}`)),
    h('p', { 'data-testid': 'diff-winner' }, moved
      ? [h('strong', null, `The winner moved from ${d.winner.before ?? 'none'} to ${d.winner.after ?? 'none'}`),
        crossing.length ? `: ${crossing.map((i) => `${i.subject} went from ${i.before} to ${i.after}, past its break-even point`).join('; ')}.` : ' (no single changed input crossed a break-even point of the older comparison: the changes together moved it).']
      : `The winner is the same (${d.winner.after ?? 'none'}).`),
    d.inputs.length
      ? table([
        { label: 'Input', value: (r) => [r.subject, r.crosses ? [' ', h('span', { class: 'chip' }, 'moved the winner')] : ''] },
        { label: 'Before', value: (r) => r.before },
        { label: 'After', value: (r) => r.after },
      ], d.inputs, { caption: `Inputs that differ (${d.inputs.length})`, name: 'inputs that differ', csvName: 'inputs-that-differ' })
      : notice('The two comparisons rest on the same inputs (another engine or seed can still move the figures).'),
    d.figures.length
      ? table([
        { label: 'Option', value: (r) => r.option },
        { label: 'Figure', value: (r) => r.figure },
        { label: 'Before', class: 'num', value: (r) => r.before },
        { label: 'After', class: 'num', value: (r) => r.after },
        { label: 'Change', class: 'num', sort: (r) => r.change, value: (r) => (r.change === null ? '' : `${r.change > 0 ? '+' : ''}${percent(r.change, 1)}`) },
      ], d.figures, { caption: `Figures they moved (${d.figures.length})`, name: 'figures they moved', csvName: 'figures-moved' })
      : h('p', null, 'No figure moved.'));
}
