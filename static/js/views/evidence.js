// Evidence: workloads, offers, benchmarks and job accounting, each filterable; and the uploads
// a team makes from its own tools (sacct, nvidia-smi, DCGM, vLLM and other load tests, price
// sheets), sent with the Content-Type the API expects, answering what was inserted, what was a
// duplicate, and which lines were rejected and why.
import { h, field, alertBox, notice, busy, idButton, select } from '../dom.js';
import { request, get, listAll, ApiError } from '../api.js';
import { listing, table } from '../listing.js';
import { money, number, percent, dateTime, shortId, duration } from '../format.js';
import { problemList, fieldName, plainMessage } from '../problems.js';
import { may } from '../roles.js';
import { recordPicker, DESCRIBE } from '../pickers.js';
import { usageChart, usageOverTimeChart, dutyCycleChart } from '../charts.js';

const TABS = [
  ['workloads', 'Workloads'],
  ['offers', 'Offers'],
  ['benchmarks', 'Benchmarks'],
  ['runs', 'Job accounting'],
  ['usage', 'Usage'],
  ['uploads', 'Uploads'],
  ['upload', 'Upload'],
];

// An upload's plausibility warnings ({code, message, refuses, overridden}) in words.
function warningList(warnings) {
  if (!warnings || !warnings.length) return null;
  return h('ul', { class: 'warnings', 'data-testid': 'upload-warnings' }, warnings.map((w) =>
    h('li', { 'data-code': w.code }, h('strong', null, w.code.replace(/_/g, ' ')), ': ', w.message,
      w.overridden ? h('em', null, ' (would have been refused; stored because force was asked, and recorded)') : null)));
}

// Every upload the caller may see: what it brought and what was odd about it.
function uploadsList(ctx) {
  return listing({
    path: '/uploads',
    title: 'Uploads',
    filters: [
      { name: 'kind', label: 'Kind', control: () => select([['', 'any'], ['runs', 'job accounting'], ['telemetry', 'telemetry'], ['benchmark_import', 'load test'], ['offers', 'offers']]) },
      { name: 'team', label: 'Team', control: text },
    ],
    columns: [
      { label: 'When', value: (r) => h('a', { href: `#/evidence/uploads/${encodeURIComponent(r.id)}` }, dateTime(r.created_at)), date: (r) => r.created_at, sort: (r) => r.created_at },
      { label: 'Kind / format', value: (r) => `${r.kind}${r.format ? ` (${r.format})` : ''}` },
      { label: 'By', value: (r) => r.created_by_name },
      { label: 'Stored / duplicates / rejected', class: 'num', value: (r) => `${number(r.inserted, 0)} / ${number(r.duplicates, 0)} / ${number(r.rejected_total, 0)}` },
      { label: 'Warnings', value: (r) => warningList(r.warnings) || '' },
      { label: 'Id', value: idCell },
    ],
    empty: emptyNext(ctx, 'No uploads visible to you yet.', 'POST /runs', 'Upload job accounting, GPU telemetry or a load test'),
  });
}

// An empty list says what to do next: the upload that fills it for a role that may, else who can.
function emptyNext(ctx, what, route, action) {
  return may(ctx.user, route)
    ? [what, ' ', h('a', { href: '#/evidence/upload' }, action), '.']
    : [what, ' Team members and owners add it under Evidence → Upload.'];
}

const text = () => h('input', { type: 'text' });
const date = () => h('input', { type: 'date' });
const idCell = (r) => idButton(r.id);

function workloads(ctx) {
  return listing({
    path: '/workloads',
    title: 'Workloads',
    filters: [
      { name: 'q', label: 'Name starts with', control: text },
      { name: 'team', label: 'Team', control: text },
      { name: 'kind', label: 'Kind', control: () => select([['', 'any'], ['training', 'training'], ['fine_tuning', 'fine-tuning'], ['evaluation', 'evaluation'], ['inference', 'inference']]) },
      { name: 'class', label: 'Class', control: () => select([['', 'any'], ['exploratory', 'exploratory'], ['production', 'production']]) },
    ],
    columns: [
      { label: 'Name', value: (r) => r.name },
      { label: 'Team', value: (r) => r.team },
      { label: 'Kind', value: (r) => r.kind },
      { label: 'Class', value: (r) => r.class },
      { label: 'Target', class: 'num', value: (r) => (r.target_units ? `${number(r.target_units)} ${r.unit || ''}` : '') },
      { label: 'Memory / GPU', class: 'num', value: (r) => (r.memory_required_gb ? `${number(r.memory_required_gb)} GB` : '') },
      { label: 'Id', value: idCell },
    ],
    empty: emptyNext(ctx, 'No workloads visible to you yet.', 'POST /workloads', 'Describe a workload (Upload → JSON record)'),
  });
}

function offers(ctx) {
  return listing({
    path: '/offers',
    title: 'Offers',
    filters: [
      { name: 'q', label: 'Name starts with', control: text },
      { name: 'gpu_model', label: 'GPU model', control: text },
      { name: 'purchase_option', label: 'Purchase option', control: () => select([['', 'any'], ['on_demand', 'on-demand'], ['spot', 'spot'], ['reserved', 'reserved'], ['committed', 'committed']]) },
    ],
    columns: [
      { label: 'Name', value: (r) => r.name || r.instance_type },
      { label: 'Provider / region', value: (r) => `${r.provider} ${r.region}` },
      { label: 'Instance', value: (r) => `${r.instance_type} (${r.gpus_per_instance}× ${r.gpu_model})` },
      { label: 'Option', value: (r) => r.purchase_option },
      { label: 'Per instance-hour', class: 'num', value: (r) => money(r.price_per_hour, r.currency) },
      { label: 'Per GPU-hour', class: 'num', value: (r) => money(r.price_per_hour / r.gpus_per_instance, r.currency) },
      { label: 'Interruptions / h', class: 'num', value: (r) => (r.interruption_rate_per_hour != null ? number(r.interruption_rate_per_hour, 3) : '') },
      { label: 'Id', value: idCell },
    ],
    empty: emptyNext(ctx, 'No offers yet.', 'POST /offers', 'Upload a price sheet'),
  });
}

