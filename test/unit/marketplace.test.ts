/**
 * The manifest and package as the Marketplace and VS Code see them: the lowest VS Code whose extension host has
 * node:sqlite, the listing fields people search and click, a real 128×128 icon, and a VSIX with no native addon
 * (VS Code desktop could not load one built here, so shipping it would only add weight and a failing require).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown> & {
  engines: { vscode: string };
  categories: string[];
  keywords: string[];
  icon: string;
  galleryBanner: { color: string; theme: string };
  repository: { url: string };
  bugs: { url: string };
  homepage: string;
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe('Marketplace manifest and package', () => {
  it('requires VS Code 1.101 or later: the first whose extension host has node:sqlite (1.100 runs Node 20)', () => {
    const m = /^\^1\.(\d+)\.\d+$/.exec(pkg.engines.vscode);
    assert.ok(m, `engines.vscode is a caret range: ${pkg.engines.vscode}`);
    assert.equal(Number(m[1]), 101);
    // The API types must not promise more than the engine range gives.
    const types = /1\.(\d+)/.exec(pkg.devDependencies['@types/vscode'] ?? '');
    assert.ok(types && Number(types[1]) <= 101, `@types/vscode ${pkg.devDependencies['@types/vscode']} fits engines.vscode`);
  });

  it('has the listing fields: categories, keywords, repository, bugs, homepage, banner', () => {
    const allowed = new Set([
      'AI',
      'Chat',
      'Azure',
      'Data Science',
      'Debuggers',
      'Education',
      'Extension Packs',
      'Formatters',
      'Keymaps',
      'Language Packs',
      'Linters',
      'Machine Learning',
      'Notebooks',
      'Programming Languages',
      'SCM Providers',
      'Snippets',
      'Testing',
      'Themes',
      'Visualization',
      'Other',
    ]);
    assert.ok(pkg.categories.length > 0 && pkg.categories.every((c) => allowed.has(c)), `categories: ${pkg.categories.join(', ')}`);
    assert.ok(pkg.categories.includes('AI'));
    for (const word of ['openai', 'agents', 'sqlite', 'session']) assert.ok(pkg.keywords.includes(word), `keyword ${word}`);
    assert.ok(pkg.keywords.length <= 30, 'the Marketplace takes at most 30 keywords');
    assert.match(pkg.repository.url, /^https:\/\/github\.com\//, 'a GitHub URL: vsce rewrites the README images against it');
    assert.match(pkg.bugs.url, /^https:\/\//);
    assert.match(pkg.homepage, /^https:\/\//);
    assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
    assert.ok(['dark', 'light'].includes(pkg.galleryBanner.theme));
  });

  it('has a 128×128 PNG icon', () => {
    const png = readFileSync(join(root, pkg.icon));
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
    // IHDR: width and height are the first two big-endian words of the first chunk's data.
    assert.equal(png.readUInt32BE(16), 128);
    assert.equal(png.readUInt32BE(20), 128);
  });

  it('packages without escape hatches: no --allow-missing-repository, no --skip-license', () => {
    assert.doesNotMatch(pkg.scripts.package ?? '', /allow-missing-repository|skip-license/);
    assert.ok(existsSync(join(root, 'LICENSE')));
  });

  it('puts the bundles and media in the VSIX, and no native addon or node_modules', function () {
    this.timeout(60_000);
    const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
    const r = spawnSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { cwd: root, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const files = r.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    for (const f of [
      'package.json',
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      'dist/extension.js',
      'dist/extensionMain.js',
      // The MCP server's CLI: its loader and the CLI it loads through V8's code cache (src/cli/cliLoader.ts).
      'dist/cli.js',
      'dist/cliMain.js',
      'media/icon.png',
    ])
      assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
    assert.deepEqual(
      files.filter((f) => f.endsWith('.node') || f.startsWith('node_modules/')),
      [],
    );
  });
});
