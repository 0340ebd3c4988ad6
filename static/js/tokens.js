// API tokens (for pipelines and the CLI): list, create (the token is shown this once), revoke.
import { h, field, alertBox, busy } from './dom.js';
import { table } from './listing.js';
import { request, listAll } from './api.js';
import { dateTime } from './format.js';
import { problemList } from './problems.js';

export function tokensSection({ forOthers }) {
  const list = h('div', { 'aria-live': 'polite' });
  const label = field('Label', h('input', { type: 'text', required: true, maxlength: 100, placeholder: 'ci-pipeline' }), { name: 'label' });
  const user = forOthers ? field('For user', h('input', { type: 'text', placeholder: 'username (empty: yourself)' }), { name: 'user' }) : null;
  const out = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create token');
  const form = h('form', { class: 'inline-form' }, label.wrap, user ? user.wrap : null, submit);

  async function load() {
    try {
      const items = await listAll('/tokens');
      list.replaceChildren(table([
        { label: 'Label', value: (t) => t.label },
        { label: 'User', value: (t) => t.user || t.username || '' },
        { label: 'Created', value: (t) => dateTime(t.created_at) },
        { label: 'Last used', value: (t) => dateTime(t.last_used_at) || '—' },
        { label: '', value: (t) => (t.revoked_at ? `revoked ${dateTime(t.revoked_at)}` : h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': `Revoke token ${t.label}`,
          onclick: (ev) => busy(ev.currentTarget, async () => {
            try {
              await request('DELETE', `/tokens/${encodeURIComponent(t.id)}`);
              await load();
            } catch (e) {
              out.replaceChildren(alertBox(`Not revoked: ${e.message}`));
            }
          }),
        }, 'Revoke')) },
      ], items, { caption: 'API tokens', empty: 'No tokens.' }));
    } catch (e) {
      list.replaceChildren(alertBox(`Tokens unavailable: ${e.message}`));
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = { label: label.control.value.trim() };
      if (user && user.control.value.trim()) body.user = user.control.value.trim();
      try {
        const { data } = await request('POST', '/tokens', { json: body });
        const value = h('input', { type: 'text', readonly: true, value: data.token, class: 'code token-value', 'aria-label': 'New token', 'data-testid': 'new-token' });
        const copy = h('button', { type: 'button', onclick: async () => {
          value.select();
          try {
            await navigator.clipboard.writeText(data.token);
            copy.textContent = 'Copied';
          } catch {
            copy.textContent = 'Select and copy by hand';
          }
        } }, 'Copy');
        out.append(h('div', { class: 'alert success', role: 'status' },
          h('p', null, h('strong', null, 'Copy this token now: it is shown only this once.')), value, copy));
        label.control.value = '';
        await load();
      } catch (e) {
        out.append(alertBox(`No token created: ${e.message}`, problemList(e.errors)));
      }
    });
  });

  load();
  return h('section', { class: 'card', 'aria-labelledby': 'tokens-title' },
    h('h3', { id: 'tokens-title' }, 'API tokens'),
    h('p', { class: 'hint' }, 'For pipelines and the CLI: send it as "Authorization: Bearer <token>".'), form, out, list);
}

