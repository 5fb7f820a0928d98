/**
 * The layout checks itself: the import graph of src/ and webview/ has no cycle (type imports count: a cycle closed
 * by `import type` still means two modules own parts of each other); the store library imports nothing above it;
 * `src/extension/core/` imports no feature folder, and the feature folders that import each other are the few
 * docs/architecture.md names with their reason; the layer table of docs/architecture.md is a map at file level (every
 * file a row names is in that row's folder, every source file is named by its folder's row); and test/unit/ mirrors
 * the source folders.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
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

/** A row of the "## Layers" table: its folders, and the file names it gives (backticked, with an extension). */
export interface LayerRow {
  folders: string[];
  names: string[];
  /** The row covers its folder's files without naming each ("one module per query family …"). */
  onePerModule: boolean;
}

const FILE_NAME = /^[\w./-]+\.(?:ts|mts|mjs|css|json|md)$/;
const REPO_PATH = /^(?:src|webview|test|scripts|docs|dist)\//;

function layerTable(doc: string): LayerRow[] {
  const section = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [, first = '', ...rest] = l.split('|');
      const text = rest.join('|');
      return {
        folders: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, '')),
        // A path from the repository's root (`test/…`, `dist/…`) is no file of the folder: the check of the docs' paths
        // above covers the ones that should exist.
        names: [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((n) => FILE_NAME.test(n) && !REPO_PATH.test(n)),
        onePerModule: /\bone module per\b/.test(text),
      };
    });
}

/** The files a layer row names that are not in its folder: a map that names a file elsewhere sends a reader astray. */
export function misplacedNames(rows: LayerRow[], exists: (path: string) => boolean): string[] {
  return rows.flatMap((row) =>
    row.names.filter((n) => !row.folders.some((f) => exists(join(f, n)))).map((n) => `${row.folders.join(', ')}: ${n}`),
  );
}

/** The source files no row names, in a folder whose row does not say it has "one module per …". */
export function unnamedFiles(rows: LayerRow[], sourceFiles: string[]): string[] {
  return sourceFiles.filter((file) => {
    const row = rows.find((r) => r.folders.includes(dirname(file)));
    return !row || (!row.onePerModule && !row.names.includes(basename(file)));
  });
}

/** The pairs of folders (as `folderOf` names them) that import each other, each once as `a ↔ b` with a < b. */
export function mutualFolderPairs(graph: Map<string, string[]>, folderOf: (file: string) => string | undefined): string[] {
  const edges = new Set<string>();
  for (const [file, deps] of graph) {
    const from = folderOf(file);
    for (const dep of deps) {
      const to = folderOf(dep);
      if (from !== undefined && to !== undefined && from !== to) edges.add(`${from} → ${to}`);
    }
  }
  return [...edges]
    .map((e) => e.split(' → ') as [string, string])
    .filter(([a, b]) => a < b && edges.has(`${b} → ${a}`))
    .map(([a, b]) => `${a} ↔ ${b}`)
    .sort();
}

/** The feature folder of a module of the extension (`src/extension/<folder>/…`); undefined for its root and elsewhere. */
function featureOf(file: string): string | undefined {
  return /^src\/extension\/([^/]+)\//.exec(file)?.[1];
}

/**
 * The pairs of feature folders docs/architecture.md allows to import each other: the list right after the paragraph
 * that starts "**Feature folders that import each other.**", one `- \`a\` ↔ \`b\`: reason` item each (a reason is
 * required). No list there: no pair is allowed.
 */
export function documentedPairs(doc: string): string[] {
  const start = doc.indexOf('**Feature folders that import each other.**');
  assert.ok(start >= 0, 'docs/architecture.md has no "**Feature folders that import each other.**" paragraph');
  const lines = doc.slice(start).split('\n');
  const items: string[] = [];
  // After the paragraph's blank line, the list runs until a line that neither starts an item nor continues one.
  for (const l of lines.slice(lines.findIndex((line) => line.trim() === '') + 1)) {
    if (l.startsWith('- ')) items.push(l);
    else if (!(items.length > 0 && l.startsWith('  '))) break;
  }
  return items
    .map((l) => {
      const m = /^- `([\w-]+)` ↔ `([\w-]+)`: \S/.exec(l);
      assert.ok(m, `docs/architecture.md: not a pair with its reason: ${l}`);
      return [m[1]!, m[2]!].sort().join(' ↔ ');
    })
    .sort();
}

/**
 * Folders of test/unit/ that mirror no source folder, and why they exist. Every other folder `test/unit/<path>` tests
 * `src/<path>` (or `webview/<path>` for `test/unit/webview/<path>`).
 */
const TEST_FOLDERS_OF_NO_SOURCE: Record<string, string> = {
  'test/unit/bench': "the benchmarks' generated files and plans, in scripts/bench/",
  'test/unit/l10n': 'the translation bundles (l10n/, package.nls*.json) against every localized call',
  'test/unit/package': 'the store as an installed npm package; outside test/unit/store so that it installs once, not per Node',
  'test/unit/store/differential': "the SDK's own sessions against ours, run for run: no one source folder",
};

