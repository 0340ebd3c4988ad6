// The review's cockpit: the comparison the decision rests on, chosen by scenario name and date
// among the stored comparisons of the review's workloads, shown with the compare view's own
// components (winner, cost per outcome with breakdown bars, spread, trap banner, break-evens),
// and the gate's verdict on that same comparison before anything is signed.
import { h, alertBox, notice } from '../dom.js';
import { get, listAll } from '../api.js';
import { renderComparison } from '../comparison.js';
import { dateTime, shortId } from '../format.js';
import { problemText } from '../problems.js';

export function comparisonLabel(c) {
  return `${c.scenario_name || 'scenario'} · ${c.team} · ${dateTime(c.created_at)} — winner ${c.winner ?? 'none'}${c.hourly_price_trap ? ' · hourly-price trap' : ''}`;
}

// {el, load(preferred), sha()}: onChosen(sha, storedComparison) runs after each choice.
export function comparisonPicker(review, { onChosen }) {
  const select = h('select', { id: 'review-comparison', name: 'comparison' });
  const view = h('div', { class: 'cockpit-comparison', 'aria-live': 'polite' });
  const hint = h('p', { class: 'hint', id: 'review-comparison-hint' },
    'The stored comparisons of this review\'s workloads, newest first. The checklist, the gate and the decision below all use the one chosen here.');
  select.setAttribute('aria-describedby', hint.id);
  const el = h('section', { class: 'card cockpit', 'aria-labelledby': 'cockpit-title', 'data-testid': 'cockpit' },
    h('h3', { id: 'cockpit-title' }, 'The comparison this review rests on'),
    h('div', { class: 'field' }, h('label', { for: select.id }, 'Comparison'), hint, select),
    view);
  let items = [];

  async function show(sha) {
    if (!sha) {
      view.replaceChildren();
      await onChosen(null, null);
      return;
    }
    view.replaceChildren(h('p', { class: 'loading' }, 'Loading the comparison…'));
    try {
      const { data } = await get(`/comparisons/${encodeURIComponent(sha)}`);
      const item = items.find((c) => c.sha256 === sha);
      view.replaceChildren(
        h('p', { class: 'meta' }, 'SHA-256 ', h('code', { class: 'hash', 'data-testid': 'cockpit-sha' }, sha),
          item ? ` · scenario ${item.scenario_name} · stored by ${item.created_by}` : ''),
        renderComparison(data.result || data, data.scenario, {
          loadCharts: () => get(`/comparisons/${encodeURIComponent(sha)}/charts`).then((r) => r.data),
        }));
      await onChosen(sha, data);
    } catch (e) {
      view.replaceChildren(alertBox(`Could not read the comparison: ${e.message}`));
      await onChosen(null, null);
    }
  }

  select.addEventListener('change', () => show(select.value));

  async function load(preferred) {
    try {
      items = await listAll(`/reviews/${encodeURIComponent(review.id)}/comparisons`, {}, 200);
    } catch (e) {
      select.replaceChildren(h('option', { value: '' }, 'Comparisons unavailable'));
      view.replaceChildren(alertBox(`Could not list the comparisons: ${e.message}`));
      return;
    }
    if (!items.length) {
      select.replaceChildren(h('option', { value: '' }, 'No stored comparison for these workloads yet'));
      view.replaceChildren(notice(h('span', null, 'Store a comparison of a scenario naming one of this review\'s workloads (',
        h('a', { href: '#/compare' }, 'Compare'), ', "Keep this comparison") to see it here.')));
      await show('');
      return;
    }
    const chosen = items.some((c) => c.sha256 === preferred) ? preferred : items[0].sha256;
    select.replaceChildren(...items.map((c) => h('option', { value: c.sha256, selected: c.sha256 === chosen }, comparisonLabel(c))));
    await show(chosen);
  }

  return { el, load, sha: () => select.value };
}

// The gate's verdict on an advance citing the chosen comparison, from the dry run.
export function gateVerdict(dry, comparisonName) {
  const refused = dry.outcome !== 'accepted';
  return h('section', { class: ['card', 'gate', refused ? 'gate-refused' : 'gate-passes'], 'data-testid': 'gate-verdict', 'data-outcome': dry.outcome, 'aria-labelledby': 'gate-title' },
    h('h3', { id: 'gate-title' }, refused ? 'Gate: an advance would be refused' : 'Gate: an advance would pass'),
    h('p', null, refused
      ? `The server's dry run of an advance citing ${comparisonName} answers HTTP ${dry.status}${dry.errors.length ? ` with ${dry.error_count} unmet condition${dry.error_count === 1 ? '' : 's'}` : ''}. Revise and stop are always possible.`
      : `The server's dry run of an advance citing ${comparisonName}, with the form as it is, passes every check the append makes.`),
    dry.errors.length ? h('ul', { class: 'gate-errors' }, dry.errors.map((e) => h('li', null, problemText(e)))) : null,
    dry.current_decision ? h('p', null, 'Current decision: ', h('a', { href: `#/decisions/${encodeURIComponent(dry.current_decision)}` }, h('code', null, shortId(dry.current_decision))), ' — a new decision supersedes it.') : null);
}
