// Number formatting with units. Money under 0.1 keeps three significant digits so that a cost
// per inference request ($0.00104) does not print as $0.00.

const LOCALE = 'en-US';

export function money(value, currency = 'USD') {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const opts = { style: 'currency', currency };
  if (abs !== 0 && abs < 0.1) {
    opts.maximumSignificantDigits = 3;
  } else {
    opts.minimumFractionDigits = abs >= 10000 ? 0 : 2;
    opts.maximumFractionDigits = abs >= 10000 ? 0 : 2;
  }
  try {
    return new Intl.NumberFormat(LOCALE, opts).format(value);
  } catch {
    return `${number(value)} ${currency}`;
  }
}

export function number(value, maxFraction = 2) {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs !== 0 && abs < 0.01) return value.toPrecision(3);
  return new Intl.NumberFormat(LOCALE, { maximumFractionDigits: abs >= 1000 ? 0 : maxFraction }).format(value);
}

export function percent(fraction, digits = 0) {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return 'n/a';
  return new Intl.NumberFormat(LOCALE, { style: 'percent', maximumFractionDigits: digits }).format(fraction);
}

// 420690 s → "4.9 days"; 72272 s → "20.1 h"; 300 s → "5 min".
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return 'n/a';
  if (seconds < 90) return `${number(seconds, 0)} s`;
  if (seconds < 5400) return `${number(seconds / 60, 0)} min`;
  if (seconds < 172800) return `${number(seconds / 3600, 1)} h`;
  return `${number(seconds / 86400, 1)} days`;
}

export function dateTime(text) {
  if (!text) return '';
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) return String(text);
  return d.toISOString().replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

export function shortId(id) {
  const s = String(id ?? '');
  return s.length > 12 ? `${s.slice(0, 8)}…` : s;
}

// Non-empty trimmed lines of a textarea (lists in forms are one item per line).
export function splitLines(text) {
  return text.split('\n').map((s) => s.trim()).filter(Boolean);
}

export function ratio(x) {
  return Number.isFinite(x) ? `${number(x, 2)}×` : 'n/a';
}
