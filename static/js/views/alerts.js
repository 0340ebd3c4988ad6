// Alerts for the owner: assumption drift after a decision and trap warnings. Acknowledging one
// is a PATCH with the alert's ETag.
import { h, alertBox, busy, table } from '../dom.js';
import { request, get, listAll } from '../api.js';
import { dateTime } from '../format.js';

export async function renderAlerts(root, ctx) {
  root.append(h('h2', null, 'Alerts'),
    h('p', { class: 'hint' }, 'Raised when job accounting or new benchmarks depart from a signed decision\'s assumptions (failure rate, utilisation, queue delay, throughput); the review is then marked "needs decision".'));
  const box = h('div', { 'aria-live': 'polite' });
  root.append(box);

  async function load() {
    const items = await listAll('/alerts', {}, 500);
    if (ctx.stale()) return;
    box.replaceChildren(table([
      { label: 'Raised', value: (a) => dateTime(a.created_at || a.raised_at) },
      { label: 'Kind', value: (a) => a.kind || a.type || '' },
      { label: 'What', value: (a) => a.message || a.summary || a.detail || '' },
      { label: 'Review', value: (a) => (a.review_id ? h('a', { href: `#/reviews/${encodeURIComponent(a.review_id)}` }, a.review_title || 'open review') : '') },
      { label: 'Status', value: (a) => a.status || (a.acknowledged_at ? 'acknowledged' : 'open') },
      { label: '', value: (a) => ((a.status || 'open') === 'open' && !a.acknowledged_at
        ? h('button', { type: 'button', onclick: (ev) => busy(ev.currentTarget, () => acknowledge(a)) }, 'Acknowledge')
        : '') },
    ], items, { caption: 'Alerts', empty: 'No alerts: the evidence still matches the decisions.' }));
  }

  async function acknowledge(a) {
    try {
      const { etag } = await get(`/alerts/${encodeURIComponent(a.id)}`).catch(() => ({ etag: null }));
      await request('PATCH', `/alerts/${encodeURIComponent(a.id)}`, {
        json: { status: 'acknowledged' },
        contentType: 'application/merge-patch+json',
        headers: etag || a.etag ? { 'If-Match': etag || a.etag } : {},
      });
      await load();
    } catch (e) {
      box.prepend(alertBox(`Not acknowledged: ${e.message}`));
    }
  }

  try {
    await load();
  } catch (e) {
    box.replaceChildren(alertBox(`Alerts unavailable: ${e.message}`));
  }
}
