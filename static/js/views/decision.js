// The decision form: the fields of docs/ledger-format.md's record, signed in this browser with the owner's
// non-extractable Ed25519 key and sent as {record, signature}. The server applies the gate;
// its 422 errors (JSON Pointers into the record) are shown next to the fields they name.
import { h, field, alertBox, notice, busy, showFieldError, uid, idButton, select } from '../dom.js';
import { request, get, ApiError } from '../api.js';
import { evidencePicker, comparisonsPicker } from '../pickers.js';
import { problemList, placeFieldErrors } from '../problems.js';
import { JcsError } from '../jcs.js';
import { loadKey, saveKey, generateKey, signRecord } from '../signing.js';
import { checkLeaf } from '../inclusion.js';
import { money, splitLines as lines } from '../format.js';

// Optional text fields go into the record as null when empty (docs/ledger-format.md allows either).
const orNull = (text) => (text.trim() === '' ? null : text.trim());

// RFC 3339 UTC to the second, as the record wants.
const nowUtc = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

// Registers the browser's key (creating it first when there is none) and returns the entry.
// Registering asks for the password again (docs/auth.md, step-up): password is sent when given;
// a session signed in moments ago may do without, and the server says when it may not.
async function ensureKey(username, password, onStatus) {
  let entry = await loadKey(username);
  if (!entry) {
    onStatus('Generating a signing key in this browser…');
    entry = await generateKey();
    await saveKey(username, entry);
  }
  if (!entry.registered) {
    onStatus('Registering the public key with the server…');
    const json = { public_key: entry.publicKey };
    if (password) json.password = password;
    const { data } = await request('PUT', '/me/signing-key', { json });
    if (data && data.key_id && data.key_id !== entry.keyId) {
      throw new Error(`the server computed key id ${data.key_id}, this browser ${entry.keyId}`);
    }
    entry = { ...entry, registered: true };
    await saveKey(username, entry);
  }
  return entry;
}

function keyPanel(ctx) {
  const status = h('p', { class: 'key-status', 'data-testid': 'key-status' }, 'Checking for a signing key…');
  const button = h('button', { type: 'button' }, 'Generate and register a signing key');
  const password = field('Your password', h('input', { type: 'password', autocomplete: 'current-password' }),
    { name: 'key-password', hint: 'Registering a signing key asks for your password again, so that a stolen session cannot add a key in your name.' });
  const out = h('div', { class: 'form-status' });
  const show = (entry) => {
    password.wrap.hidden = Boolean(entry && entry.registered);
    if (entry && entry.registered) {
      password.control.value = '';
      status.replaceChildren('Signing key ', h('code', { class: 'hash', 'data-testid': 'key-id' }, entry.keyId), ' is registered. Its private half cannot leave this browser.');
      button.hidden = true;
    } else if (entry) {
      status.textContent = 'A key exists in this browser but is not registered yet.';
      button.textContent = 'Register the signing key';
      button.hidden = false;
    } else {
      status.textContent = 'No signing key in this browser yet. One is generated here (WebCrypto Ed25519, non-extractable) and only its public half is sent to the server.';
      button.hidden = false;
    }
  };
  button.addEventListener('click', () => busy(button, async () => {
    out.replaceChildren();
    try {
      show(await ensureKey(ctx.user.username, password.control.value, (s) => { status.textContent = s; }));
    } catch (e) {
      out.append(alertBox(`No key registered: ${stepUpMessage(e)}`));
      if (e instanceof ApiError && e.status === 403) password.control.focus();
      show(await loadKey(ctx.user.username).catch(() => null));
    }
  }));
  loadKey(ctx.user.username).then(show, (e) => {
    status.textContent = `This browser cannot store keys (${e.message}).`;
    button.hidden = true;
  });
  return { el: h('div', { class: 'key-panel' }, status, password.wrap, button, out), password: () => password.control.value, focusPassword: () => password.control.focus() };
}

function stepUpMessage(e) {
  if (e instanceof ApiError && e.problem.type === 'https://capledger.dev/problems/step-up-required') {
    return `${e.problem.detail === 'the password is wrong' ? 'the password is wrong' : 'enter your password to register the key'} (HTTP 403)`;
  }
  return e.message;
}

