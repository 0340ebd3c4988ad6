// The scenario builder (issue 23): a scenario document made from a form — the workload and each
// option's offer and benchmark picked by name (search as you type), the assumptions as fields
// with their defaults shown — kept in step with the JSON view, which stays for power users:
// every edit of the form rewrites the JSON (keys the form does not know are kept), and every
// edit of the JSON that parses refills the form.
import { h, field, uid, showFieldError } from './dom.js';
import { plainMessage } from './problems.js';
import { recordPicker } from './pickers.js';

// docs/cost-model.md: the batch assumptions with their defaults (engine 2's after the first).
export const ASSUMPTIONS = [
  ['failure_probability', 'Failure probability per attempt', '0', 'chance an attempt fails for a reason other than an interruption (0 ≤ q < 1)'],
  ['failure_progress_fraction', 'Failure strikes at (share of an attempt)', '0.5', 'how far through an attempt a failure strikes, on average'],
  ['engineer_rate_per_hour', 'Engineer rate per hour', '0', 'cost of an engineer\'s hour, in the offers\' currency'],
  ['engineer_blocked_fraction', 'Engineer blocked (share of wall time)', '0', 'share of the wall time to the result an engineer waits (0–1)'],
  ['retention_months', 'Retention (months)', '1', 'months the dataset and checkpoints are stored'],
  ['memory_headroom', 'Memory headroom', '0.05', 'share of GPU memory kept free'],
  ['reliable_quantile', 'Reliable quantile', '0.9', 'the quantile called reliable cost'],
  ['planned_outcomes_per_month', 'Planned outcomes per month', '1', 'useful results a month (engine 2)'],
  ['acceptance_rate', 'Acceptance rate', '1', 'share of completed runs that are accepted (engine 2)'],
  ['crash_rate_per_instance_hour', 'Crash rate per instance-hour', '0', 'crashes an instance-hour, unless the benchmark measured one (engine 2)'],
  ['trials', 'Monte Carlo trials', '20000', '1 … 1,000,000'],
  ['seed', 'Monte Carlo seed', '1', 'an integer'],
];

