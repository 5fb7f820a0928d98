/**
 * The manifest's user-facing strings are localized: every title, name, welcome text and setting description is a
 * `%key%` with its English text in package.nls.json and its Korean text in package.nls.ko.json, and neither file
 * keeps a key the manifest no longer uses (a stale translation would silently never show).
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');
const read = (file: string): unknown => JSON.parse(readFileSync(join(root, file), 'utf8'));
const manifest = read('package.json') as Record<string, unknown> & { contributes: Record<string, unknown> };
const en = read('package.nls.json') as Record<string, string>;
const ko = read('package.nls.ko.json') as Record<string, string>;

/** Every `%key%` string anywhere in the manifest. */
function nlsKeys(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    const m = /^%([^%]+)%$/.exec(value);
    if (m) found.add(m[1]!);
  } else if (Array.isArray(value)) for (const v of value) nlsKeys(v, found);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) nlsKeys(v, found);
  return found;
}

/** The manifest's user-facing fields (where VS Code shows the text), with their values. */
function userFacing(): [string, unknown][] {
  const c = manifest.contributes as {
    commands?: Record<string, unknown>[];
    views?: Record<string, Record<string, unknown>[]>;
    viewsContainers?: Record<string, Record<string, unknown>[]>;
    viewsWelcome?: Record<string, unknown>[];
    submenus?: Record<string, unknown>[];
    configuration?: { title?: string; properties: Record<string, Record<string, unknown>> };
  };
  const out: [string, unknown][] = [
    ['displayName', manifest['displayName']],
    ['description', manifest['description']],
  ];
  for (const cmd of c.commands ?? [])
    for (const f of ['title', 'shortTitle', 'category']) if (f in cmd) out.push([`${String(cmd['command'])}.${f}`, cmd[f]]);
  for (const list of Object.values(c.viewsContainers ?? {})) for (const v of list) out.push([`container ${String(v['id'])}`, v['title']]);
  for (const list of Object.values(c.views ?? {}))
    for (const v of list) for (const f of ['name', 'contextualTitle']) if (f in v) out.push([`view ${String(v['id'])}.${f}`, v[f]]);
  for (const w of c.viewsWelcome ?? []) out.push([`welcome ${String(w['view'])}`, w['contents']]);
  for (const s of c.submenus ?? []) out.push([`submenu ${String(s['id'])}`, s['label']]);
  if (c.configuration) {
    out.push(['configuration.title', c.configuration.title]);
    for (const [key, prop] of Object.entries(c.configuration.properties))
      for (const f of ['description', 'markdownDescription', 'enumDescriptions', 'markdownEnumDescriptions', 'deprecationMessage'])
        if (f in prop) out.push([`${key}.${f}`, prop[f]]);
  }
  return out;
}

/** What must survive translation: command links, setting references, `{0}` placeholders, code spans. */
const invariants = (text: string): string[] =>
  [...text.matchAll(/\(command:[^)]+\)|#agentSessions\.[\w.]+#|\{\d+\}|`[^`]+`/g)].map((m) => m[0]).sort();

describe('package.nls.json and package.nls.ko.json', () => {
  it('has no plain user-facing text left in package.json: each is a %key%', () => {
    const plain = userFacing()
      .flatMap(([where, v]) => (Array.isArray(v) ? v.map((x, i) => [`${where}[${i}]`, x]) : [[where, v]]))
      .filter(([, v]) => typeof v === 'string' && !/^%[^%]+%$/.test(v))
      .map(([where, v]) => `${String(where)}: ${String(v)}`);
    assert.deepEqual(plain, []);
  });

  it('has every %key% of the manifest in English and in Korean, and no unused key', () => {
    const used = [...nlsKeys(manifest)].sort();
    assert.deepEqual(Object.keys(en).sort(), used, 'package.nls.json keys = the keys package.json uses');
    assert.deepEqual(Object.keys(ko).sort(), used, 'package.nls.ko.json keys = the keys package.json uses');
  });

  it('keeps every Korean text non-empty, with the same command links, setting references and code spans', () => {
    for (const [key, text] of Object.entries(en)) {
      const translated = ko[key];
      assert.ok(translated?.trim(), `${key} has a Korean text`);
      assert.deepEqual(invariants(translated ?? ''), invariants(text), `${key}: links, references and code survive translation`);
    }
  });
});