function receipt(data, record) {
  const proof = data.inclusion_proof || {};
  const check = h('div', { class: 'inclusion-check', 'aria-live': 'polite' }, h('p', { class: 'loading' }, 'Checking the inclusion proof in this browser…'));
  const box = h('section', { class: 'card receipt', 'data-testid': 'decision-receipt', 'aria-labelledby': 'receipt-title' },
    h('h3', { id: 'receipt-title', tabindex: '-1' }, 'Decision signed and logged'),
    h('dl', { class: 'facts' },
      h('dt', null, 'Decision'), h('dd', null, `${record.decision}${record.chosen_option ? ` — ${record.chosen_option}` : ''}`),
      h('dt', null, 'Record'), h('dd', null, h('a', { href: `#/decisions/${encodeURIComponent(data.id || record.id)}` }, 'the full record'), ' ', idButton(data.id || record.id, { what: 'this decision' })),
      h('dt', null, 'Leaf index'), h('dd', { 'data-testid': 'leaf-index' }, String(data.leaf_index)),
      h('dt', null, 'Inclusion proof'), h('dd', null, `tree size ${proof.tree_size ?? '?'}, ${(proof.hashes || []).length} hashes`,
        (proof.hashes || []).length ? h('ol', { class: 'hashes' }, proof.hashes.map((x) => h('li', null, h('code', null, x)))) : null)),
    h('h4', null, 'Checkpoint'),
    h('pre', { class: 'code small' }, typeof data.checkpoint === 'string' ? data.checkpoint : JSON.stringify(data.checkpoint, null, 2)),
    check);
  if (Number.isSafeInteger(data.leaf_index)) {
    checkLeaf(data.leaf_index).then((r) => {
      check.replaceChildren(r.ok
        ? notice(h('span', null, 'This browser recomputed the inclusion proof and checked both signatures. The authoritative check is ', h('code', null, 'capledger verify'), ' on the audit bundle, offline.'), 'success')
        : alertBox('The in-browser check failed:', r.steps.filter((s) => !s.ok).map((s) => `${s.label}: ${s.detail}`)));
    });
  }
  return box;
}

export function describeDecision(d) {
  const r = d.record || d;
  return `${r.decision}${r.chosen_option ? ` ${r.chosen_option}` : ''} (${(r.created_at || '').slice(0, 10)}, leaf ${d.leaf_index})`;
}

// After a decision is logged the form is locked: the same record cannot be sent twice, and a
// change of mind is a new decision that supersedes it (onAgain opens a fresh form).
function lock(form, submit) {
  for (const fs of form.querySelectorAll('fieldset')) fs.disabled = true;
  submit.hidden = true;
  form.dataset.locked = 'true';
}

