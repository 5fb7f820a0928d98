/**
 * The layout checks itself: the import graph of src/ and webview/ has no cycle (type imports count: a cycle closed
 * by `import type` still means two modules own parts of each other), and docs/architecture.md's layer table names
 * every folder that holds code, and only folders that exist.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..');
const CODE = /\.(ts|mts|css)$/;

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(join(root, f)).isFile());
}

/** Every relative import of `file` (static, type-only, re-exports, dynamic `import()`), resolved to a repo path. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  const out: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = resolve(root, dirname(file), fileName);
    const hit = [`${base}.ts`, join(base, 'index.ts'), base].find((p) => existsSync(p) && statSync(p).isFile());
    if (hit) out.push(relative(root, hit));
  }
  return out;
}

/** The strongly connected components with more than one module (or a module importing itself): Tarjan's algorithm. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) visit(v);
  return cycles;
}

/** The folders named in the first column of the "## Layers" table of docs/architecture.md. */
function layerRows(): string[][] {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => [...l.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, '')));
}

describe('repository layout', () => {
  const sources = [...files('src'), ...files('webview')].filter((f) => f.endsWith('.ts'));

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    assert.deepEqual(importCycles(graph), [['a', 'b', 'c']]);
    assert.deepEqual(
      importCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
      [],
    );
  });

  it('has no import cycle in src/ and webview/, type imports included', () => {
    const graph = new Map(sources.map((f) => [f, importsOf(f)]));
    assert.ok(graph.size > 100, `read ${graph.size} modules`);
    assert.deepEqual(importCycles(graph), []);
  });

  it('names only files that exist in the README and docs/ (a moved file takes its mentions along)', () => {
    const docs = ['README.md', 'webview/README.md', ...files('docs').filter((f) => f.endsWith('.md'))];
    const missing = docs.flatMap((doc) =>
      [
        ...readFileSync(join(root, doc), 'utf8').matchAll(
          /(?<![\w/.])((?:src\/(?:extension|store|shared|agents)|webview|test|scripts)\/[\w./-]+\.(?:ts|mts|mjs|css))/g,
        ),
      ]
        .map((m) => m[1]!)
        .filter((path) => !existsSync(join(root, path)))
        .map((path) => `${doc}: ${path}`),
    );
    assert.deepEqual(missing, []);
  });

  it('names every code folder of src/ and webview/ in the layer table of docs/architecture.md, and no other', () => {
    const named = new Set(layerRows().flat());
    const folders = new Set([...files('src'), ...files('webview')].filter((f) => CODE.test(f)).map((f) => dirname(f)));
    assert.deepEqual(
      [...folders].filter((f) => !named.has(f)).sort(),
      [],
      'folders without a row in the layer table of docs/architecture.md',
    );
    assert.deepEqual([...named].filter((f) => !existsSync(join(root, f))).sort(), [], 'rows of the layer table that name no folder');
  });
});
