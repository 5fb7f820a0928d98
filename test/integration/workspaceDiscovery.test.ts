/**
 * Workspace discovery inside the real extension host: a session file moved into a folder created after start-up
 * appears in the tree (the watcher reports the folder, not the file), and *Refresh* searches the workspace again
 * (a file the watcher saw while it was still empty, filled in place afterwards, which no watcher event reports) but
 * leaves a discovered file the user closed closed.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, child, fixtures, freshScratchPerTest, waitFor, type Scratch } from './helpers';
import { defaultBackupPath } from '../../src/store/doctor/backupName';

const FIXTURE = 'conformance/ref-multisession.db';

/** The workspace folder the test hosts open (test/host: a fresh empty folder). */
function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the test host opened no workspace folder');
  return folder.uri.fsPath;
}

describe('workspace discovery', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  // Folders this test made in the workspace; removed after the databases in them were closed (freshScratchPerTest's
  // afterEach runs first: it was registered first).
  let made: string[] = [];
  beforeEach(() => {
    s = scratchOf();
    made = [];
  });
  afterEach(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  /** A folder in the workspace that did not exist when discovery started. */
  function newWorkspaceFolder(name: string): string {
    const dir = join(workspaceDir(), `${name}-${Date.now().toString(36)}`);
    made.push(dir);
    return dir;
  }

  it('finds a session file moved into a folder created after start-up', async () => {
    const a = await api();
    const source = s.copy(FIXTURE);
    const dir = newWorkspaceFolder('new-runs');
    mkdirSync(dir);
    // At once, as `mkdir x && mv big.db x/` does: the file arrives before a watch on the new folder can exist.
    const path = join(dir, 'moved-in.db');
    renameSync(source, path);
    await waitFor(() => a.registry.get(path)?.db, 15_000, 'the moved file to be discovered');
    assert.equal(a.registry.get(path)?.discovered, true);
    await child(a, undefined, 'moved-in.db');
  });

  it('finds a session file inside a folder moved into the workspace whole', async () => {
    const a = await api();
    const outside = join(s.dir, 'incoming');
    mkdirSync(join(outside, 'deeper'), { recursive: true });
    writeFileSync(join(outside, 'deeper', 'arrived.db'), readFileSync(join(fixtures, FIXTURE)));
    const dir = newWorkspaceFolder('arrived');
    // One rename: the watcher reports the folder only, never the files it brought.
    renameSync(outside, dir);
    const path = join(dir, 'deeper', 'arrived.db');
    await waitFor(() => a.registry.get(path)?.db, 15_000, 'the file in the moved folder to be discovered');
    await child(a, undefined, 'arrived.db');
  });

  it("leaves the doctor's backups out: the file repaired is listed, its backup beside it is not", async () => {
    const a = await api();
    const outside = join(s.dir, 'repaired');
    mkdirSync(outside);
    writeFileSync(join(outside, 'agent.db'), readFileSync(join(fixtures, FIXTURE)));
    const backupName = defaultBackupPath('agent.db', new Date('2026-12-05T09:41:07.123Z'));
    writeFileSync(join(outside, backupName), readFileSync(join(fixtures, FIXTURE)));
    const dir = newWorkspaceFolder('repaired');
    renameSync(outside, dir);
    const path = join(dir, 'agent.db');
    await waitFor(() => a.registry.get(path)?.db, 15_000, 'the repaired file to be discovered');
    // Both were found by the same search: the backup, a whole session file, was looked at and left out.
    await vscode.commands.executeCommand('agentSessions.refresh');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(a.registry.get(join(dir, backupName)), undefined);
  });

  it('Refresh searches the workspace again', async () => {
    const a = await api();
    const dir = newWorkspaceFolder('late');
    mkdirSync(dir);
    // Let the folder's own creation be handled first, so what follows is only the file's events.
    await new Promise((r) => setTimeout(r, 1000));
    const path = join(dir, 'filled-later.db');
    const seen = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), '*.db'), false, true, true);
    try {
      let created = false;
      seen.onDidCreate(() => (created = true));
      // Created empty (as SQLite and copy tools do), so discovery's look at the created file finds no database...
      writeFileSync(path, '');
      await waitFor(() => created, 10_000, 'the watcher to report the empty file');
      await new Promise((r) => setTimeout(r, 500));
      // ...then filled in place: the same file, so a change event, which discovery does not follow.
      writeFileSync(path, readFileSync(join(fixtures, FIXTURE)));
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(a.registry.get(path), undefined, 'no watcher event brought the filled file in');
    } finally {
      seen.dispose();
    }
    await vscode.commands.executeCommand('agentSessions.refresh');
    assert.ok(a.registry.get(path)?.db, 'Refresh found the file');
    await child(a, undefined, 'filled-later.db');

    // A discovered file the user closed stays closed through Refresh, until opened by hand.
    await vscode.commands.executeCommand('agentSessions.closeDatabase', { kind: 'database', dbPath: path });
    assert.equal(a.registry.get(path), undefined);
    await vscode.commands.executeCommand('agentSessions.refresh');
    assert.equal(a.registry.get(path), undefined, 'Refresh left the closed file closed');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    assert.ok(a.registry.get(path)?.db, 'opened by hand');
    assert.equal(a.registry.get(path)?.discovered, false);
  });
});