function benchmarks(ctx) {
  return listing({
    path: '/benchmarks',
    title: 'Benchmarks',
    filters: [
      { name: 'q', label: 'Workload or offer name starts with', control: text },
      { name: 'team', label: 'Team', control: text },
    ],
    columns: [
      { label: 'Measured', value: (r) => dateTime(r.measured_at), date: (r) => r.measured_at, sort: (r) => r.measured_at },
      { label: 'Team', value: (r) => r.team },
      { label: 'Workload', value: (r) => h('a', { href: `#/evidence/benchmarks/${r.id}`, title: 'The benchmark, its telemetry and duty cycle over time' }, r.workload_name || shortId(r.workload_id)) },
      { label: 'Offer', value: (r) => r.offer_name || shortId(r.offer_id) },
      { label: 'Throughput', class: 'num', value: (r) => (r.throughput_units_per_s ? `${number(r.throughput_units_per_s)}/s` : (r.load_points ? `${r.load_points.length} load points` : '')) },
      { label: 'Duty cycle', class: 'num', value: (r) => (r.gpu_duty_cycle != null ? percent(r.gpu_duty_cycle) : '') },
      { label: 'Input stall', class: 'num', value: (r) => (r.input_stall_fraction != null ? percent(r.input_stall_fraction) : '') },
      { label: 'Outcome', value: (r) => r.outcome + (r.failure_reason ? ` (${r.failure_reason})` : '') },
      { label: 'Id', value: idCell },
    ],
    empty: emptyNext(ctx, 'No benchmarks visible to you yet.', 'POST /benchmarks/import', 'Upload a load test (vLLM, GenAI-Perf or MLPerf)'),
  });
}

