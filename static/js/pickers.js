// Pickers by name: people choose workloads, offers, benchmarks and evidence by what they are
// called (with team and date), never by pasting ids. A picker lists a page of records from an
// API list route, narrowed by "Name starts with" (the route's ?q=), as radio buttons (one) or
// check boxes (several); the chosen ones stay chosen across searches. The ids go to the API.
import { h, uid } from './dom.js';
import { get } from './api.js';
import { dateTime } from './format.js';

const day = (t) => (t ? dateTime(t).slice(0, 10) : '');

// How each kind of record reads in a picker.
export const DESCRIBE = {
  workloads: (w) => `${w.name} (${w.team}) · ${w.kind}${w.class ? `, ${w.class}` : ''} · ${day(w.created_at)}`,
  offers: (o) => `${o.name || o.instance_type} · ${o.provider} ${o.region} · ${o.purchase_option} · ${day(o.created_at)}`,
  benchmarks: (b) => `${b.workload_name || 'workload'} on ${b.offer_name || 'offer'} (${b.team}) · measured ${day(b.measured_at)}`,
  comparisons: (c) => `${c.scenario_name || 'scenario'} · ${c.team ?? 'no team'} · ${dateTime(c.created_at)} — winner ${c.winner ?? 'none'}${c.hourly_price_trap ? ' · hourly-price trap' : ''}${c.other ? ' · not of this review\'s workloads' : ''}`,
  uploads: (u) => `${{ runs: 'job accounting', telemetry: 'GPU telemetry', offers: 'price sheet', benchmark_import: 'load test' }[u.kind] || u.kind}${u.format ? ` (${u.format})` : ''}${u.team ? ` · ${u.team}` : ''} · ${Number(u.inserted ?? 0)} records · by ${u.created_by_name} · ${dateTime(u.created_at)}`,
};

// recordPicker({label, path: '/workloads', kind: 'workloads', multiple, query, hint})
// → {wrap, control, error, values(), set(ids), load()} (control/error as dom.field's).
// Records are told apart by their id (key: 'sha256' for comparisons); showKey prints the full
// key next to each name (hashes auditors copy). values() keeps the order of choosing.
// fetchItems(prefix) may replace the one list route (records from several).
export function recordPicker({ label, path, kind, multiple = false, query = {}, hint, name, search: searchable = true, key = 'id', showKey = false, fetchItems }) {
  const describe = DESCRIBE[kind];
  const known = new Map(); // key → text, of every record listed so far
  const id = uid(name || 'picker');
  const search = h('input', { type: 'search', id: `${id}-q`, autocomplete: 'off', spellcheck: 'false' });
  const list = h('div', { class: 'picker-list', role: 'group', 'aria-label': `${label}: matches` });
  const chosenBox = h('p', { class: 'picker-chosen', 'aria-live': 'polite' });
  const error = h('p', { class: 'field-error', id: `${id}-error`, role: 'alert', hidden: true });
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  const control = h('fieldset', { class: 'picker', id, 'data-picker': kind, 'aria-describedby': [hintEl && hintEl.id, error.id].filter(Boolean).join(' ') },
    h('legend', null, label), hintEl,
    searchable ? h('div', { class: 'picker-search' }, h('label', { for: search.id }, 'Name starts with'), search) : null,
    list, chosenBox, error);
  const chosen = new Map(); // id → text
  let seq = 0;

  function showChosen() {
    chosenBox.textContent = chosen.size ? `Chosen: ${[...chosen.values()].join('; ')}` : 'Nothing chosen yet.';
  }

  async function load() {
    const mine = ++seq;
    let items;
    try {
      if (fetchItems) {
        items = await fetchItems(search.value.trim());
      } else {
        const { data } = await get(path, { ...query, limit: 50, q: search.value.trim() });
        items = data.items || [];
      }
    } catch (e) {
      if (mine === seq) list.replaceChildren(h('p', { class: 'hint' }, `Could not list: ${e.message}`));
      return;
    }
    if (mine !== seq) return;
    const group = `${id}-choice`;
    list.replaceChildren(...(items.length ? items.map((r) => {
      const text = describe(r);
      const k = r[key];
      known.set(k, text);
      if (chosen.has(k)) chosen.set(k, text);
      const box = h('input', { type: multiple ? 'checkbox' : 'radio', name: group, value: k, id: `${id}-${String(k).slice(0, 40)}`, checked: chosen.has(k) });
      box.addEventListener('change', (ev) => {
        ev.stopPropagation(); // the picker as a whole reports the change, once
        if (!multiple) chosen.clear();
        if (box.checked) chosen.set(k, text);
        else chosen.delete(k);
        showChosen();
        control.dispatchEvent(new Event('change', { bubbles: true }));
      });
      return h('div', { class: 'picker-item' }, box, h('label', { for: box.id }, text,
        showKey ? h('code', { class: 'hash picker-key' }, ` ${k}`) : null));
    }) : [h('p', { class: 'hint' }, 'No match.')]));
    showChosen();
  }

  let timer = null;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, 200);
  });
  showChosen();
  load();
  const wrap = h('div', { class: 'field', 'data-field': name || null }, control);
  return {
    wrap, control, error,
    values: () => [...chosen.keys()],
    value: () => [...chosen.keys()][0] || '',
    clear: () => { chosen.clear(); showChosen(); load(); },
    // Chooses exactly these, in this order (a record not listed yet shows by its key).
    set: (keys) => {
      const next = new Map(keys.filter(Boolean).map((k) => [k, known.get(k) || chosen.get(k) || k]));
      chosen.clear();
      for (const [k, v] of next) chosen.set(k, v);
      showChosen();
      for (const box of list.querySelectorAll('input')) box.checked = chosen.has(box.value);
    },
    load,
  };
}