// builder({textarea, onTeam}) → {el, fromJson()}: textarea is the JSON view's control.
export function scenarioBuilder({ textarea, onTeam = () => {} }) {
  let syncing = false;
  const note = h('p', { class: 'hint', 'aria-live': 'polite', 'data-testid': 'builder-note' });
  const workload = recordPicker({ label: 'Workload', path: '/workloads', kind: 'workloads', name: 'builder-workload', hint: 'What one result is: pick it by name.' });
  const optionsBox = h('div', { class: 'builder-options', 'data-testid': 'builder-options' });
  const addBtn = h('button', { type: 'button' }, 'Add an option');
  const assumptionFields = ASSUMPTIONS.map(([key, label, def, hint]) => {
    const f = field(label, h('input', { type: 'text', inputmode: 'decimal', placeholder: `default ${def}`, 'data-key': key }), { name: `assumption-${key}`, hint: `${hint}; empty: ${def}` });
    return { key, f };
  });
  const assumptions = h('fieldset', { class: 'builder-assumptions' }, h('legend', null, 'Assumptions (empty fields take the default shown)'),
    h('div', { class: 'grid-3' }, assumptionFields.map((a) => a.f.wrap)));
  const el = h('section', { class: 'card builder', 'aria-labelledby': 'builder-title', 'data-testid': 'scenario-builder' },
    h('h3', { id: 'builder-title' }, 'Build the scenario'),
    h('p', { class: 'hint' }, 'Pick the workload and each option\'s offer and benchmark by name; the JSON view below follows every change, and edits there come back here.'),
    workload.wrap, h('h4', null, 'Options'), optionsBox, addBtn, assumptions, note);
  const rows = [];

  function addOption(init = {}) {
    const n = uid('opt');
    const name = field('Option name', h('input', { type: 'text', value: init.name || '', maxlength: 100 }), { name: `${n}-name`, hint: 'empty: the offer\'s name' });
    const offer = recordPicker({ label: 'Offer', path: '/offers', kind: 'offers', name: `${n}-offer` });
    const wid = workload.value();
    const bench = recordPicker({ label: 'Benchmark', path: '/benchmarks', kind: 'benchmarks', name: `${n}-benchmark`, query: wid ? { workload: wid } : {} });
    if (typeof init.offer === 'string') offer.set([init.offer]);
    if (typeof init.benchmark === 'string') bench.set([init.benchmark]);
    const remove = h('button', { type: 'button', class: 'danger small' }, 'Remove this option');
    const box = h('fieldset', { class: 'builder-option' }, h('legend', null, `Option ${rows.length + 1}`), name.wrap, h('div', { class: 'grid-2' }, offer.wrap, bench.wrap), remove);
    const row = { box, name, offer, bench, extra: init };
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      box.remove();
      rows.forEach((r, i) => { r.box.querySelector('legend').textContent = `Option ${i + 1}`; });
      toJson();
    });
    box.addEventListener('change', toJson);
    name.control.addEventListener('input', toJson);
    rows.push(row);
    optionsBox.append(box);
    return row;
  }

  function parse() {
    try {
      const doc = JSON.parse(textarea.value || '{}');
      return doc && typeof doc === 'object' && !Array.isArray(doc) ? doc : null;
    } catch {
      return null;
    }
  }

  // The form → the JSON view (keys the form does not hold are kept).
  function toJson() {
    if (syncing) return;
    const doc = parse() || {};
    const w = workload.value();
    if (w) doc.workload = w;
    doc.options = rows.map((r) => {
      const offerName = (r.offer.control.querySelector('.picker-chosen') || {}).textContent || '';
      const o = { ...r.extra };
      o.name = r.name.control.value.trim() || offerName.replace(/^Chosen: /, '').split(' · ')[0] || `option ${rows.indexOf(r) + 1}`;
      if (r.offer.value()) o.offer = r.offer.value();
      if (r.bench.value()) o.benchmark = r.bench.value();
      return o;
    });
    const a = { ...(doc.assumptions || {}) };
    for (const { key, f } of assumptionFields) {
      const v = f.control.value.trim();
      if (v === '') delete a[key];
      else a[key] = Number.isFinite(Number(v)) ? Number(v) : v;
    }
    if (Object.keys(a).length) doc.assumptions = a;
    else delete doc.assumptions;
    syncing = true;
    textarea.value = JSON.stringify(doc, null, 2);
    textarea.dispatchEvent(new Event('input', { bubbles: true }));
    syncing = false;
  }

  // The JSON view → the form (when it parses).
  function fromJson() {
    if (syncing) return;
    const doc = parse();
    if (!doc) {
      note.textContent = 'The JSON view does not parse yet: the form keeps its last values.';
      return;
    }
    note.textContent = '';
    syncing = true;
    try {
      if (typeof doc.workload === 'string') workload.set([doc.workload]);
      else if (doc.workload) {
        note.textContent = 'The workload is written out in the JSON view (not a stored one): the form leaves it there.';
        workload.control.querySelector('.picker-chosen').textContent = `Written out in the JSON view${doc.workload.name ? ` (${doc.workload.name})` : ''}: pick a stored workload here to use it instead.`;
      }
      rows.splice(0).forEach((r) => r.box.remove());
      for (const o of Array.isArray(doc.options) ? doc.options : []) {
        const { name, offer, benchmark, ...rest } = o || {};
        const row = addOption({ name, offer, benchmark, ...rest });
        row.extra = { ...rest, ...(typeof offer === 'object' ? { offer } : {}), ...(typeof benchmark === 'object' ? { benchmark } : {}) };
        // An offer or benchmark written out in full (not a stored record) stays in the JSON;
        // its picker says so instead of "Nothing chosen yet".
        for (const [picker, value, what] of [[row.offer, offer, 'offer'], [row.bench, benchmark, 'benchmark']]) {
          if (value && typeof value === 'object') {
            picker.control.querySelector('.picker-chosen').textContent = `Written out in the JSON view${value.name ? ` (${value.name})` : ''}: pick a stored ${what} here to use it instead.`;
          }
        }
        // A stored benchmark brings its own offer.
        if (!offer && typeof benchmark === 'string') {
          row.offer.control.querySelector('.picker-chosen').textContent = 'The benchmark\'s own offer: pick one here to price the option with another.';
        }
      }
      for (const { key, f } of assumptionFields) {
        const v = doc.assumptions && doc.assumptions[key];
        f.control.value = v === undefined || v === null ? '' : String(v);
      }
    } finally {
      syncing = false;
    }
  }

  workload.control.addEventListener('change', async () => {
    toJson();
    // The workload's team is the scenario's team; its benchmarks are offered first.
    const chosen = workload.control.querySelector('input:checked');
    const text = chosen ? chosen.nextElementSibling.textContent : '';
    const team = (text.match(/^[^(]*\(([^)]+)\)/) || [])[1];
    if (team) onTeam(team);
  });
  addBtn.addEventListener('click', () => {
    const row = addOption();
    toJson();
    row.name.control.focus();
  });
  for (const { f } of assumptionFields) f.control.addEventListener('input', toJson);
  let timer = null;
  textarea.addEventListener('input', () => {
    if (syncing) return;
    clearTimeout(timer);
    timer = setTimeout(fromJson, 300);
  });
  // A refused comparison's errors next to the form's own fields (assumptions, each option's
  // name, offer and benchmark, the workload); returns the errors no field took.
  function showErrors(errors) {
    for (const { f } of assumptionFields) showFieldError(f, []);
    for (const r of rows) for (const x of [r.name, r.offer, r.bench]) showFieldError(x, []);
    showFieldError(workload, []);
    const rest = [];
    for (const e of errors || []) {
      const p = String(e.pointer || '').replace(/^\/document/, '');
      const a = p.match(/^\/assumptions\/([a-z_]+)/);
      const o = p.match(/^\/options\/(\d+)\/(name|offer|benchmark)/);
      const target = a ? (assumptionFields.find((x) => x.key === a[1]) || {}).f
        : o && rows[Number(o[1])] ? { name: rows[Number(o[1])].name, offer: rows[Number(o[1])].offer, benchmark: rows[Number(o[1])].bench }[o[2]]
        : /^\/workload(\/|$)/.test(p) ? workload : null;
      if (target) showFieldError(target, plainMessage(e.message));
      else rest.push(e);
    }
    return rest;
  }
  return { el, fromJson, showErrors };
}
