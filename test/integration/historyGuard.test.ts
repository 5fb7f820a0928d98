/**
 * The history guard in the extension host (docs/history-guard.md): *Guard History of This File* on a file, another
 * process compacting a branch (as a Python agent's compaction does), the layer the guard's look records from the
 * registry's change event, and *Show History Layers…* restoring it as a new branch whose items are the branch's
 * items before the compaction, byte for byte; the session file never holds anything of the guard.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openDatabase } from '../../src/store';
import { api, child, extensionPath, freshScratchPerTest, waitFor, type Scratch } from './helpers';

/** Compacts `main` of session `g` in another process through the bundled store, as another writer would. */
function compactInChild(path: string): Promise<void> {
  const store = join(extensionPath(), 'dist', 'store.js');
  const script = `
    const { AdvancedSQLiteSession } = require(${JSON.stringify(store)});
    (async () => {
      const s = new AdvancedSQLiteSession({ sessionId: 'g', dbPath: ${JSON.stringify(path)} });
      await s.replaceHistoryWithCompaction([{ type: 'compaction', encrypted_content: 'summary' }]);
      s.close();
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const c = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  c.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`compaction failed: ${err}`)))),
  );
}

function texts(path: string, branchId: string): string[] {
  const db = openDatabase(path, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = 'g' AND s.branch_id = ? ORDER BY s.sequence_number`,
      )
      .all<{ message_data: string }>(branchId)
      .map((r) => r.message_data);
  } finally {
    db.close();
  }
}

describe('history guard', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));
  afterEach(async () => {
    await vscode.workspace.getConfiguration('agentSessions').update('historyGuard.files', undefined, vscode.ConfigurationTarget.Global);
  });

  it('keeps what another process compacted away, and restores it as a new branch', async () => {
    const a = await api();
    const path = join(s.dir, 'guarded.db');
    const seed = new AdvancedSQLiteSession({ sessionId: 'g', dbPath: path, createTables: true });
    await seed.addItems([{ role: 'user', content: 'first question' }]);
    await seed.addItems([{ role: 'user', content: 'second question' }]);
    seed.close();
    const before = texts(path, 'main');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const fileNode = await child(a, undefined, 'guarded.db');
    const first = (await vscode.commands.executeCommand('agentSessions.guardHistory', fileNode)) as { kind: string } | undefined;
    // 'unchanged' when the look the setting's change started came first (both are the file's first look).
    assert.ok(first && ['first', 'unchanged'].includes(first.kind), `the first look: ${JSON.stringify(first)}`);
    assert.deepEqual(a.guard.guardedFiles(), [path]);

    await compactInChild(path);
    const layers = await waitFor(
      async () => {
        const l = await a.guard.layers(path, 'g', 'main');
        return l.length > 0 ? l : undefined;
      },
      5000,
      'a layer of the compacted branch',
    );
    assert.ok(layers);
    assert.equal(layers[0]?.cause, 'another-writer');
    assert.equal(layers[0]?.removedCount, 2);

    const sessionNode = await child(a, fileNode, 'g');
    const branchId = await vscode.commands.executeCommand('agentSessions.showHistoryLayers', sessionNode, {
      layerId: layers[0]!.layerId,
      branchName: 'before-compaction',
      compare: false,
    });
    assert.equal(branchId, 'before-compaction');
    assert.deepEqual(texts(path, 'before-compaction'), before);
    assert.equal(texts(path, 'main').length, 1, 'the compacted branch is as the other process left it');
    const tables = openDatabase(path, { readonly: true });
    try {
      const names = tables
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all<{ name: string }>()
        .map((r) => r.name);
      assert.ok(!names.some((n) => n.startsWith('guard')), 'nothing of the guard in the session file');
    } finally {
      tables.close();
    }

    await vscode.commands.executeCommand('agentSessions.stopGuardingHistory', fileNode);
    assert.deepEqual(a.guard.guardedFiles(), []);
    assert.equal((await a.guard.layers(path, 'g')).length, 1, 'layers stay readable after the guard is off');
  });
});