/** The source folder a test/unit/ folder mirrors. */
function mirroredSource(testFolder: string): string {
  const path = relative(join('test', 'unit'), testFolder);
  return path === 'webview' || path.startsWith('webview/') ? path : join('src', path);
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

  describe('imports between layers and folders', () => {
    const graph = new Map(sources.map((f) => [f, importsOf(f)]));

    it('keeps the store library below its users: src/store imports nothing from src/cli, src/agents, src/extension or webview', () => {
      const upward = [...graph]
        .filter(([f]) => f.startsWith('src/store/'))
        .flatMap(([f, deps]) => deps.filter((d) => /^(?:src\/(?:cli|agents|extension)|webview)\//.test(d)).map((d) => `${f} → ${d}`));
      assert.deepEqual(upward, [], 'the store is a library: a program that uses it lives above it (src/cli, src/agents)');
    });

    it('keeps src/extension/core/ a base: it imports no feature folder and not the composition root', () => {
      const fromCore = [...graph]
        .filter(([f]) => featureOf(f) === 'core')
        .flatMap(([f, deps]) => deps.filter((d) => d.startsWith('src/extension/') && featureOf(d) !== 'core').map((d) => `${f} → ${d}`));
      assert.deepEqual(fromCore, [], "core/ is what every feature uses: what needs a feature's types belongs to that feature");
    });

    it('finds the folders that import each other (the check itself)', () => {
      const g = new Map([
        ['src/extension/a/x.ts', ['src/extension/b/y.ts', 'src/extension/core/z.ts']],
        ['src/extension/b/y.ts', ['src/extension/a/w.ts']],
        ['src/extension/core/z.ts', []],
        ['src/extension/c/v.ts', ['src/extension/a/x.ts', 'src/extension/c/u.ts']],
        ['src/extension/extension.ts', ['src/extension/a/x.ts']],
      ]);
      assert.deepEqual(mutualFolderPairs(g, featureOf), ['a ↔ b']);
    });

    it('reads the pairs docs/architecture.md allows (the check itself)', () => {
      const para = '**Feature folders that import each other.** At most three,\nlisted here.\n\n';
      assert.deepEqual(
        documentedPairs(`${para}- \`tree\` ↔ \`conversation\`: nodes as arguments,\n  and usage.\n- \`a\` ↔ \`b\`: why.\n\n- later\n`),
        ['a ↔ b', 'conversation ↔ tree'],
      );
      assert.deepEqual(documentedPairs(`${para}## Next\n\n- \`a\` ↔ \`b\`: another list.\n`), []);
      assert.throws(() => documentedPairs(`${para}- \`a\` ↔ \`b\`\n`), /not a pair with its reason/);
    });

    it('lets at most 3 pairs of feature folders import each other, each named with its reason in docs/architecture.md', () => {
      const pairs = mutualFolderPairs(graph, featureOf);
      const documented = documentedPairs(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));
      assert.deepEqual(
        pairs,
        documented,
        'the pairs of feature folders that import each other, against the ones docs/architecture.md names',
      );
      assert.ok(pairs.length <= 3, `${pairs.length} pairs of feature folders import each other: ${pairs.join(', ')}`);
    });
  });

  describe('the map in docs/architecture.md, at file level', () => {
    const rows = layerTable(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));

    it('reads the rows of the layer table (the check itself)', () => {
      const table = layerTable(
        '## Layers\n\n| folder | what | files |\n|---|---|---|\n| `src/a/` | Made into `dist/a.js`, one module per family. | `x.ts` (the `X` class), `sub/y.mjs` |\n\n## Next\n| `src/b/` | | `z.ts` |\n',
      );
      assert.deepEqual(table, [{ folders: ['src/a'], names: ['x.ts', 'sub/y.mjs'], onePerModule: true }]);
      const plain: LayerRow = { folders: ['src/b'], names: ['z.ts'], onePerModule: false };
      assert.deepEqual(
        misplacedNames([plain], (p) => p === 'src/b/z.ts'),
        [],
      );
      assert.deepEqual(
        misplacedNames([plain], () => false),
        ['src/b: z.ts'],
      );
      assert.deepEqual(unnamedFiles([plain, table[0]!], ['src/b/z.ts', 'src/b/w.ts', 'src/a/q.ts', 'src/c/r.ts']), [
        'src/b/w.ts',
        'src/c/r.ts',
      ]);
    });

    it('names only files that are in the folder of their row', () => {
      assert.ok(rows.length > 40, `read ${rows.length} rows`);
      assert.deepEqual(
        misplacedNames(rows, (p) => existsSync(join(root, p)) && statSync(join(root, p)).isFile()),
        [],
      );
    });

    it('names every source file of src/ and webview/ in its folder\'s row, unless the row says "one module per …"', () => {
      const code = [...files('src'), ...files('webview')].filter((f) => CODE.test(f));
      const unnamed = unnamedFiles(rows, code);
      // The whole list in the message: assert's diff of a long array skips lines.
      assert.deepEqual(unnamed, [], `source files the layer table of docs/architecture.md does not name:\n${unnamed.join('\n')}`);
    });
  });

  it('mirrors the source folders in test/unit/', () => {
    const testFolders = readdirSync(join(root, 'test', 'unit'), { recursive: true, encoding: 'utf8' })
      .map((f) => join('test', 'unit', f))
      .filter((f) => statSync(join(root, f)).isDirectory());
    const unmirrored = testFolders.filter((f) => !(f in TEST_FOLDERS_OF_NO_SOURCE) && !existsSync(join(root, mirroredSource(f))));
    assert.deepEqual(unmirrored, [], 'test folders that name no source folder (a store suite goes under test/unit/store/)');
    assert.deepEqual(
      Object.keys(TEST_FOLDERS_OF_NO_SOURCE).filter((f) => !testFolders.includes(f)),
      [],
      'exceptions for test folders that no longer exist',
    );
  });
});