function runs(ctx) {
  return listing({
    path: '/runs',
    title: 'Runs',
    filters: [
      { name: 'team', label: 'Team', control: text },
      { name: 'class', label: 'Class', control: () => select([['', 'any'], ['exploratory', 'exploratory'], ['production', 'production']]) },
      { name: 'state', label: 'State', control: () => select([['', 'any'], ...['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'PREEMPTED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE'].map((s) => [s, s])]) },
      { name: 'from', label: 'Submitted from', control: date },
      { name: 'to', label: 'Submitted before', control: date },
    ],
    columns: [
      { label: 'Cluster / job', value: (r) => `${r.cluster} ${r.external_id}` },
      { label: 'Team', value: (r) => r.team },
      { label: 'User', value: (r) => r.user },
      { label: 'Class', value: (r) => r.workload_class },
      { label: 'Submitted', value: (r) => dateTime(r.submitted_at), date: (r) => r.submitted_at, sort: (r) => r.submitted_at },
      { label: 'Queue wait', class: 'num', value: (r) => (r.started_at ? duration((Date.parse(r.started_at) - Date.parse(r.submitted_at)) / 1000) : 'never started') },
      { label: 'GPUs', class: 'num', value: (r) => number(r.gpus) },
      { label: 'State', value: (r) => h('span', { class: r.state === 'COMPLETED' ? 'state ok' : 'state bad' }, r.state) },
      { label: 'From', value: (r) => (r.upload_id ? h('a', { href: `#/evidence/uploads/${encodeURIComponent(r.upload_id)}` }, 'its upload') : '') },
    ],
    empty: emptyNext(ctx, 'No runs match: clear the filters or widen the dates.', 'POST /runs', 'Upload job accounting (Slurm sacct)'),
  });
}

function contentTypeFor(fileName, fallback) {
  const n = fileName.toLowerCase();
  if (n.endsWith('.json')) return 'application/json';
  if (n.endsWith('.jsonl') || n.endsWith('.ndjson')) return 'application/x-ndjson';
  if (n.endsWith('.csv')) return 'text/csv';
  if (n.endsWith('.txt') || n.endsWith('.log') || n.endsWith('.prom')) return 'text/plain';
  return fallback;
}

// The answer of any upload: its id (what a decision cites), counts, and the rejected lines.
function uploadResult(data) {
  const rejected = data.rejected || [];
  const rejectedTotal = data.rejected_total ?? rejected.length;
  const counts = [
    ['inserted', data.inserted], ['duplicates', data.duplicates], ['skipped', data.skipped],
    ['steps', data.steps_skipped], ['samples', data.samples],
    ['load points', Array.isArray(data.load_points) ? data.load_points.length : undefined], ['rejected', rejectedTotal],
    // a price catalog: new offers, new versions of changed prices, unchanged, rows left out
    ['new offers', data.created], ['new versions', data.updated], ['unchanged', data.unchanged],
    ['CPU-only rows', data.skipped_cpu_only], ['unknown GPU memory', data.skipped_unknown_memory],
  ].filter(([, v]) => v !== undefined && v !== null);
  return h('div', { class: 'upload-result', 'data-testid': 'upload-result' },
    notice(h('span', null, 'Uploaded. A decision cites it by name (Evidence, in the decision form); ', idButton(data.id || (data.benchmark && data.benchmark.id), { what: 'this upload' })), 'success'),
    counts.length ? h('dl', { class: 'counts' }, counts.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', { 'data-count': k }, number(v, 0))))) : null,
    (data.flags || []).length ? h('p', null, 'Flags: ', data.flags.join(', ')) : null,
    warningList(data.warnings),
    data.summary ? telemetrySummary(data.summary) : null,
    rejected.length ? h('div', { class: 'rejected' },
      h('h4', null, `Rejected lines${rejectedTotal > rejected.length ? ` (first ${rejected.length} of ${rejectedTotal})` : ''}`),
      table([
        { label: 'Line', class: 'num', value: (r) => (r.line ?? '') },
        { label: 'Field', value: (r) => fieldName(r.pointer) },
        { label: 'Problem', value: (r) => plainMessage(r.message) },
      ], rejected)) : null);
}

// The telemetry summary in words; anything else the server adds stays readable as JSON.
function telemetrySummary(sm) {
  if (!('duty_cycle_mean' in sm)) return h('pre', { class: 'code small' }, JSON.stringify(sm, null, 2));
  return h('dl', { class: 'facts', 'data-testid': 'telemetry-summary' },
    h('dt', null, 'Duty cycle'), h('dd', null, `mean ${percent(sm.duty_cycle_mean)}, p10 ${percent(sm.duty_cycle_p10)}, p50 ${percent(sm.duty_cycle_p50)}, p90 ${percent(sm.duty_cycle_p90)}`),
    h('dt', null, 'Idle'), h('dd', null, `${percent(sm.idle_fraction)} of samples under ${percent(sm.idle_below)} duty; longest idle stretch ${duration(sm.longest_idle_s)}`),
    h('dt', null, 'GPU memory in use (peak)'), h('dd', { 'data-testid': 'memory-used' }, sm.memory_peak_gb != null
      ? [`${number(sm.memory_peak_gb)} GB of ${number(sm.memory_total_gb)} GB`,
        h('p', { class: 'hint' }, 'Memory in use is not memory required: PyTorch, vLLM and other frameworks keep (cache or pre-allocate) GPU memory they do not need, so a nearly full GPU says little about what the workload needs. Give the workload its memory requirement (Memory / GPU): that, not this figure, is what an option\'s fit should rest on.')]
      : 'n/a'),
    h('dt', null, 'Span'), h('dd', null, `${number(sm.gpus, 0)} GPU(s), ${number(sm.samples, 0)} samples over ${duration(sm.time_span_s)}`));
}

// The upload forms by what they read (the server's looks_like.upload names one of these).
const UPLOAD_FORMS = { runs: 'Job accounting', telemetry: 'GPU telemetry', loadtest: 'Load test', offers: 'Price sheet' };
const TOOL_NAMES = { vllm: 'vLLM benchmark_serving', 'genai-perf': 'GenAI-Perf', mlperf: 'MLPerf Inference' };

// Bytes in MB for the progress line.
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

// The lines of a file, counted as it is read in the browser: cum[i] is the number of line ends
// in the first i × CHUNK bytes, so the lines sent so far follow the bytes sent.
const LINE_CHUNK = 65536;
async function countLines(file, onDone) {
  const cum = [0];
  let n = 0;
  let pending = new Uint8Array(0);
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (value) {
      const buf = new Uint8Array(pending.length + value.length);
      buf.set(pending);
      buf.set(value, pending.length);
      let at = 0;
      while (buf.length - at >= LINE_CHUNK) {
        for (let i = at; i < at + LINE_CHUNK; i++) if (buf[i] === 10) n++;
        cum.push(n);
        at += LINE_CHUNK;
      }
      pending = buf.slice(at);
    }
    if (done) break;
  }
  for (const b of pending) if (b === 10) n++;
  const last = pending.length && pending[pending.length - 1] !== 10 ? 1 : 0;
  onDone({ total: n + last, at: (bytes) => (bytes >= file.size ? n + last : cum[Math.min(cum.length - 1, Math.floor(bytes / LINE_CHUNK))]) });
}

// A refused upload in the words of this page: the file that looks like another upload's input
// names that form (the server's looks_like, the same guess API users get), the telemetry that
// does not fit its offer names the check box (not ?force=true).
function refusalView(e, { kind, force, file }) {
  const like = e.problem.looks_like;
  const rest = problemList(e.errors);
  if (like && like.upload) {
    const sentence = like.upload === kind && TOOL_NAMES[like.format]
      ? `This looks like ${like.what}: choose the tool “${TOOL_NAMES[like.format]}” in this form and upload it again.`
      : `This looks like ${like.what}: upload it under ${UPLOAD_FORMS[like.upload] || like.upload}${like.upload === 'runs' ? ' (Slurm sacct)' : ''}.`;
    return h('div', { class: 'alert error', role: 'alert', 'data-testid': 'upload-refused', 'data-looks-like': like.upload },
      h('p', null, h('strong', null, sentence)),
      like.upload !== kind ? h('p', null, goToForm(like.upload, file)) : null,
      h('details', null, h('summary', null, 'What the reader found'), h('ul', null, rest.map((x) => h('li', null, x)))));
  }
  if (e.problem.overridable === 'force' && force) {
    return h('div', { class: 'alert error', role: 'alert', 'data-testid': 'upload-refused' },
      h('p', null, 'Not stored: the telemetry does not fit the benchmark\'s offer.'),
      h('ul', null, rest.map((x) => h('li', null, x))),
      h('p', null, `If it is right all the same, tick “${force.wrap.querySelector('label').textContent}” above and upload it again; the override is recorded with the upload.`));
  }
  return alertBox(`Upload refused (HTTP ${e.status}): ${e.problem.detail || e.problem.title || ''}`, rest);
}

// "Go to <form>": the upload form that reads the file, on this page, with the file already chosen
// there and its first field focused. The address stays this page's (the hash is the router's: an
// in-page anchor would leave a URL that reloads to another page).
function goToForm(upload, from) {
  const link = h('a', { href: '#/evidence/upload' }, `Go to ${UPLOAD_FORMS[upload] || 'that form'}`);
  link.addEventListener('click', (ev) => {
    const form = document.getElementById(`upload-${upload}`);
    if (!form) return;
    ev.preventDefault();
    const input = form.querySelector('input[type=file]');
    if (input && from && from.files.length) input.files = from.files;
    form.scrollIntoView({ block: 'start' });
    (form.querySelector('input, select, textarea') || form).focus();
  });
  return link;
}

function uploadForm({ kind, title, description, fields, fileLabel, accept, send, force = null }) {
  const file = field(fileLabel, h('input', { type: 'file', accept, required: true }), { name: 'file' });
  const out = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Upload');
  const bar = h('progress', { max: 1, value: 0, 'aria-label': `Upload progress (${kind})` });
  const said = h('span', { class: 'progress-text' });
  const progress = h('div', { class: 'upload-progress', hidden: true, 'data-testid': 'upload-progress', role: 'status' }, bar, ' ', said);
  const form = h('form', { class: 'card upload', id: `upload-${kind}`, 'data-upload': kind },
    h('h3', null, title), h('p', { class: 'hint' }, description),
    h('div', { class: 'grid-3' }, fields.map((f) => f.wrap), file.wrap), submit, progress, out);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const f = file.control.files[0];
    if (!f) {
      out.replaceChildren(alertBox('Choose a file first.'));
      return;
    }
    busy(submit, async () => {
      out.replaceChildren();
      let lines = null;
      countLines(f, (l) => { lines = l; }).catch(() => {});
      let sent = 0;
      const show = () => {
        const pct = f.size ? Math.round((100 * sent) / f.size) : 100;
        const ln = lines ? ` · ${number(lines.at(sent), 0)} of ${number(lines.total, 0)} lines` : '';
        said.textContent = sent >= f.size
          ? `Sent all ${mb(f.size)}${lines ? `, ${number(lines.total, 0)} lines` : ''}: the server is reading it…`
          : `Sent ${mb(sent)} of ${mb(f.size)} (${pct} %)${ln}`;
        bar.value = f.size ? sent / f.size : 1;
        progress.dataset.sent = String(sent);
      };
      progress.hidden = false;
      show();
      try {
        const { data } = await send(f, (p) => { sent = p.loaded; show(); });
        sent = f.size;
        show();
        said.textContent = `Sent ${mb(f.size)}${lines ? `, ${number(lines.total, 0)} lines` : ''}.`;
        out.append(uploadResult(data || {}));
      } catch (e) {
        said.textContent = 'Not stored.';
        out.append(e instanceof ApiError && (e.errors.length || e.problem.looks_like)
          ? refusalView(e, { kind, force, file: file.control })
          : alertBox(`Upload failed: ${e.message}`));
      }
    });
  });
  return form;
}

function uploads(ctx) {
  const team = () => field('Team (instead of the Account column)', h('input', { type: 'text', value: '' }), { name: 'team' });
  const runsCluster = field('Cluster', h('input', { type: 'text', required: true }), { name: 'cluster' });
  const runsTeam = team();
  const runsTz = field('Time zone of the times', h('input', { type: 'text', value: 'UTC' }), { name: 'tz', hint: 'IANA name, e.g. Europe/Berlin' });
  const runsClass = field('Workload class', select([['', 'from the cluster map'], ['production', 'production'], ['exploratory', 'exploratory']]), { name: 'class', hint: 'every run of the file; else the cluster\'s partition map classes them' });
  const runsFields = field('Columns (files without a header line)', h('input', { type: 'text', spellcheck: 'false' }), { name: 'fields', hint: "sacct's own -o list, e.g. JobID,State,Submit,Start,End,AllocTRES" });
  const teleBench = recordPicker({ label: 'Benchmark', path: '/benchmarks', kind: 'benchmarks', name: 'benchmark_id', hint: 'By its workload and offer (team), newest measurements included.' });
  const teleFormat = field('Format', select([['', 'detect from content'], ['nvidia-smi', 'nvidia-smi --query-gpu … --format=csv'], ['dmon', 'nvidia-smi dmon'], ['dcgm', 'DCGM exporter text']]), { name: 'format' });
  const teleIdle = field('Idle below duty cycle', h('input', { type: 'number', min: 0, max: 1, step: 0.01, value: '0.05' }), { name: 'idle_below' });
  const teleForce = field('Store even if it does not fit the offer', h('input', { type: 'checkbox' }), { name: 'force', hint: 'telemetry of another GPU model or memory size is refused unless this is ticked; the override is recorded' });
  const teleFields = field('Columns (files without a header line)', h('input', { type: 'text', spellcheck: 'false' }), { name: 'fields', hint: 'the --query-gpu list, e.g. timestamp,uuid,utilization.gpu,memory.used' });
  const ltFormat = field('Tool', select([['vllm', 'vLLM benchmark_serving'], ['genai-perf', 'GenAI-Perf'], ['mlperf', 'MLPerf Inference']]), { name: 'format' });
  const ltWorkload = recordPicker({ label: 'Workload', path: '/workloads', kind: 'workloads', name: 'workload_id', query: { kind: 'inference' } });
  const ltOffer = recordPicker({ label: 'Offer', path: '/offers', kind: 'offers', name: 'offer_id' });
  const ltWhere = field('Only results where', h('input', { type: 'text', spellcheck: 'false', placeholder: 'deployment=base' }), { name: 'where', hint: 'key=value, when one file mixes configurations' });
  const val = (f) => f.control.value.trim();

  const runsForm = uploadForm({
    kind: 'runs',
    title: 'Job accounting (Slurm sacct)',
    description: 'sacct --parsable2 output with its header line (or a JSON array of runs). Re-uploads count as duplicates.',
    fields: [runsCluster, runsTeam, runsClass, runsTz, runsFields],
    fileLabel: 'sacct file',
    accept: '.txt,.csv,.psv,.json,text/plain,text/csv,application/json',
    send: (f, onProgress) => request('POST', '/runs', {
      body: f,
      onProgress,
      contentType: contentTypeFor(f.name, 'text/csv'),
      query: { cluster: val(runsCluster), team: val(runsTeam), class: val(runsClass), tz: val(runsTz) === 'UTC' ? '' : val(runsTz), fields: val(runsFields) },
    }),
  });
  const teleForm = uploadForm({
    kind: 'telemetry',
    force: teleForce,
    title: 'GPU telemetry (nvidia-smi, dmon, DCGM)',
    description: 'Samples attached to a benchmark; summarised into duty cycle, memory peak and idle stretches.',
    fields: [teleBench, teleFormat, teleIdle, teleFields, teleForce],
    fileLabel: 'Telemetry file',
    accept: '.csv,.txt,.log,.prom,text/csv,text/plain',
    send: (f, onProgress) => request('POST', `/benchmarks/${encodeURIComponent(teleBench.value())}/telemetry`, {
      body: f,
      onProgress,
      contentType: val(teleFormat) === 'nvidia-smi' || f.name.toLowerCase().endsWith('.csv') ? 'text/csv' : 'text/plain',
      query: { format: val(teleFormat), idle_below: val(teleIdle) === '0.05' ? '' : val(teleIdle), fields: val(teleFields), force: teleForce.control.checked ? 'true' : '' },
    }),
  });
  const ltForm = uploadForm({
    kind: 'loadtest',
    title: 'Load test (vLLM, GenAI-Perf, MLPerf)',
    description: "The tool's own output: a new benchmark with one load point per measured rate.",
    fields: [ltFormat, ltWorkload, ltOffer, ltWhere],
    fileLabel: 'Result file',
    accept: '.json,.jsonl,.csv,.txt,application/json,text/csv,text/plain',
    send: (f, onProgress) => request('POST', '/benchmarks/import', {
      body: f,
      onProgress,
      contentType: contentTypeFor(f.name, 'application/json'),
      query: { format: val(ltFormat), workload_id: ltWorkload.value(), offer_id: ltOffer.value(), where: val(ltWhere) },
    }),
  });
  const priceFormat = field('Format', select([['', 'price sheet: the offer fields as column names'], ['skypilot', 'SkyPilot catalog (vms.csv)']]), { name: 'format' });
  const priceProvider = field('Cloud of a SkyPilot catalog', h('input', { type: 'text', spellcheck: 'false', placeholder: 'gcp' }), { name: 'provider', hint: 'a vms.csv does not name its cloud: aws, gcp, lambda, …' });
  const priceForm = uploadForm({
    kind: 'offers',
    title: 'Price sheet (offers CSV)',
    description: 'One offer per line with the offer fields as column names, or a SkyPilot catalog: a changed price becomes a new offer version, the old one stays for the comparisons that used it.',
    fields: [priceFormat, priceProvider],
    fileLabel: 'Offers CSV',
    accept: '.csv,text/csv',
    send: (f, onProgress) => (val(priceFormat) === 'skypilot'
      ? request('POST', '/offers/import', { body: f, contentType: 'text/csv', query: { format: 'skypilot', provider: val(priceProvider) }, onProgress })
      : request('POST', '/offers', { body: f, contentType: 'text/csv', onProgress })),
  });
  return h('div', { class: 'uploads' },
    may(ctx.user, 'POST /runs') ? runsForm : null,
    may(ctx.user, 'POST /benchmarks/{id}/telemetry') ? teleForm : null,
    may(ctx.user, 'POST /benchmarks/import') ? ltForm : null,
    may(ctx.user, 'POST /offers') ? priceForm : null,
    jsonRecordForm(ctx));
}

// Workloads, offers and benchmarks as JSON documents (the API's own fields).
function jsonRecordForm(ctx) {
  const kinds = [['workloads', 'workload'], ['offers', 'offer'], ['benchmarks', 'benchmark']]
    .filter(([k]) => may(ctx.user, `POST /${k}`));
  if (!kinds.length) return null;
  const kind = field('Record type', select(kinds), { name: 'kind' });
  const doc = field('JSON', h('textarea', { rows: 8, class: 'code', spellcheck: 'false' }), { name: 'document' });
  const out = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create');
  const form = h('form', { class: 'card upload' }, h('h3', null, 'A workload, offer or benchmark as JSON'),
    h('p', { class: 'hint' }, 'Fields as in docs/evidence.md and docs/cost-model.md; the answer gives its id.'), kind.wrap, doc.wrap, submit, out);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    let body;
    try {
      body = JSON.parse(doc.control.value);
    } catch (e) {
      out.replaceChildren(alertBox(`Not valid JSON: ${e.message}`));
      return;
    }
    busy(submit, async () => {
      out.replaceChildren();
      try {
        const { data } = await request('POST', `/${kind.control.value}`, { json: body });
        out.append(notice(h('span', null, 'Created. ', idButton(data.id, { what: 'the new record' })), 'success'));
      } catch (e) {
        out.append(alertBox(`Not created: ${e.message}`, problemList(e.errors)));
      }
    });
  });
  return form;
}