// The evidence a decision or an artifact cites, by name: benchmarks (workload on offer) and
// uploads (what, by whom, when). One field for errors (at …/evidence).
export function evidencePicker({ name = 'evidence', label = 'Evidence' } = {}) {
  const bench = recordPicker({ label: `${label}: benchmarks`, path: '/benchmarks', kind: 'benchmarks', multiple: true, name });
  const uploads = recordPicker({ label: `${label}: uploads`, path: '/uploads', kind: 'uploads', multiple: true, name: `${name}-uploads`, search: false });
  return {
    wrap: h('div', { class: 'evidence-pickers' }, bench.wrap, uploads.wrap),
    control: bench.control,
    error: bench.error,
    values: () => [...bench.values(), ...uploads.values()],
    clear: () => { bench.clear(); uploads.clear(); },
  };
}

// The stored comparisons of a review's workloads (GET /reviews/{id}/comparisons), by scenario
// name and date, with their SHA-256 shown; several may be chosen, the first is the one cited
// first.
// first. The review's own come first; after them the other stored comparisons one may read
// (the newest of the 50 newest scenarios), marked as not of this review's workloads.
export function comparisonsPicker(review, { label = 'Cited comparisons', name = 'comparison_sha256', hint } = {}) {
  async function fetchItems() {
    const mine = (await get(`/reviews/${encodeURIComponent(review.id)}/comparisons`, { limit: 50 })).data.items || [];
    const seen = new Set(mine.map((c) => c.sha256));
    const scenarios = (await get('/scenarios', { limit: 50 }).catch(() => ({ data: { items: [] } }))).data.items || [];
    const others = (await Promise.all(scenarios.map((sc) => get(`/scenarios/${encodeURIComponent(sc.id)}/comparisons`, { limit: 3 })
      .then((r) => r.data.items || [], () => [])))).flat()
      .filter((c) => !seen.has(c.sha256) && seen.add(c.sha256))
      .sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)))
      .map((c) => ({ ...c, other: true }));
    return [...mine, ...others];
  }
  return recordPicker({
    label, kind: 'comparisons', multiple: true, name, search: false, key: 'sha256', showKey: true, hint, fetchItems,
  });
}
