/**
 * Canary: the session store works inside the real extension host (a native addon built for this Node ABI), and
 * the driver choice falls back as designed when better-sqlite3 cannot load.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, resolveDriver } from '../../src/store';
import { forgetLoadedDrivers } from '../../src/store/drivers/openDatabase';

const fixtures = process.env.ASI_FIXTURES ?? join(__dirname, '..', '..', 'test', 'fixtures');

describe('store canary (extension host)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'asi-canary-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs inside a real VS Code extension host', () => {
    assert.ok(vscode.version, 'vscode API available');
    assert.equal(typeof vscode.commands.executeCommand, 'function');
  });

  it('opens a Python-written fixture with better-sqlite3', async () => {
    assert.equal(resolveDriver(), 'better-sqlite3');
    const path = join(dir, 'ref-basic.db');
    copyFileSync(join(fixtures, 'conformance', 'ref-basic.db'), path);
    const s = new AdvancedSQLiteSession({ sessionId: 'basic_session', dbPath: path });
    try {
      const items = await s.getItems();
      assert.equal(items.length, 4);
      assert.deepEqual((await s.listBranches()).map((b) => b.branchId), ['main']);
    } finally {
      s.close();
    }
  });

  it('falls back to node:sqlite when better-sqlite3 cannot load, or says why neither works', () => {
    // Make the addon fail to load the way an ABI mismatch does, for this test only.
    const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const original = mod._load;
    mod._load = function (request: string, ...rest: unknown[]) {
      if (request === 'better-sqlite3') throw new Error('better_sqlite3.node was compiled against a different Node.js version');
      return original.call(this, request, ...rest);
    };
    forgetLoadedDrivers();
    try {
      const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
      const hasNodeSqlite = major > 22 || (major === 22 && minor >= 5);
      if (hasNodeSqlite) {
        assert.equal(resolveDriver(), 'node:sqlite');
      } else {
        assert.throws(() => resolveDriver(), (err: Error) => {
          assert.match(err.message, /better-sqlite3: better_sqlite3\.node was compiled against a different Node\.js version/);
          assert.match(err.message, /node:sqlite:/);
          assert.match(err.message, /npm rebuild better-sqlite3/);
          assert.match(err.message, /Node\.js 22\.5 or later/);
          return true;
        });
      }
    } finally {
      mod._load = original;
      forgetLoadedDrivers();
    }
    assert.equal(resolveDriver(), 'better-sqlite3');
  });
});