// One upload (#/evidence/uploads/<id>): what it brought, by whom and when, and the record it
// belongs to (a telemetry upload's benchmark, a load test's benchmark, a runs upload's runs).
function uploadView(id) {
  const el = h('section', { class: 'upload-view card', 'data-testid': 'upload-view' });
  async function load() {
    let u;
    try {
      ({ data: u } = await get(`/uploads/${encodeURIComponent(id)}`));
    } catch (e) {
      el.replaceChildren(alertBox(`Could not read this upload: ${e.message}`));
      return;
    }
    const fact = (k, v) => (v === null || v === undefined || v === '' ? null : [h('dt', null, k), h('dd', null, v)]);
    const bench = u.benchmark_id || (u.kind === 'benchmark_import' && u.params && u.params.benchmark_id);
    el.replaceChildren(
      h('p', { class: 'crumbs' }, h('a', { href: '#/evidence/uploads' }, 'Uploads'), ' / ', DESCRIBE.uploads(u)),
      h('h3', null, DESCRIBE.uploads(u)),
      h('dl', { class: 'facts' },
        fact('Kind', u.kind), fact('Format', u.format), fact('Team', u.team), fact('By', u.created_by_name),
        fact('When', dateTime(u.created_at)), fact('Stored', number(u.inserted, 0)), fact('Duplicates', u.duplicates != null ? number(u.duplicates, 0) : null),
        fact('Rejected', u.rejected_total != null ? number(u.rejected_total, 0) : null),
        fact('Benchmark', bench ? h('a', { href: `#/evidence/benchmarks/${encodeURIComponent(bench)}` }, 'the benchmark it belongs to') : null),
        fact('Runs', u.kind === 'runs' ? h('a', { href: '#/evidence/runs' }, 'Job accounting') : null),
        fact('Id', idButton(u.id, { what: 'this upload' }))),
      warningList(u.warnings) || '');
  }
  return { el, load };
}

