// The one table helper (table) and the filtered, paginated list built on it (listing).
//
// Every table of the UI is drawn by table(): its column headers sort it (a button in each
// header, aria-sort says how), and a table of more than a couple of rows gets a toolbar: a text
// filter over every cell, a date range when a column carries dates, and "Download CSV" of the
// rows shown with the API's own fields as columns (nested values as JSON), so the file reads
// like the API's answer. Rows are drawn once; sorting and filtering only move and hide them, so
// controls inside a row keep their state.
import { h, field, alertBox, busy } from './dom.js';
import { get } from './api.js';

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

// A cell's sort key: the column's own sort(row), else its text (numbers for numeric columns).
function sortKey(col, row, td) {
  if (col.sort) return col.sort(row);
  const text = td.textContent.trim();
  if (String(col.class || '').includes('num')) {
    const n = parseFloat(text.replace(/[^0-9.eE+-]/g, ''));
    return Number.isFinite(n) ? n : null;
  }
  return text;
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined || a === '') return 1; // empty last, either way
  if (b === null || b === undefined || b === '') return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return collator.compare(String(a), String(b));
}

// CSV of API objects: the union of their top-level fields, in first-seen order.
export function toCsv(rows) {
  const objects = rows.filter((r) => r && typeof r === 'object' && !Array.isArray(r));
  const keys = [];
  for (const r of objects) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  const cell = (v) => {
    if (v === null || v === undefined) return '';
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    // A cell a spreadsheet would run as a formula is quoted with a leading apostrophe.
    const safe = /^[=+\-@\t\r]/.test(s) && typeof v === 'string' ? `'${s}` : s;
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [keys.map(cell).join(','), ...objects.map((r) => keys.map((k) => cell(r[k])).join(','))].join('\r\n') + '\r\n';
}

function slug(text) {
  return String(text || 'table').toLowerCase().replace(/\(.*?\)/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'table';
}

// table(columns, rows, {caption, empty, csvName, toolbar}) → element.
// columns: [{label, value: row => node|string, class, sort?: row => key, date?: row => ISO text}]
export function table(columns, rows, { caption, empty = 'Nothing yet.', csvName, toolbar, name: title } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  const trs = rows.map((row) => {
    const tds = columns.map((c) => h('td', { class: c.class }, c.value(row)));
    return { row, tds, tr: h('tr', null, tds) };
  });
  const tbody = h('tbody', null, trs.map((t) => t.tr));
  const state = { col: -1, dir: 1, text: '', from: '', to: '' };
  const dateCol = columns.find((c) => c.date);
  const count = h('span', { class: 'table-count', 'aria-live': 'polite' });
  const shown = () => trs.filter((t) => !t.tr.hidden);

  function apply() {
    const needle = state.text.toLowerCase();
    for (const t of trs) {
      let ok = !needle || t.tr.textContent.toLowerCase().includes(needle);
      if (ok && dateCol && (state.from || state.to)) {
        const d = String(dateCol.date(t.row) || '').slice(0, 10);
        ok = Boolean(d) && (!state.from || d >= state.from) && (!state.to || d <= state.to);
      }
      t.tr.hidden = !ok;
    }
    if (state.col >= 0) {
      const c = columns[state.col];
      const keyed = trs.map((t) => ({ t, k: sortKey(c, t.row, t.tds[state.col]) }));
      keyed.sort((a, b) => {
        const empty = (v) => v === null || v === undefined || v === '';
        if (empty(a.k) !== empty(b.k)) return empty(a.k) ? 1 : -1;
        return state.dir * compare(a.k, b.k);
      });
      tbody.append(...keyed.map((x) => x.t.tr));
    }
    const n = shown().length;
    count.textContent = n === trs.length ? `${n} row${n === 1 ? '' : 's'}` : `${n} of ${trs.length} rows`;
  }

  const ths = columns.map((c, i) => {
    if (!c.label) return h('th', { scope: 'col', class: c.class }); // a column of row actions
    const btn = h('button', { type: 'button', class: 'sort' }, c.label);
    const th = h('th', { scope: 'col', class: c.class }, btn);
    btn.addEventListener('click', () => {
      state.dir = state.col === i ? -state.dir : 1;
      state.col = i;
      ths.forEach((x, j) => { if (columns[j].label) x.setAttribute('aria-sort', j === i ? (state.dir > 0 ? 'ascending' : 'descending') : 'none'); });
      apply();
    });
    th.setAttribute('aria-sort', 'none');
    return th;
  });
  const tableEl = h('table', null, caption ? h('caption', null, caption) : null, h('thead', null, h('tr', null, ths)), tbody);
  // A wide table scrolls inside its box; the box takes focus so the keyboard can scroll it.
  const wrap = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption || 'Table' }, tableEl);
  const withTools = toolbar ?? rows.length > 2;
  if (!withTools) return wrap;

  const name = title || caption || 'table';
  const filter = h('input', { type: 'search', class: 'table-filter', 'aria-label': `Filter rows of ${name}`, placeholder: 'Filter rows' });
  filter.addEventListener('input', () => { state.text = filter.value.trim(); apply(); });
  const dates = [];
  if (dateCol) {
    for (const [k, label] of [['from', 'from'], ['to', 'to']]) {
      const input = h('input', { type: 'date', 'aria-label': `${name}: ${dateCol.label} ${label}` });
      input.addEventListener('change', () => { state[k] = input.value; apply(); });
      dates.push(h('label', { class: 'table-date' }, `${dateCol.label} ${label} `, input));
    }
  }
  const csv = h('button', { type: 'button', class: 'csv' }, 'Download CSV');
  csv.addEventListener('click', () => {
    const blob = new Blob([toCsv(shown().map((t) => t.row))], { type: 'text/csv' });
    const a = h('a', { href: URL.createObjectURL(blob), download: `${csvName || slug(name)}.csv` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });
  apply();
  return h('div', { class: 'data-table' },
    h('div', { class: 'table-tools', role: 'group', 'aria-label': `${name}: filter and export` }, filter, dates, csv, count),
    wrap);
}

// A filtered, paginated list ({items, next_cursor}) with a "Show more" button.

// filters: [{name, label, control: () => element}]; columns as for dom.table.
export function listing({ path, title, filters = [], columns, empty, baseQuery = {} }) {
  const controls = filters.map((f) => field(f.label, f.control(), { name: f.name }));
  const results = h('div', { class: 'list-results', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', hidden: true }, 'Show more');
  const apply = h('button', { type: 'submit' }, 'Apply filters');
  let cursor = null;
  let rows = [];
  let loads = 0;

  function query() {
    const q = { ...baseQuery, limit: 50 };
    controls.forEach((c, i) => { q[filters[i].name] = c.control.value.trim(); });
    return q;
  }

  async function load(reset) {
    if (reset) {
      cursor = null;
      rows = [];
    }
    try {
      const { data } = await get(path, { ...query(), cursor });
      rows = rows.concat(data.items || []);
      cursor = data.next_cursor || null;
      results.replaceChildren(table(columns, rows, { caption: `${title} (${rows.length}${cursor ? '+' : ''})`, empty, name: title, csvName: title.toLowerCase().replace(/[^a-z0-9]+/g, '-') }));
      more.hidden = !cursor;
    } catch (e) {
      results.replaceChildren(alertBox(`Could not list ${title.toLowerCase()}: ${e.message}`));
      more.hidden = true;
    }
    // Tests (and anyone scripting the page) can wait for the n-th answer.
    loads += 1;
    results.dataset.loads = String(loads);
  }

  more.addEventListener('click', () => busy(more, () => load(false)));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': `Filter ${title.toLowerCase()}` },
    controls.map((c) => c.wrap), filters.length ? apply : null);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(apply, () => load(true));
  });
  const el = h('section', { class: 'listing', 'data-list': path }, filters.length ? form : null, results, more);
  return { el, load: () => load(true) };
}
