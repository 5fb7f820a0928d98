/**
 * Export Branch…, Export Session… and Import Conversation… in the real extension host: the files they write are the
 * store's exports, an import shows up as a new session in the tree (in an open database or a new file), and refusals
 * (a taken session id, a malformed file) are reported without writing.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { exportSession, type ExportFormat, type ExportRequest, type ImportResult } from '../../src/store';
import { api, child, freshScratchPerTest, waitFor, writeTripSession, type Scratch } from './helpers';

async function exported(path: string, format: ExportFormat, request: ExportRequest): Promise<string> {
  let text = '';
  await exportSession(path, format, request, (c) => {
    text += c;
  });
  return text;
}

describe('Export and import', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('exports a session and a branch from tree nodes; imports into the open database and into a new file', async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    await writeTripSession(path, { porto: true });
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const session = await child(a, await child(a, undefined, 'trip.db'), 'trip');
    const porto = await child(a, session, 'porto');

    const json = `${s.dir}/trip.json`;
    const written = await vscode.commands.executeCommand<string>('agentSessions.exportSession', session, { uri: json, format: 'json' });
    assert.equal(written, json, JSON.stringify(a.failures.map((f) => f.message)));
    assert.equal(readFileSync(json, 'utf8'), await exported(path, 'json', { sessionId: 'trip' }));

    const md = `${s.dir}/porto.md`;
    await vscode.commands.executeCommand('agentSessions.exportBranch', porto, { uri: vscode.Uri.file(md), format: 'md' });
    const text = readFileSync(md, 'utf8');
    assert.match(text, /^# Session `trip` — branch `porto`\n/);
    assert.match(text, /What about Porto\?/);
    assert.match(text, /Start at Belém\./);

    const jsonl = `${s.dir}/porto.jsonl`;
    await vscode.commands.executeCommand('agentSessions.exportBranch', porto, { uri: jsonl, format: 'jsonl' });
    assert.equal(readFileSync(jsonl, 'utf8'), await exported(path, 'jsonl', { sessionId: 'trip', branchId: 'porto' }));

    // Into the open database, under a new id: it appears in the tree with both branches.
    const db = await child(a, undefined, 'trip.db');
    const result = await vscode.commands.executeCommand<ImportResult>('agentSessions.importConversation', db, {
      file: json,
      sessionId: 'trip-copy',
    });
    assert.equal(result?.sessionId, 'trip-copy', JSON.stringify(a.failures.map((f) => f.message)));
    const copy = await waitFor(() => child(a, db, 'trip-copy').catch(() => undefined), 5000, 'the imported session in the tree');
    assert.deepEqual(
      (await a.tree.children(copy!)).map(([, item]) => item.label),
      ['main', 'porto'],
    );
    const again = await exported(path, 'json', { sessionId: 'trip-copy' });
    const first = readFileSync(json, 'utf8');
    assert.equal(again.slice(again.indexOf('"messages"')), first.slice(first.indexOf('"messages"')), 'byte-identical items and structure');

    // Into a new file: tables created, the file opened in the tree.
    const fresh = `${s.dir}/imported.db`;
    const r2 = await vscode.commands.executeCommand<ImportResult>('agentSessions.importConversation', undefined, {
      file: jsonl,
      dbPath: fresh,
      sessionId: 'eval',
      createTables: true,
    });
    assert.equal(r2?.items, 4, JSON.stringify(a.failures.map((f) => f.message)));
    const freshNode = await waitFor(() => child(a, undefined, 'imported.db').catch(() => undefined), 5000, 'the new database in the tree');
    await child(a, freshNode!, 'eval');
  });

  it("a branch's JSON export imports as the session's main when asked, or keeps its name", async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    await writeTripSession(path, { porto: true });
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const session = await child(a, await child(a, undefined, 'trip.db'), 'trip');
    const json = `${s.dir}/porto.json`;
    await vscode.commands.executeCommand('agentSessions.exportBranch', await child(a, session, 'porto'), { uri: json, format: 'json' });
    const db = await child(a, undefined, 'trip.db');
    for (const [sessionId, asMain, branches] of [
      ['porto-main', true, ['main']],
      ['porto-kept', false, ['porto']],
    ] as const) {
      const result = await vscode.commands.executeCommand<ImportResult>('agentSessions.importConversation', db, {
        file: json,
        sessionId,
        asMain,
      });
      assert.equal(result?.sessionId, sessionId, JSON.stringify(a.failures.map((f) => f.message)));
      const node = await waitFor(() => child(a, db, sessionId).catch(() => undefined), 5000, 'the imported session in the tree');
      assert.deepEqual(
        (await a.tree.children(node!)).map(([, item]) => item.label),
        branches,
      );
    }
  });

  it('refuses a taken session id and a malformed file, writing nothing', async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    await writeTripSession(path, { porto: true });
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const db = await child(a, undefined, 'trip.db');
    const json = `${s.dir}/trip.json`;
    writeFileSync(json, await exported(path, 'json', { sessionId: 'trip' }));
    const before = readFileSync(path);

    a.failures.length = 0;
    await vscode.commands.executeCommand('agentSessions.importConversation', db, { file: json, sessionId: 'trip' });
    assert.match(a.failures.at(-1)?.message ?? '', /already has a session trip/);

    const bad = `${s.dir}/bad.jsonl`;
    writeFileSync(bad, '{"role":"user","content":"hi"}\n{"role":\n');
    await vscode.commands.executeCommand('agentSessions.importConversation', db, { file: bad, sessionId: 'bad' });
    assert.match(a.failures.at(-1)?.message ?? '', /^Line 2: not valid JSON/);
    assert.deepEqual(readFileSync(path), before, 'the database file is unchanged');
    assert.equal(existsSync(`${s.dir}/bad.db`), false);
  });

  it('never exports onto the open session file or its review store, nor over an existing file nobody confirmed (issue 38)', async () => {
    const a = await api();
    const path = `${s.dir}/trip.db`;
    await writeTripSession(path, { porto: true });
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const session = await child(a, await child(a, undefined, 'trip.db'), 'trip');
    const before = readFileSync(path);
    a.failures.length = 0;
    for (const uri of [path, `${path}-wal`, `${path}.reviews.db`]) {
      const written = await vscode.commands.executeCommand<string | undefined>('agentSessions.exportSession', session, {
        uri,
        format: 'jsonl',
      });
      assert.equal(written, undefined, uri);
      assert.match(a.failures.at(-1)?.message ?? '', /which this command reads/, uri);
    }
    assert.deepEqual(readFileSync(path), before, 'the session file is unchanged');
    assert.equal(existsSync(`${path}.reviews.db`), false, 'no review store was made either');
    // A path given as an argument is nobody's confirmation: an existing file there is refused, byte for byte kept.
    const mine = `${s.dir}/mine.jsonl`;
    writeFileSync(mine, 'mine\n');
    await vscode.commands.executeCommand('agentSessions.exportSession', session, { uri: mine, format: 'jsonl' });
    assert.match(a.failures.at(-1)?.message ?? '', /already exists/);
    assert.equal(readFileSync(mine, 'utf8'), 'mine\n');
  });
});
