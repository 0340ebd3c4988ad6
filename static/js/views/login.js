// Sign-in: POST /api/v1/session {username, password} → {user, csrf_token} and a session cookie.
import { h, field, alertBox, notice, busy } from '../dom.js';
import { request, ApiError } from '../api.js';

export function renderLogin(root, { onSignedIn, message }) {
  const username = field('Username', h('input', { type: 'text', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false' }), { name: 'username' });
  const password = field('Password', h('input', { type: 'password', autocomplete: 'current-password', required: true }), { name: 'password' });
  const status = h('div', { class: 'form-status' }, message ? notice(message) : null);
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'card login', 'aria-labelledby': 'login-title' },
    h('h2', { id: 'login-title' }, 'Sign in'),
    username.wrap, password.wrap, status, submit);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      status.replaceChildren();
      try {
        const { data } = await request('POST', '/session', {
          json: { username: username.control.value, password: password.control.value },
        });
        password.control.value = '';
        onSignedIn(data.user, data.csrf_token);
      } catch (e) {
        password.control.value = '';
        const text = e instanceof ApiError && e.status === 401
          ? 'Wrong username or password.'
          : e instanceof ApiError && e.status === 429
            ? 'Too many attempts: wait a minute and try again.'
            : `Could not sign in: ${e.message}`;
        status.append(alertBox(text));
        password.control.focus();
      }
    });
  });
  root.append(h('section', { class: 'login-page' },
    h('p', { class: 'lede' }, 'What each GPU arrangement costs per completed result — not per hour — and a signed, verifiable record of what was decided.'),
    form));
  username.control.focus();
}
