// The review's whole story at a glance (issue 23): what the review page adds around the cockpit
// — the comparison diff chooser, the status with its reasons, the deciding assumptions and the
// folding of its sections.
import { h, alertBox } from '../dom.js';
import { get, listAll } from '../api.js';
import { comparisonLabel } from './cockpit.js';
import { comparisonDiffView } from '../compdiff.js';

// "Compare with another stored comparison": the review's other comparisons by scenario and date;
// choosing one shows the two side by side (compdiff.js), the older one as "before".
export async function diffChooser(review, sha) {
  if (!sha) return '';
  const items = await listAll(`/reviews/${encodeURIComponent(review.id)}/comparisons`, {}, 200).catch(() => []);
  const others = items.filter((c) => c.sha256 !== sha);
  if (!others.length) return '';
  const select = h('select', { id: 'diff-with' },
    h('option', { value: '' }, 'choose a comparison'),
    others.map((c) => h('option', { value: c.sha256 }, comparisonLabel(c))));
  const out = h('div', { 'aria-live': 'polite' });
  select.addEventListener('change', async () => {
    if (!select.value) {
      out.replaceChildren();
      return;
    }
    out.replaceChildren(h('p', { class: 'loading' }, 'Reading both comparisons…'));
    try {
      const pick = (x) => items.find((c) => c.sha256 === x);
      const [a, b] = await Promise.all([sha, select.value].map((x) => get(`/comparisons/${encodeURIComponent(x)}`).then((r) => ({ ...pick(x), ...r.data }))));
      const [older, newer] = a.created_at <= b.created_at ? [a, b] : [b, a];
      out.replaceChildren(comparisonDiffView(older, newer));
    } catch (e) {
      out.replaceChildren(alertBox(`Could not compare them: ${e.message}`));
    }
  });
  return h('details', { class: 'card fold', 'data-testid': 'diff-chooser' },
    h('summary', null, h('h3', { class: 'fold-title' }, 'Compare with another stored comparison')),
    h('div', { class: 'field' }, h('label', { for: select.id }, 'The other comparison'), select), out);
}
