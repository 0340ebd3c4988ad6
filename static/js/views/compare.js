// Compare: a scenario (pasted, uploaded, or a stored one) → POST /api/v1/compare → the
// comparison, rendered by js/comparison.js. A scenario can also be saved and its comparison
// stored, which gives the hash a decision record cites.
import { h, field, alertBox, notice, busy, clear } from '../dom.js';
import { request, get, ApiError } from '../api.js';
import { renderComparison } from '../comparison.js';
import { problemList } from '../problems.js';
import { may } from '../roles.js';
import { scenarioBuilder } from '../builder.js';
import { WHATIF_HANDOFF } from './whatif.js';

// A what-if arrangement handed over from the What-if page: a card that writes its field
// references into the option the user picks (the server resolves them into numbers before the
// scenario is hashed). Returns null when nothing was handed over.
function whatifCard(source, builder) {
  const raw = sessionStorage.getItem(WHATIF_HANDOFF);
  if (!raw) return null;
  sessionStorage.removeItem(WHATIF_HANDOFF);
  let ref;
  try {
    ref = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!ref || typeof ref.sha256 !== 'string' || typeof ref.arrangement !== 'string') return null;
  const status = h('div', { 'aria-live': 'polite' });
  const option = h('select');
  const optionField = field('Option', option, { name: 'whatif-option' });
  const scenario = () => {
    try {
      return JSON.parse(source.value);
    } catch {
      return null;
    }
  };
  const refill = () => {
    const doc = scenario();
    const names = (doc && Array.isArray(doc.options) ? doc.options : []).map((o) => (o && o.name) || '');
    option.replaceChildren(...(names.length ? names.map((n, i) => h('option', { value: String(i) }, n || `option ${i + 1}`))
      : [h('option', { value: '' }, 'Build or load a scenario first')]));
  };
  const apply = (what) => {
    status.replaceChildren();
    const doc = scenario();
    const o = doc && Array.isArray(doc.options) ? doc.options[Number(option.value)] : null;
    if (!o) {
      status.append(alertBox('Build or load a scenario first, then pick the option.'));
      return;
    }
    const part = what === 'waits' ? 'benchmark' : 'offer';
    if (typeof o[part] !== 'object' || o[part] === null) {
      status.append(alertBox(`This option names a stored ${part}: write its ${part} out in the JSON view (or pick it by name in the form) to change one of its figures.`));
      return;
    }
    const reference = { sha256: ref.sha256, arrangement: ref.arrangement };
    if (what === 'waits') {
      delete o.benchmark.queue_wait_s;
      delete o.benchmark.queue_wait_quantiles_s;
      o.benchmark.queue_wait_from_whatif = reference;
    } else {
      delete o.offer.reserved_utilization;
      o.offer.reserved_utilization_from_whatif = reference;
    }
    source.value = JSON.stringify(doc, null, 2);
    builder.fromJson();
    status.append(notice(what === 'waits'
      ? `${o.name}: its queue waits are now the replayed waits of ${ref.arrangement}.`
      : `${o.name}: its reserved utilisation is now the busy share of ${ref.arrangement}.`, 'success'));
  };
  const waits = h('button', { type: 'button', 'data-testid': 'whatif-apply-waits' }, 'Use its waits as the option\'s queue waits');
  const busyShare = h('button', { type: 'button' }, 'Use its busy share as the reserved offer\'s utilisation');
  waits.addEventListener('click', () => apply('waits'));
  busyShare.addEventListener('click', () => apply('utilization'));
  option.addEventListener('focus', refill);
  source.addEventListener('input', refill);
  refill();
  return { el: h('section', { class: 'card whatif-handoff', 'data-testid': 'whatif-handoff' },
    h('h3', null, `From the what-if replay: ${ref.arrangement}`),
    h('p', { class: 'hint' }, 'Pick the option that runs on this capacity; the comparison then rests on the replay (the server reads the stored replay and writes the numbers in before hashing).'),
    optionField.wrap, h('div', { class: 'actions' }, waits, busyShare), status), refill };
}