// One benchmark: its figures, its telemetry uploads, and the duty cycle over time with the idle
// stretches (GET /benchmarks/{id}/telemetry/series, downsampled by the server).
function benchmarkView(id) {
  const el = h('section', { class: 'benchmark-view', 'data-testid': 'benchmark-view' });
  const idleBelow = field('Idle below duty cycle', h('input', { type: 'number', min: 0.001, max: 1, step: 'any', value: '0.05' }), { name: 'idle_below' });
  const idleMin = field('Idle for at least (seconds)', h('input', { type: 'number', min: 0, step: 'any', value: '10' }), { name: 'idle_min_s' });
  const apply = h('button', { type: 'submit' }, 'Show');
  const chartBox = h('div', { class: 'list-results', 'aria-live': 'polite' });
  const form = h('form', { class: 'filters', 'aria-label': 'Idle stretch rule' }, idleBelow.wrap, idleMin.wrap, apply);
  let loads = 0;
  async function loadSeries() {
    try {
      const { data } = await get(`/benchmarks/${encodeURIComponent(id)}/telemetry/series`, { idle_below: idleBelow.control.value, idle_min_s: idleMin.control.value });
      chartBox.replaceChildren(dutyCycleChart(data) || h('p', { class: 'hint' }, data.samples
        ? `${number(data.samples, 0)} telemetry samples, none with both a timestamp and a duty cycle: nothing to plot.`
        : 'No telemetry attached to this benchmark yet (Evidence → Upload → GPU telemetry).'));
    } catch (e) {
      chartBox.replaceChildren(alertBox(`Duty cycle unavailable: ${e.message}`, problemList(e.errors)));
    }
    loads += 1;
    chartBox.dataset.loads = String(loads);
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(apply, loadSeries);
  });
  async function load() {
    let b;
    try {
      ({ data: b } = await get(`/benchmarks/${encodeURIComponent(id)}`));
    } catch (e) {
      el.replaceChildren(alertBox(`Benchmark unavailable: ${e.message}`));
      return;
    }
    const fact = (k, v) => (v === null || v === undefined || v === '' ? null : [h('dt', null, k), h('dd', null, v)]);
    let uploads = [];
    try {
      ({ data: { items: uploads = [] } } = await get(`/benchmarks/${encodeURIComponent(id)}/telemetry`, { limit: 50 }));
    } catch { /* the list is a detail; the chart says what is missing */ }
    el.replaceChildren(
      h('p', null, h('a', { href: '#/evidence/benchmarks' }, '← All benchmarks')),
      h('h3', null, `${b.workload_name || shortId(b.workload_id)} on ${b.offer_name || shortId(b.offer_id)}`),
      b.notes ? h('p', { class: 'hint' }, b.notes) : null,
      h('dl', { class: 'facts' },
        fact('Team', b.team), fact('Measured', dateTime(b.measured_at)), fact('Outcome', b.outcome),
        fact('Throughput', b.throughput_units_per_s != null ? `${number(b.throughput_units_per_s)}/s` : null),
        fact('Duty cycle', b.gpu_duty_cycle != null ? percent(b.gpu_duty_cycle) : null),
        fact('Input stall', b.input_stall_fraction != null ? percent(b.input_stall_fraction) : null),
        fact('Load points', Array.isArray(b.load_points) ? number(b.load_points.length, 0) : null),
        fact('Id', h('code', { class: 'hash' }, b.id))),
      h('h4', null, 'Duty cycle over time'),
      h('p', { class: 'hint' }, 'All telemetry samples of the benchmark, every GPU together, averaged into at most 300 points by the server. An idle stretch is a run of one GPU\'s samples below the duty cycle chosen here, from its first idle sample to the next busy one, listed when it lasts at least the time chosen here.'),
      form, chartBox,
      h('h4', null, 'Telemetry uploads'),
      table([
        { label: 'When', value: (u) => h('a', { href: `#/evidence/uploads/${encodeURIComponent(u.id)}` }, dateTime(u.created_at)), date: (u) => u.created_at, sort: (u) => u.created_at },
        { label: 'Format', value: (u) => u.format || '' },
        { label: 'Samples', class: 'num', value: (u) => number(u.inserted ?? (u.summary && u.summary.samples), 0) },
        { label: 'Summary', value: (u) => (u.summary ? telemetrySummary(u.summary) : '') },
        { label: 'Id', value: idCell },
      ], uploads, { caption: 'Telemetry uploads of this benchmark', empty: 'No telemetry uploads.' }));
    await loadSeries();
  }
  return { el, load };
}

