/**
 * Canary: the session store inside a real VS Code extension host runs the way it runs for desktop users. Desktop
 * never loads a better-sqlite3 addon built for plain Node (Electron's ABI differs), so the hosts this suite runs in
 * are ones whose Node cannot load the addon this repository builds (for Node 20): the store must pick node:sqlite,
 * say why it skipped better-sqlite3, and work on Python-written files.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync } from 'node:fs';
import Module from 'node:module';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { missingDriverError } from '../../src/extension/databases/sqliteDriverCheck';
import { AdvancedSQLiteSession, SessionDatabaseError, describeDriverChoice, resolveDriver } from '../../src/store';
import { forgetLoadedDrivers } from '../../src/store/drivers/openDatabase';
import { api as activatedApi } from './helpers';
import { tempDir } from '../support/tempFiles';

const fixtures = process.env.ASI_FIXTURES ?? join(__dirname, '..', '..', 'test', 'fixtures');

describe('store canary (extension host)', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir('asi-canary-')));
  afterEach(() => cleanup());

  it('runs inside the real VS Code extension host the harness started, on the Node that VS Code release ships', () => {
    assert.ok(vscode.version, 'vscode API available');
    const expected = process.env.ASI_HOST_VSCODE;
    if (expected) assert.equal(vscode.version, expected);
    const node = process.env.ASI_HOST_NODE;
    if (node) assert.equal(process.versions.node, node);
    assert.ok(expected && node, 'the harness names the host it started (ASI_HOST_VSCODE, ASI_HOST_NODE)');
  });

  it('uses node:sqlite, and says better-sqlite3 was skipped for its ABI (the desktop case), without an error', async () => {
    const choice = describeDriverChoice();
    assert.equal(choice.driver, 'node:sqlite');
    // The development copy carries better-sqlite3 built for Node 20: present, but for another ABI.
    assert.ok(
      existsSync(join(__dirname, '..', '..', 'node_modules', 'better-sqlite3')),
      'better-sqlite3 is installed beside the extension',
    );
    assert.equal(choice.skipped[0]?.driver, 'better-sqlite3');
    assert.match(
      choice.skipped[0]?.reason ?? '',
      new RegExp(`NODE_MODULE_VERSION \\d+\\. This version of Node\\.js requires NODE_MODULE_VERSION ${process.versions.modules}`),
    );
    // The extension's own connections run on it too.
    const api = await activatedApi();
    const path = join(dir, 'ref-basic.db');
    copyFileSync(join(fixtures, 'conformance', 'ref-basic.db'), path);
    const entry = await api.registry.open(path);
    try {
      assert.equal(entry.problem, undefined);
      assert.equal(entry.db && 'driver' in entry.db ? entry.db.driver : undefined, 'node:sqlite');
    } finally {
      await api.registry.close(path);
    }
  });

  it('opens a Python-written fixture and writes to it on node:sqlite', async () => {
    const path = join(dir, 'ref-basic.db');
    copyFileSync(join(fixtures, 'conformance', 'ref-basic.db'), path);
    const s = new AdvancedSQLiteSession({ sessionId: 'basic_session', dbPath: path });
    try {
      assert.equal((await s.getItems()).length, 4);
      assert.deepEqual(
        (await s.listBranches()).map((b) => b.branchId),
        ['main'],
      );
      await s.addItems([{ role: 'user', content: 'from the extension host' }]);
      assert.equal((await s.getItems()).length, 5);
    } finally {
      s.close();
    }
  });

  it('with node:sqlite unavailable too, says why for each driver; on a Node without it, names the VS Code to install', () => {
    const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
    const original = mod._load;
    mod._load = function (request: string, ...rest: unknown[]) {
      if (request === 'node:sqlite')
        throw Object.assign(new Error('No such built-in module: node:sqlite'), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' });
      return original.call(this, request, ...rest);
    };
    forgetLoadedDrivers();
    try {
      assert.throws(
        () => resolveDriver(),
        (err: unknown) => {
          assert.ok(err instanceof SessionDatabaseError);
          // A second load of the mismatched addon says "did not self-register" instead of the ABI numbers.
          assert.match(err.message, /better-sqlite3: .*(NODE_MODULE_VERSION|did not self-register)/);
          assert.match(err.message, /node:sqlite: No such built-in module/);
          // This Node has node:sqlite in truth, so "use a newer Node" would be a circle.
          assert.doesNotMatch(err.message, /Node\.js 22\.13 or later/);
          // What the extension says on a VS Code 1.100 host (Node 20.19) or an old remote server.
          const old = missingDriverError(err, { node: '20.19.0' });
          assert.match(old.message, /needs VS Code 1\.101 or later: this VS Code runs extensions on Node\.js 20\.19\.0/);
          assert.match(
            missingDriverError(err, { node: '20.19.0', remoteName: 'ssh-remote' }).message,
            /remote extension host.*server on the remote/,
          );
          assert.equal(missingDriverError(err, { node: process.versions.node }), err);
          return true;
        },
      );
    } finally {
      mod._load = original;
      forgetLoadedDrivers();
    }
    assert.equal(resolveDriver(), 'node:sqlite');
  });
});
