/**
 * `npm install` on a fresh machine must build better-sqlite3 (the unit phase and every Node-20 tool need it), and npm
 * now skips dependencies' install scripts that package.json's `allowScripts` does not approve. These tests fail when
 * the addon is missing after install, and when a dependency's install script is left unreviewed (a new dependency
 * whose script would silently not run).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const requireHere = createRequire(__filename);

describe('install scripts (npm allowScripts)', () => {
  it("better-sqlite3's native addon was built by npm install, and loads", () => {
    const pkg = dirname(requireHere.resolve('better-sqlite3/package.json'));
    const addon = join(pkg, 'build', 'Release', 'better_sqlite3.node');
    assert.ok(existsSync(addon), `${addon} is missing: npm install did not run better-sqlite3's install script`);
    const Database = requireHere('better-sqlite3') as new (path: string) => { prepare(sql: string): { get(): unknown }; close(): void };
    const db = new Database(':memory:');
    try {
      assert.deepEqual(db.prepare('SELECT 1 + 1 AS two').get(), { two: 2 });
    } finally {
      db.close();
    }
  });

  it('package.json approves the install scripts the project needs and denies the others, explicitly', () => {
    const allow = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }).allowScripts;
    assert.deepEqual(allow, { 'better-sqlite3': true, esbuild: true, keytar: false, '@vscode/vsce-sign': false });
  });

  it('no installed dependency has an install script that allowScripts leaves unreviewed', function () {
    const r = spawnSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    if (/Unknown command|not a valid npm command/i.test(`${r.stdout}${r.stderr}`)) {
      console.log(
        `    (skipped: this npm (${spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout.trim()}) has no install-scripts command)`,
      );
      this.skip();
    }
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /No packages with unreviewed install scripts\./, r.stdout);
  });
});
