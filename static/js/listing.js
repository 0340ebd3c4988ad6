// A filtered, paginated list ({items, next_cursor}) with a "Show more" button.
import { h, field, table, alertBox, busy } from './dom.js';
import { get } from './api.js';

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
      results.replaceChildren(table(columns, rows, { caption: `${title} (${rows.length}${cursor ? '+' : ''})`, empty }));
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

export function select(options, value = '') {
  return h('select', null, options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
}
