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
  uploads: (u) => `${{ runs: 'job accounting', telemetry: 'GPU telemetry', offers: 'price sheet', benchmark_import: 'load test' }[u.kind] || u.kind}${u.format ? ` (${u.format})` : ''}${u.team ? ` · ${u.team}` : ''} · ${Number(u.inserted ?? 0)} records · by ${u.created_by_name} · ${dateTime(u.created_at)}`,
};

// recordPicker({label, path: '/workloads', kind: 'workloads', multiple, query, hint})
// → {wrap, control, error, values(), set(ids), load()} (control/error as dom.field's).
export function recordPicker({ label, path, kind, multiple = false, query = {}, hint, name, search: searchable = true }) {
  const describe = DESCRIBE[kind];
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
      const { data } = await get(path, { ...query, limit: 50, q: search.value.trim() });
      items = data.items || [];
    } catch (e) {
      if (mine === seq) list.replaceChildren(h('p', { class: 'hint' }, `Could not list: ${e.message}`));
      return;
    }
    if (mine !== seq) return;
    const group = `${id}-choice`;
    list.replaceChildren(...(items.length ? items.map((r) => {
      const text = describe(r);
      const box = h('input', { type: multiple ? 'checkbox' : 'radio', name: group, value: r.id, id: `${id}-${r.id}`, checked: chosen.has(r.id) });
      box.addEventListener('change', () => {
        if (!multiple) chosen.clear();
        if (box.checked) chosen.set(r.id, text);
        else chosen.delete(r.id);
        showChosen();
        control.dispatchEvent(new Event('change', { bubbles: true }));
      });
      return h('div', { class: 'picker-item' }, box, h('label', { for: box.id }, text));
    }) : [h('p', { class: 'hint' }, 'No match.')]));
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
    load,
  };
}
