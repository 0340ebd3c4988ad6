// Account: who you are, your signing keys (owners), and your API tokens.
import { h, alertBox, busy } from '../dom.js';
import { table } from '../listing.js';
import { request, get } from '../api.js';
import { dateTime } from '../format.js';
import { loadKey, forgetKey } from '../signing.js';
import { tokensSection } from '../tokens.js';

function keysSection(ctx) {
  const list = h('div', { 'aria-live': 'polite' });
  const local = h('p', { class: 'hint' });
  async function load() {
    const mine = await loadKey(ctx.user.username).catch(() => null);
    local.textContent = mine ? `This browser holds the private half of key ${mine.keyId.slice(0, 16)}… (it cannot be exported).` : 'This browser holds no signing key; one is created the first time you sign a decision.';
    try {
      const items = (await get('/me/signing-keys')).data.items; // one list, not paginated
      list.replaceChildren(table([
        { label: 'Key id', value: (k) => h('code', { class: 'hash' }, k.key_id) },
        { label: 'Registered', value: (k) => dateTime(k.created_at) },
        { label: 'In this browser', value: (k) => (mine && mine.keyId === k.key_id ? 'yes' : '') },
        { label: 'Revoked', value: (k) => (k.revoked_at ? dateTime(k.revoked_at) : h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': `Revoke key ${k.key_id.slice(0, 12)}`,
          onclick: (ev) => busy(ev.currentTarget, async () => {
            try {
              await request('DELETE', `/me/signing-keys/${encodeURIComponent(k.key_id)}`);
              if (mine && mine.keyId === k.key_id) await forgetKey(ctx.user.username);
              await load();
            } catch (e) {
              list.prepend(alertBox(`Not revoked: ${e.message}`));
            }
          }),
        }, 'Revoke')) },
      ], items, { caption: 'Signing keys', empty: 'No signing keys registered.' }));
    } catch (e) {
      list.replaceChildren(alertBox(`Signing keys unavailable: ${e.message}`));
    }
  }
  load();
  return h('section', { class: 'card', 'aria-labelledby': 'keys-title' },
    h('h3', { id: 'keys-title' }, 'Signing keys'),
    h('p', { class: 'hint' }, 'Revoked keys sign nothing new; records they signed earlier stay verifiable.'), local, list);
}

export async function renderAccount(root, ctx) {
  const u = ctx.user;
  root.append(h('h2', null, 'Your account'),
    h('dl', { class: 'facts' },
      h('dt', null, 'User'), h('dd', null, u.username),
      h('dt', null, 'Role'), h('dd', null, u.role),
      h('dt', null, 'Teams'), h('dd', null, (u.teams || []).join(', ') || 'none')));
  if (u.role === 'owner') root.append(keysSection(ctx));
  root.append(tokensSection({ forOthers: false }));
}