export function decisionForm(review, ctx, { getPrevious, onSigned, onAgain, refreshPrevious }) {
  const f = {
    decision: field('Decision', select([['revise', 'revise'], ['advance', 'advance'], ['stop', 'stop']], 'revise'), { name: 'decision', hint: 'advance needs the checklist covered; revise and stop are always allowed.' }),
    comparison_sha256: comparisonsPicker(review, { hint: 'The stored comparisons of this review\'s workloads, by scenario and date (SHA-256 beside each). The first chosen is the one this decision rests on: the comparison chosen above.' }),
    chosen_option: field('Chosen option', h('input', { type: 'text', list: uid('options') }), { name: 'chosen_option', hint: 'An option name of the first cited comparison; empty for none.' }),
    evidence: evidencePicker(),
    question: field('Question', h('textarea', { rows: 2, value: review.question || '' }), { name: 'question' }),
    baseline: field('Baseline', h('textarea', { rows: 2 }), { name: 'baseline' }),
    assumptions: field('Assumptions (one per line)', h('textarea', { rows: 3 }), { name: 'assumptions' }),
    unresolved_questions: field('Unresolved questions (one per line)', h('textarea', { rows: 2 }), { name: 'unresolved_questions' }),
    residual_exposure: field('Residual exposure', h('textarea', { rows: 2 }), { name: 'residual_exposure' }),
    expected_operating_cost: field('Expected operating cost (decimal amount)', h('input', { type: 'text', inputmode: 'decimal', placeholder: '128450.00' }), { name: 'expected_operating_cost' }),
    next_authority_boundary: field('Next authority boundary', h('textarea', { rows: 2 }), { name: 'next_authority_boundary' }),
    owner: field('Owner', h('input', { type: 'text', value: ctx.user.username }), { name: 'owner' }),
    accepted_by: field('Accepted by (next stage)', h('input', { type: 'text' }), { name: 'accepted_by' }),
    justification: field('Justification', h('textarea', { rows: 2 }), { name: 'justification', hint: 'Required when the chosen option is not the winner of the first cited comparison.' }),
    supersedes: field('Supersedes', select([]), { name: 'supersedes', hint: 'A review has one current decision: a new one supersedes it.' }),
  };
  const currency = field('Currency', h('input', { type: 'text', value: 'USD', maxlength: 3, size: 4 }), { name: 'currency' });
  const period = field('Period', select([['month', 'per month'], ['quarter', 'per quarter'], ['year', 'per year']]), { name: 'period' });
  const optionsList = h('datalist', { id: f.chosen_option.control.getAttribute('list') });
  const cmpInfo = h('p', { class: 'hint', 'aria-live': 'polite' });

  // Only the current decision can be superseded (an older one already is): it is the one
  // choice, and "nothing" is offered only before the first decision.
  function fillSupersedes(decisions) {
    const current = decisions.find((d) => !d.superseded_by);
    f.supersedes.control.replaceChildren(current
      ? h('option', { value: current.id, selected: true }, describeDecision(current))
      : h('option', { value: '' }, 'nothing (first decision)'));
  }
  fillSupersedes(getPrevious());

  // Naming the first comparison fills the option list and says which option won.
  async function readFirstComparison() {
    const first = f.comparison_sha256.values()[0];
    optionsList.replaceChildren();
    cmpInfo.textContent = '';
    if (!first) return;
    try {
      const { data } = await get(`/comparisons/${encodeURIComponent(first)}`);
      const result = data.result || data;
      for (const o of result.options || []) optionsList.append(h('option', { value: o.name }));
      const winner = result.winner;
      const w = (result.options || []).find((o) => o.name === winner);
      cmpInfo.textContent = winner ? `Winner of that comparison: ${winner}${w ? ` (${money(w.reliable_cost_per_outcome, result.currency || 'USD')} per outcome)` : ''}.` : 'That comparison has no feasible option.';
      if (!f.chosen_option.control.value && winner) f.chosen_option.control.value = winner;
    } catch (e) {
      cmpInfo.textContent = `Could not read that comparison: ${e.message}`;
    }
  }
  f.comparison_sha256.control.addEventListener('change', readFirstComparison);

  const key = keyPanel(ctx);
  const out = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign and submit');
  const result = h('div');
  const form = h('form', { class: 'card decision-form', 'aria-labelledby': 'decision-title', novalidate: true },
    h('h3', { id: 'decision-title' }, 'Record a decision'),
    key.el,
    h('fieldset', null, h('legend', null, 'What is decided'),
      h('div', { class: 'grid-2' },
        f.decision.wrap, f.supersedes.wrap,
        f.comparison_sha256.wrap, h('div', null, f.chosen_option.wrap, optionsList, cmpInfo),
        f.justification.wrap)),
    h('fieldset', null, h('legend', null, 'On what grounds'),
      h('div', { class: 'grid-2' },
        f.question.wrap, f.baseline.wrap,
        f.assumptions.wrap, f.unresolved_questions.wrap,
        f.evidence.wrap)),
    h('fieldset', null, h('legend', null, 'Exposure and authority'),
      h('div', { class: 'grid-2' }, f.residual_exposure.wrap, f.next_authority_boundary.wrap),
      h('div', { class: 'grid-3' }, f.expected_operating_cost.wrap, currency.wrap, period.wrap),
      h('div', { class: 'grid-2' }, f.owner.wrap, f.accepted_by.wrap)),
    out, submit, result);

  function buildRecord(keyId) {
    const amount = f.expected_operating_cost.control.value.trim();
    return {
      id: crypto.randomUUID(),
      review_id: review.id,
      decision: f.decision.control.value,
      chosen_option: orNull(f.chosen_option.control.value),
      comparison_sha256: f.comparison_sha256.values(),
      evidence: f.evidence.values(),
      question: orNull(f.question.control.value),
      baseline: orNull(f.baseline.control.value),
      assumptions: lines(f.assumptions.control.value),
      unresolved_questions: lines(f.unresolved_questions.control.value),
      residual_exposure: orNull(f.residual_exposure.control.value),
      expected_operating_cost: amount ? { amount, currency: currency.control.value.trim().toUpperCase(), period: period.control.value } : null,
      next_authority_boundary: orNull(f.next_authority_boundary.control.value),
      owner: orNull(f.owner.control.value),
      accepted_by: orNull(f.accepted_by.control.value),
      justification: orNull(f.justification.control.value),
      supersedes: orNull(f.supersedes.control.value),
      created_at: nowUtc(),
      signer_key_id: keyId,
    };
  }

  // The cockpit names the comparison the review rests on: it becomes the first cited one.
  let cockpitSha = null;
  form.citeComparison = async (sha) => {
    const rest = f.comparison_sha256.values().filter((x) => x !== sha && x !== cockpitSha);
    cockpitSha = sha;
    f.comparison_sha256.set([sha, ...rest]);
    if (f.chosen_option.control.dataset.auto !== 'false') f.chosen_option.control.value = '';
    await readFirstComparison();
  };
  f.chosen_option.control.addEventListener('input', () => { f.chosen_option.control.dataset.auto = 'false'; });

  // The gate's dry run (POST /decisions?dry_run=true) of this form as an `advance`: the same
  // checks the append makes, before anything is signed. The signer is not checked in a dry run;
  // the record carries this browser's key id when there is one.
  form.dryRunAdvance = async () => {
    const entry = await loadKey(ctx.user.username).catch(() => null);
    const record = { ...buildRecord(entry ? entry.keyId : '0'.repeat(64)), decision: 'advance' };
    const { data } = await request('POST', '/decisions', { json: { record }, query: { dry_run: 'true' } });
    return data;
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      result.replaceChildren();
      for (const x of Object.values(f)) showFieldError(x, []);
      const amount = f.expected_operating_cost.control.value.trim();
      if (amount && !/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(amount)) {
        showFieldError(f.expected_operating_cost, 'a decimal amount such as 128450.00 (digits, one optional point)');
        f.expected_operating_cost.control.focus();
        return;
      }
      let entry;
      try {
        entry = await ensureKey(ctx.user.username, key.password(), (s) => out.replaceChildren(notice(s)));
      } catch (e) {
        out.replaceChildren(alertBox(`Cannot sign: ${stepUpMessage(e)}`));
        if (e instanceof ApiError && e.status === 403) key.focusPassword();
        return;
      }
      const record = buildRecord(entry.keyId);
      let signature;
      try {
        signature = await signRecord(entry.keyPair.privateKey, record);
      } catch (e) {
        if (e instanceof JcsError) {
          const rest = placeFieldErrors(f, [{ pointer: e.pointer, message: 'contains a character that cannot be signed (a lone surrogate)' }]);
          out.replaceChildren(alertBox('Nothing was signed.', problemList(rest)));
        } else {
          out.replaceChildren(alertBox(`Signing failed: ${e.message}`));
        }
        return;
      }
      out.replaceChildren(notice('Signed in this browser; sending…'));
      try {
        const { data } = await request('POST', '/decisions', { json: { record, signature } });
        out.replaceChildren();
        lock(form, submit);
        result.append(receipt(data, record),
          h('p', { class: 'actions' }, h('button', { type: 'button', onclick: () => onAgain() }, 'Record a new decision that supersedes this one')));
        result.querySelector('h3').focus();
        onSigned(data);
      } catch (e) {
        if (e instanceof ApiError && e.status === 409 && e.problem.current_decision) {
          // Someone (or another tab) decided meanwhile: name the current decision and let the
          // owner re-read the form before signing again.
          const current = e.problem.current_decision;
          const list = await refreshPrevious();
          fillSupersedes(list);
          out.replaceChildren(alertBox('Not logged (HTTP 409): this review already has a current decision, and a new one must supersede it.', [
            h('span', null, 'Current decision: ', h('a', { href: `#/decisions/${encodeURIComponent(current)}` }, (() => { const d = list.find((x) => x.id === current); return d ? describeDecision(d) : 'the current decision'; })()), '. "Supersedes" now names it: check the form and sign again.')]));
          return;
        }
        if (e instanceof ApiError && e.status === 422) {
          const rest = placeFieldErrors(f, e.errors, '/record');
          // A decision superseded meanwhile: the form takes the current one (re-read).
          if (e.errors.some((x) => x.pointer === '/record/supersedes')) fillSupersedes(await refreshPrevious());
          out.replaceChildren(alertBox(`Refused (HTTP 422): ${e.problem.detail || e.problem.title || 'the decision does not pass the gate'}`, problemList(rest)));
          const firstBad = Object.values(f).find((x) => !x.error.hidden);
          if (firstBad) firstBad.control.focus();
        } else {
          out.replaceChildren(alertBox(`Not logged: ${e.message}`, problemList(e.errors || [])));
        }
      }
    });
  });
  return form;
}
