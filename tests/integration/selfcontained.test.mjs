// The repository is self-contained: a clone with nothing beside it can run every test and read
// every contract. (1) No file refers to the shared folder of the development machines (by
// relative or absolute path, or through the old CMake variable; see SHARED) — except the
// README's note on the optional fresh-machine check. (2) Every relative link in README.md, docs/*.md and tests/data/README.md
// names a file of the repository, and a link with #anchor names a heading of that file.
// (3) tests/data holds exactly the files of tests/data/SHA256SUMS, byte for byte: published
// vectors and real tool outputs are never "fixed" (an editor trimming the trailing spaces of a
// dmon sample would change what the readers are tested on).
// No database, no binary: it reads files only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from './lib/harness.mjs';

// Built from pieces so that this file does not match itself.
const SHARED = new RegExp(['\\.\\./' + 'shared', '/work/' + 'shared', 'CAPLEDGER_' + 'SHARED_DIR'].join('|'));
const SKIP_DIRS = new Set(['.git', 'node_modules', 'var', 'test-results']);

// The tracked files when this is a git checkout, else every file (a tarball of the project).
function projectFiles() {
  const git = spawnSync('git', ['ls-files', '-z'], { cwd: projectDir, encoding: 'utf8' });
  if (git.status === 0 && git.stdout.length > 0) return git.stdout.split('\0').filter(Boolean);
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(projectDir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('build')) walk(r);
      } else if (e.isFile()) out.push(r);
    }
  };
  walk('');
  return out;
}

// Lines that mention the shared folder, as "file:line: text"; the README may name the
// optional fresh-machine check (and nothing else there).
export function sharedReferences(files, read) {
  const found = [];
  for (const rel of files) {
    const text = read(rel);
    if (text === null || text.includes('\0')) continue; // unreadable or binary
    text.split('\n').forEach((line, i) => {
      if (!SHARED.test(line)) return;
      if (rel === 'README.md' && line.includes('fresh-debian-check')) return;
      found.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

// GitHub's heading anchors: lower case, punctuation dropped (letters, digits, spaces, '-' and
// '_' kept), spaces to '-', repeats numbered -1, -2, ….
export function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  for (const line of stripFences(markdown).split('\n')) {
    const h = line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!h) continue;
    const base = h[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) || 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

// Fenced blocks hold examples, not headings or links; inline code holds no links either.
function stripFences(markdown) {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}
function stripCode(markdown) {
  return stripFences(markdown).replace(/`[^`\n]*`/g, '');
}

// Broken relative links of one Markdown file (rel, relative to the project), as messages.
export function brokenLinks(rel, read, exists) {
  const text = read(rel);
  const broken = [];
  const dir = path.posix.dirname(rel);
  for (const m of stripCode(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [file, anchor] = target.split('#');
    const resolved = file ? path.posix.normalize(path.posix.join(dir, decodeURI(file))) : rel;
    if (resolved.startsWith('..')) {
      broken.push(`${rel}: ${target} points outside the repository`);
      continue;
    }
    if (!exists(resolved)) {
      broken.push(`${rel}: ${target} → ${resolved} does not exist`);
      continue;
    }
    if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor)) {
      broken.push(`${rel}: ${target} → no heading #${anchor} in ${resolved}`);
    }
  }
  return broken;
}

const readProject = (rel) => {
  try {
    return fs.readFileSync(path.join(projectDir, rel), 'utf8');
  } catch {
    return null;
  }
};
const existsInProject = (rel) => fs.existsSync(path.join(projectDir, rel));

test('no file refers to the shared folder beside the project', () => {
  const files = projectFiles();
  assert.ok(files.length > 100, `only ${files.length} files found`);
  assert.ok(files.includes('tests/data/README.md'), 'tests/data is part of the repository');
  assert.deepEqual(sharedReferences(files, readProject), []);
});

test('every relative link of README.md, docs/*.md and tests/data/README.md resolves', () => {
  const docs = fs.readdirSync(path.join(projectDir, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const pages = ['README.md', 'tests/data/README.md', ...docs];
  for (const need of ['docs/cost-model.md', 'docs/ledger-format.md', 'docs/api-rules.md']) {
    assert.ok(pages.includes(need), `${need} is missing`);
  }
  const broken = pages.flatMap((p) => brokenLinks(p, readProject, existsInProject));
  assert.deepEqual(broken, []);
  // The README links each contract.
  const readme = readProject('README.md');
  for (const need of ['docs/cost-model.md', 'docs/ledger-format.md', 'docs/api-rules.md']) {
    assert.ok(readme.includes(`](${need}`), `README.md does not link ${need}`);
  }
});

test('tests/data holds exactly the files of its SHA256SUMS, byte for byte', () => {
  const dataDir = path.join(projectDir, 'tests', 'data');
  const listed = new Map();
  for (const line of fs.readFileSync(path.join(dataDir, 'SHA256SUMS'), 'utf8').split('\n')) {
    if (!line) continue;
    const m = line.match(/^([0-9a-f]{64}) [ *](.+)$/);
    assert.ok(m, `SHA256SUMS: not "<sha256>  <file>": ${line}`);
    listed.set(m[2], m[1]);
  }
  assert.ok(listed.size > 500, `only ${listed.size} files listed`);
  const present = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(dataDir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else present.push(r);
    }
  };
  walk('');
  const problems = [];
  for (const rel of present) {
    if (rel === 'SHA256SUMS' || rel === 'README.md') continue;
    const want = listed.get(rel);
    if (!want) {
      problems.push(`${rel}: not in SHA256SUMS (add it with its provenance)`);
      continue;
    }
    const got = createHash('sha256').update(fs.readFileSync(path.join(dataDir, rel))).digest('hex');
    if (got !== want) problems.push(`${rel}: changed (SHA-256 ${got})`);
    listed.delete(rel);
  }
  for (const rel of listed.keys()) problems.push(`${rel}: listed but missing`);
  assert.deepEqual(problems, []);
});

// The checks themselves catch what they are for (on made-up files, so this cannot pass vacuously).
test('the checks find a shared reference, a missing file and a missing anchor', () => {
  const files = {
    'a.c': 'x\n#define D "../' + 'shared/spec"\n',
    'README.md': 'run ../' + 'shared/tools/fresh-debian-check\nsee ../' + 'shared/spec/X.md\n',
    'docs/x.md': '# Title\n## The approver\'s signature (Ed25519)\n[a](y.md) [b](x.md#nope) [c](#the-approvers-signature-ed25519) [d](../../etc) `[e](z.md)` [f](https://example.org/x)\n',
    'docs/y.md': '# Y\n',
  };
  const read = (rel) => (rel in files ? files[rel] : null);
  assert.deepEqual(sharedReferences(Object.keys(files), read), [
    'a.c:2: #define D "../' + 'shared/spec"',
    'README.md:2: see ../' + 'shared/spec/X.md',
  ]);
  assert.deepEqual(brokenLinks('docs/x.md', read, (rel) => rel in files), [
    'docs/x.md: x.md#nope → no heading #nope in docs/x.md',
    'docs/x.md: ../../etc points outside the repository',
  ]);
  assert.deepEqual([...anchorsOf('# A b\n## A b\n### `code` + More: ok\n```\n# not\n```\n')], ['a-b', 'a-b-1', 'code--more-ok']);
});