// The usage report's unpriced runs (cluster, partition, GPU model) and, for owners (who keep the
// cluster maps), a way to price each: pick an offer by name and the partition's entry in the
// cluster's map gets it (GET the map, add or complete the entry, PUT it back).
function unpricedView(unpriced, ctx, reload) {
  const canPrice = may(ctx.user, 'PUT /clusters/{name}');
  let offers = null;
  const offerSelect = async (sel) => {
    offers ??= listAll('/offers', {}, 500).catch(() => []);
    const items = await offers;
    sel.replaceChildren(h('option', { value: '' }, items.length ? 'choose an offer' : 'no offers yet: add a price sheet under Upload'),
      ...items.map((o) => h('option', { value: o.id }, DESCRIBE.offers(o))));
  };
  async function price(u, offerId, out) {
    let map = { partitions: [] };
    try {
      ({ data: map } = await get(`/clusters/${encodeURIComponent(u.cluster)}`));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
    const body = { partitions: (map.partitions || []).map((p) => Object.fromEntries(
      ['partition', 'gpu_model', 'workload_class', 'offer_id'].filter((k) => p[k] != null).map((k) => [k, p[k]]))) };
    if (map.default_class) body.default_class = map.default_class;
    if (map.description) body.description = map.description;
    const same = body.partitions.find((p) => p.partition === u.partition && (p.gpu_model ?? null) === (u.gpu_model ?? null));
    if (same) same.offer_id = offerId;
    else body.partitions.push({ partition: u.partition, ...(u.gpu_model ? { gpu_model: u.gpu_model } : {}), offer_id: offerId });
    await request('PUT', `/clusters/${encodeURIComponent(u.cluster)}`, { json: body });
    out.replaceChildren(notice('Priced: the report is shown again with it.', 'success'));
    await reload();
  }
  const priceCell = (u) => {
    const sel = h('select', { 'aria-label': `Offer that prices ${u.cluster} ${u.partition ?? ''} ${u.gpu_model ?? ''}` });
    offerSelect(sel);
    const out = h('span', { 'aria-live': 'polite' });
    const btn = h('button', { type: 'button' }, 'Price with this offer');
    btn.addEventListener('click', () => busy(btn, async () => {
      if (!sel.value) {
        out.replaceChildren(alertBox('Choose the offer whose price applies first.'));
        return;
      }
      try {
        await price(u, sel.value, out);
      } catch (e) {
        out.replaceChildren(alertBox(`Not priced: ${e.message}`, problemList(e.errors)));
      }
    }));
    return h('span', { class: 'inline-form' }, sel, btn, out);
  };
  return h('div', { class: 'unpriced', 'data-testid': 'unpriced' },
    h('p', { class: 'hint' }, canPrice
      ? 'These GPU runs have no price: their cluster does not say which offer a partition\'s GPU-hours cost. Choose the offer for each below; runs are priced from then on.'
      : 'These GPU runs have no price: their cluster does not say which offer a partition\'s GPU-hours cost. An owner sets it on this page (Usage, "Price with this offer").'),
    table([
      { label: 'Cluster', value: (u) => u.cluster },
      { label: 'Partition', value: (u) => u.partition ?? '' },
      { label: 'GPU model', value: (u) => u.gpu_model ?? '' },
      { label: 'Runs', class: 'num', value: (u) => number(u.runs, 0) },
      { label: 'GPU-hours', class: 'num', value: (u) => number(u.gpu_hours) },
      ...(canPrice ? [{ label: 'Price', value: priceCell }] : []),
    ], unpriced, { caption: 'GPU runs without a price' }));
}

// GET /reports/usage: where GPU hours go and how often runs fail, by the chosen groups.
function usage(ctx) {
  const groups = [['team', 'team'], ['workload_class', 'class'], ['cluster', 'cluster'], ['state', 'state']];
  const boxes = groups.map(([key, label]) => {
    const box = h('input', { type: 'checkbox', value: key, checked: key === 'team' || key === 'workload_class', id: `usage-${key}` });
    return { key, box, el: h('label', { class: 'check', for: `usage-${key}` }, box, ` ${label}`) };
  });
  const from = field('Submitted from', h('input', { type: 'date' }), { name: 'from' });
  const to = field('Submitted before', h('input', { type: 'date' }), { name: 'to' });
  const bucket = field('Over time, per', select([['', 'week (day when the runs span under 3 weeks)'], ['day', 'day'], ['week', 'week'], ['month', 'month']]), { name: 'bucket', hint: 'a run counts in the period it started in' });
  const results = h('div', { class: 'list-results', 'aria-live': 'polite' });
  const apply = h('button', { type: 'submit' }, 'Show');
  const form = h('form', { class: 'filters', 'aria-label': 'Usage report' },
    h('fieldset', { class: 'checks' }, h('legend', null, 'Group by'), boxes.map((b) => b.el)), from.wrap, to.wrap, bucket.wrap, apply);
  const utc = (d) => (d ? `${d}T00:00:00Z` : '');
  async function overTime() {
    try {
      const range = { from: utc(from.control.value), to: utc(to.control.value) };
      let { data } = await get('/reports/usage/series', { ...range, bucket: bucket.control.value || 'week' });
      if (!bucket.control.value && data.buckets.length < 3) ({ data } = await get('/reports/usage/series', { ...range, bucket: 'day' }));
      return usageOverTimeChart(data) || h('p', { class: 'hint' }, 'No GPU run started in this period: nothing to plot over time.');
    } catch (e) {
      return alertBox(`Usage over time unavailable: ${e.message}`, problemList(e.errors));
    }
  }
  let loads = 0;
  async function load() {
    const chosen = boxes.filter((b) => b.box.checked).map((b) => b.key);
    try {
      const { data } = await get('/reports/usage', { group_by: chosen.join(','), from: from.control.value, to: to.control.value });
      const q = (r, k) => (r.queue_wait_s && r.queue_wait_s[k] != null ? duration(r.queue_wait_s[k]) : '');
      results.replaceChildren(table([
        ...chosen.map((k) => ({ label: groups.find((g) => g[0] === k)[1], value: (r) => String(r[k] ?? '') })),
        { label: 'Runs', class: 'num', value: (r) => number(r.runs, 0) },
        { label: 'GPU-hours', class: 'num', value: (r) => number(r.gpu_hours) },
        { label: 'Failure rate', class: 'num', value: (r) => (r.failure_rate != null ? percent(r.failure_rate) : '') },
        { label: 'Failed GPU-hours', class: 'num', value: (r) => (r.failed_gpu_hours_share != null ? percent(r.failed_gpu_hours_share) : '') },
        { label: 'Queue p50 / p90', class: 'num', value: (r) => (q(r, 'p50') ? `${q(r, 'p50')} / ${q(r, 'p90')}` : '') },
        { label: 'Never started', class: 'num', value: (r) => number(r.never_started, 0) },
        { label: 'GPU util.', class: 'num', value: (r) => (r.mean_gpu_utilization != null ? percent(r.mean_gpu_utilization) : '') },
        { label: 'Cost', class: 'num', value: (r) => (r.cost && typeof r.cost === 'object' ? money(r.cost.amount ?? r.cost.total, r.cost.currency) : (r.cost != null ? number(r.cost) : '')) },
        { label: 'Spent on runs that did not complete', class: 'num', value: (r) => (r.cost && r.cost.failed_amount != null ? `${money(r.cost.failed_amount, r.cost.currency)}${r.cost.failed_share != null ? ` (${percent(r.cost.failed_share)})` : ''}` : '') },
      ], data.groups || [], { caption: 'Job accounting by group', empty: emptyNext(ctx, 'No runs in this period: widen the dates.', 'POST /runs', 'Upload job accounting (Slurm sacct)') }),
      (data.unpriced || []).length ? unpricedView(data.unpriced, ctx, load) : '',
      (chosen.includes('team') && usageChart(data.groups)) || '',
      await overTime());
    } catch (e) {
      results.replaceChildren(alertBox(`Usage report unavailable: ${e.message}`, problemList(e.errors)));
    }
    loads += 1;
    results.dataset.loads = String(loads);
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(apply, load);
  });
  return { el: h('section', { class: 'listing', 'data-list': '/reports/usage' }, form, results), load };
}

export async function renderEvidence(root, ctx) {
  const tab = TABS.some(([k]) => k === ctx.params[0]) ? ctx.params[0] : 'workloads';
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Evidence' }, h('ul', null, TABS
    .filter(([k]) => k !== 'upload' || may(ctx.user, 'POST /runs') || may(ctx.user, 'POST /offers'))
    .map(([k, label]) => h('li', null, h('a', { href: `#/evidence/${k}`, 'aria-current': k === tab ? 'page' : null }, label)))));
  root.append(h('h2', null, 'Evidence'), tabs);
  if (tab === 'upload' && tabs.querySelector('a[href="#/evidence/upload"]')) {
    root.append(uploads(ctx));
    return;
  }
  const list = tab === 'benchmarks' && ctx.params[1] ? benchmarkView(ctx.params[1])
    : tab === 'uploads' && ctx.params[1] ? uploadView(ctx.params[1])
    : { workloads, offers, benchmarks, runs, usage, uploads: uploadsList }[tab](ctx);
  root.append(list.el);
  await list.load();
}

