// A small element builder. Everything is created through DOM APIs: the CSP forbids inline
// scripts and style attributes, and text is always set as text (never parsed as HTML), so data
// from the server cannot inject markup.

// h('button', {class: 'primary', onclick: fn, 'aria-label': 'x'}, 'text', child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'style') throw new Error('style attributes are blocked by the CSP: use classes');
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value);
      } else if (key === 'class') {
        el.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
      } else if (key === 'value' || key === 'checked' || key === 'selected') {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? '' : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

let idCounter = 0;
export function uid(prefix = 'f') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

// A labelled form field. `control` is an input/select/textarea element (its id is set here).
// Returns {wrap, control, error} where error is the element that shows this field's problems.
export function field(label, control, { hint, name } = {}) {
  const id = control.id || uid(name || 'field');
  control.id = id;
  if (name) control.name = name;
  const errorId = `${id}-error`;
  const hintId = hint ? `${id}-hint` : null;
  const error = h('p', { class: 'field-error', id: errorId, role: 'alert', hidden: true });
  control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  const wrap = h('div', { class: 'field', 'data-field': name || null },
    h('label', { for: id }, label),
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
    control,
    error);
  return { wrap, control, error };
}

export function showFieldError(f, messages) {
  const list = [].concat(messages).filter(Boolean);
  f.error.hidden = list.length === 0;
  f.error.textContent = list.join('; ');
  if (list.length) f.control.setAttribute('aria-invalid', 'true');
  else f.control.removeAttribute('aria-invalid');
}

// An error banner (role=alert) listing a message and optional details.
export function alertBox(message, details = []) {
  return h('div', { class: 'alert error', role: 'alert' },
    h('p', null, message),
    details.length ? h('ul', null, details.map((d) => h('li', null, d))) : null);
}

export function notice(message, kind = 'info') {
  return h('div', { class: `alert ${kind}`, role: 'status' }, message);
}

// A <select> of [value, label] options, `value` selected. (Tables: listing.js.)
export function select(options, value = '') {
  return h('select', null, options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
}

// Disables a button while an async action runs; returns the action's result.
export async function busy(button, fn) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

// A button that copies `text()` (or a string) to the clipboard and says so in a live region
// next to it; where the clipboard is refused it selects `select` (if given) for Ctrl+C.
export function copyButton(text, { label = 'Copy', select = null, testid = null } = {}) {
  const said = h('span', { class: 'copied', role: 'status' });
  const btn = h('button', { type: 'button', class: 'copy', 'data-testid': testid }, label);
  btn.addEventListener('click', async () => {
    const value = typeof text === 'function' ? text() : text;
    try {
      await navigator.clipboard.writeText(value);
      said.textContent = 'Copied.';
    } catch {
      if (select) window.getSelection().selectAllChildren(select);
      said.textContent = 'Copying was refused here: the text is selected, press Ctrl+C.';
    }
  });
  return h('span', { class: 'copy-wrap' }, btn, said);
}

// An id shown to people only as a copy button (names are what pages show; auditors and API
// users copy the id): "Copy id", the id itself in its accessible description and tooltip.
export function idButton(id, { what = 'record', label = 'Copy id' } = {}) {
  if (!id) return '';
  const b = copyButton(String(id), { label });
  const btn = b.querySelector('button');
  btn.title = String(id);
  btn.setAttribute('aria-label', `${label} ${id}`);
  btn.dataset.what = what;
  btn.dataset.id = String(id);
  return b;
}