// A comparison refused because one of the caller's is still running (often this page's own
// chart request for the previous result) is sent again when the server says, for up to a
// minute, and the page says why it waits.
const PATIENCE_MS = 60_000;
function patiently(where, ctx) {
  return {
    patience: PATIENCE_MS,
    gone: ctx.stale,
    onWait: (e) => where.replaceChildren(h('p', { class: 'loading' },
      e.status === 429 ? 'Waiting for your previous comparison to finish (its charts may still be computing)…' : 'The server is busy; trying again…')),
  };
}

export async function renderCompare(root, ctx) {
  const source = field('Scenario JSON', h('textarea', { rows: 14, spellcheck: 'false', class: 'code', placeholder: '{"workload": {...}, "assumptions": {...}, "options": [...]}' }),
    { name: 'scenario', hint: 'A scenario document as docs/cost-model.md defines it; offers and benchmarks may be ids of stored records.' });
  const file = field('…or load a file', h('input', { type: 'file', accept: '.json,application/json' }), { name: 'scenario-file' });
  const stored = h('select', null, h('option', { value: '' }, 'Loading stored scenarios…'));
  const storedField = field('…or start from a stored scenario', stored, { name: 'stored-scenario' });
  const status = h('div', { class: 'form-status' });
  const result = h('div', { class: 'result', 'aria-live': 'polite' });
  const compareBtn = h('button', { type: 'submit', class: 'primary' }, 'Compare');
  const saveName = field('Scenario name', h('input', { type: 'text', maxlength: 200 }), { name: 'scenario-name' });
  const saveTeam = field('Team', h('input', { type: 'text', maxlength: 64, value: (ctx.user.teams || [])[0] || '' }), { name: 'scenario-team' });
  const saveBtn = h('button', { type: 'button' }, 'Save scenario and store its comparison');
  const saved = h('div', { class: 'saved', 'aria-live': 'polite' });
  const builder = scenarioBuilder({ textarea: source.control, onTeam: (t) => { saveTeam.control.value = t; } });

  file.control.addEventListener('change', async () => {
    const f = file.control.files[0];
    if (f) source.control.value = await f.text();
    builder.fromJson();
  });
  stored.addEventListener('change', async () => {
    if (!stored.value) return;
    try {
      const { data } = await get(`/scenarios/${encodeURIComponent(stored.value)}`);
      const doc = data.document || data.scenario || data;
      source.control.value = JSON.stringify(doc, null, 2);
      saveName.control.value = data.name || '';
      builder.fromJson();
    } catch (e) {
      status.replaceChildren(alertBox(`Could not load the scenario: ${e.message}`));
    }
  });

  // Options may name stored benchmarks by id; the latency-vs-load chart needs their load points,
  // so those are read (a benchmark that cannot be read stays an id, and its curve is left out).
  async function withStoredBenchmarks(scenario) {
    const options = await Promise.all((scenario.options || []).map(async (o) => (typeof o.benchmark === 'string'
      ? { ...o, benchmark: await get(`/benchmarks/${encodeURIComponent(o.benchmark)}`).then((r) => r.data, () => o.benchmark) }
      : o)));
    return { ...scenario, options };
  }

  function parseScenario() {
    status.replaceChildren();
    const text = source.control.value.trim();
    if (!text) {
      status.append(alertBox('Paste or load a scenario first.'));
      return null;
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      status.append(alertBox(`The scenario is not valid JSON: ${e.message}`));
      return null;
    }
  }

  const form = h('form', { class: 'card compare-form', 'aria-labelledby': 'compare-title' },
    h('h2', { id: 'compare-title' }, 'Compare capacity options'),
    h('p', { class: 'lede' }, 'Cost per useful outcome — a completed run, an accepted request — with idle time, stalls, failures, reservations and people counted.'),
    h('div', null, storedField.wrap), builder.el,
    h('details', { class: 'json-view', open: true }, h('summary', null, 'The scenario as JSON (for power users: edits here refill the form)'),
      h('div', { class: 'grid-2' }, source.wrap, h('div', null, file.wrap))),
    status, h('div', { class: 'actions' }, compareBtn));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const scenario = parseScenario();
    if (!scenario) return;
    busy(compareBtn, async () => {
      clear(result);
      result.append(h('p', { class: 'loading' }, 'Computing…'));
      try {
        const { data } = await request('POST', '/compare', { json: scenario, ...patiently(result, ctx) });
        builder.showErrors([]);
        const shown = data.scenario || await withStoredBenchmarks(scenario);
        clear(result);
        result.append(renderComparison(data, shown, {
          loadCharts: () => request('POST', '/compare/charts', { json: scenario, patience: PATIENCE_MS, gone: ctx.stale }).then((r) => r.data),
        }));
        if (may(ctx.user, 'POST /scenarios')) result.append(h('section', { class: 'card save', 'aria-labelledby': 'save-title' },
          h('h3', { id: 'save-title' }, 'Keep this comparison'),
          h('p', { class: 'hint' }, 'A stored comparison has a SHA-256 that decision records cite; auditors recompute it from the bundle.'),
          h('div', { class: 'grid-2' }, saveName.wrap, saveTeam.wrap), saveBtn, saved));
      } catch (e) {
        clear(result);
        if (e instanceof ApiError && e.status === 422) builder.showErrors(e.errors);
        result.append(e instanceof ApiError && e.status === 422
          ? alertBox('The scenario has problems (those of the form\'s fields are shown at them too):', problemList(e.errors))
          : alertBox(`Comparison failed: ${e.message}`));
      }
    });
  });

  saveBtn.addEventListener('click', () => {
    const scenario = parseScenario();
    if (!scenario) return;
    busy(saveBtn, async () => {
      saved.replaceChildren();
      try {
        const body = { name: saveName.control.value || (scenario.workload && scenario.workload.name) || 'scenario', document: scenario };
        if (saveTeam.control.value) body.team = saveTeam.control.value;
        const { data: sc } = await request('POST', '/scenarios', { json: body });
        const { data: cmp } = await request('POST', `/scenarios/${encodeURIComponent(sc.id)}/comparisons`, patiently(saved, ctx));
        const sha = cmp.sha256 || cmp.id;
        saved.append(notice(h('span', null, 'Stored. Comparison SHA-256: ', h('code', { class: 'hash', 'data-testid': 'comparison-sha' }, sha)), 'success'));
      } catch (e) {
        if (e instanceof ApiError && e.status === 409 && e.problem.existing) {
          // Names are unique per team: say which scenario has it, and offer the free one.
          const ex = e.problem.existing;
          const use = h('button', { type: 'button' }, `Use “${e.problem.suggested_name}”`);
          use.addEventListener('click', () => {
            saveName.control.value = e.problem.suggested_name;
            saved.replaceChildren();
            saveName.control.focus();
          });
          saved.append(h('div', { class: 'alert error', role: 'alert', 'data-testid': 'name-taken' },
            h('p', null, `Not stored: this team already has a scenario named “${ex.name}” (stored ${String(ex.created_at).slice(0, 10)} by ${ex.created_by}). Choose another name.`),
            e.problem.suggested_name ? h('p', null, use) : null));
          return;
        }
        saved.append(e instanceof ApiError && e.status === 422 ? alertBox('Not stored:', problemList(e.errors)) : alertBox(`Not stored: ${e.message}`));
      }
    });
  });

  const handoff = whatifCard(source.control, builder);
  if (handoff) {
    form.insertBefore(handoff.el, form.children[2] || null);
    stored.addEventListener('change', () => setTimeout(handoff.refill, 0));
  }
  root.append(form, result);

  try {
    const { data } = await get('/scenarios', { limit: 100 });
    if (ctx.stale()) return;
    stored.replaceChildren(h('option', { value: '' }, data.items.length ? 'Choose…' : 'No stored scenarios yet'),
      ...data.items.map((s) => h('option', { value: s.id }, `${s.name}${s.team ? ` (${s.team})` : ''}`)));
  } catch (e) {
    stored.replaceChildren(h('option', { value: '' }, 'Stored scenarios unavailable'));
    stored.disabled = true;
  }
}
