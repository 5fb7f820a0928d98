/**
 * The doctor in the real extension host (docs/doctor.md, "In VS Code"): *Check Session Store…* on a doctor fixture
 * (test/fixtures/doctor/) puts one diagnostic per finding on the session's document, with the kind linked to its
 * section and the severity of its kind, and a Quick Fix on a repairable one; *Repair Finding…* (confirmed in advance,
 * as the modal would) repairs it after a backup and the diagnostics follow the re-check; a file open read-only and a
 * file that failed integrity_check are refused with why, and nothing is written; a PostgreSQL store (the launcher's
 * test server) gets the same diagnostics as a read-only report, with no Quick Fix.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import * as vscode from 'vscode';
import { DEFAULT_POSTGRES_TABLES, postgresDdl } from '../../src/store';
import { splitPassword } from '../../src/extension/databases/remoteAddress';
import type { CheckOutcome, RepairResult } from '../../src/extension/doctor/doctorCommands';
import { api, closeAll, freshScratchPerTest, type Scratch } from './helpers';

const PG_URL = process.env.ASI_TEST_PG_URL ?? '';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const codeOf = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code));

describe('the doctor in VS Code', function () {
  this.timeout(60_000);
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));

  it('checks a session into diagnostics on its document, and a Quick Fix repairs the finding after a backup', async () => {
    const a = await api();
    // The list keeps the newest 200: its last entry, not its length, says whether this test added one.
    const lastFailure = a.failures.at(-1);
    const path = s.copy('doctor/dangling-tool-call.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const outcome = await vscode.commands.executeCommand<CheckOutcome>('agentSessions.checkSessionStore', {
      kind: 'session',
      dbPath: path,
      sessionId: 'bob',
    });
    assert.equal(outcome.findings, 1);
    const uri = vscode.Uri.parse(outcome.document, true);
    const diagnostics = vscode.languages.getDiagnostics(uri);
    assert.equal(diagnostics.length, 1);
    const d = diagnostics[0]!;
    assert.equal(codeOf(d), 'dangling-tool-call');
    assert.equal(d.severity, vscode.DiagnosticSeverity.Error);
    assert.match(String((d.code as { target: vscode.Uri }).target), /docs\/doctor\.md#dangling-tool-call$/);
    assert.match(d.message, /^Both SDKs' runners \(openai-agents-python since 0\.8\.0, @openai\/agents\) drop a call without its output/);
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.match(doc.lineAt(d.range.start.line).text, /^ {2}turn \d+ · /);

    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, d.range);
    const fix = actions.find((x) => x.title.startsWith('Repair: '));
    assert.ok(fix?.command, `a Quick Fix among ${actions.map((x) => x.title).join(', ')}`);
    const result = await vscode.commands.executeCommand<RepairResult>(fix.command.command, ...(fix.command.arguments ?? []), true);
    assert.ok(result.backup && existsSync(result.backup), 'the backup is on disk');
    assert.equal(
      vscode.languages.getDiagnostics(uri).filter((x) => codeOf(x) === 'dangling-tool-call').length,
      0,
      'the finding is gone from the Problems panel',
    );
    assert.equal(a.failures.at(-1), lastFailure, a.failures.at(-1)?.message);
  });

  it('refuses to repair a file open read-only, and offers no Quick Fix in a file that failed integrity_check', async () => {
    const a = await api();
    const path = s.copy('doctor/orphan-usage.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path, { readonly: true });
    const before = sha(path);
    const outcome = await vscode.commands.executeCommand<CheckOutcome>('agentSessions.checkSessionStore', path);
    assert.equal(outcome.findings, 1);
    const alice = vscode.languages
      .getDiagnostics()
      .find(([u, ds]) => u.query.includes(JSON.stringify(path).slice(1, -1)) && u.query.includes('alice') && ds.length > 0);
    assert.ok(alice, 'the session alice has a document with a diagnostic');
    const ran = await vscode.commands.executeCommand('agentSessions.repairFinding', { uri: alice[0].toString(), index: 0 }, true);
    assert.equal(ran, undefined);
    assert.match(a.failures.at(-1)?.message ?? '', /read-only/);
    assert.equal(sha(path), before);

    const damaged = s.copy('doctor/integrity-check.db');
    const report = await vscode.commands.executeCommand<CheckOutcome>('agentSessions.checkSessionStore', damaged);
    assert.ok(report.findings > 0);
    const uri = vscode.Uri.parse(report.document, true);
    const ds = vscode.languages.getDiagnostics(uri);
    assert.ok(ds.length > 0 && ds.every((d) => codeOf(d) === 'integrity-check' && d.severity === vscode.DiagnosticSeverity.Error));
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, ds[0]!.range);
    assert.deepEqual(
      actions.filter((x) => x.title.startsWith('Repair: ')),
      [],
    );
    await vscode.commands.executeCommand('agentSessions.repairFinding', { uri: report.document, index: 0 }, true);
    assert.match(a.failures.at(-1)?.message ?? '', /integrity_check/);
  });

  it("reports a server store's findings read-only: diagnostics on the session's document, no Quick Fix, no repair", async () => {
    if (!PG_URL) throw new Error(`the launcher started no test servers: ${process.env.ASI_TEST_SERVERS_ERROR || 'no PostgreSQL address'}`);
    const a = await api();
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    const session = 'doctor-dangling';
    try {
      for (const ddl of postgresDdl(DEFAULT_POSTGRES_TABLES)) {
        // The server-store suite may have made the tables already: Python's DDL has no IF NOT EXISTS.
        await pool.query(ddl).catch((err: { code?: string }) => {
          if (err.code !== '42P07') throw err;
        });
      }
      await pool.query('DELETE FROM agent_sessions WHERE session_id = $1', [session]);
      await pool.query('INSERT INTO agent_sessions (session_id) VALUES ($1)', [session]);
      // A run that stopped between a tool call and its output: the session ends in the call.
      for (const item of [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      ])
        await pool.query('INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2)', [session, JSON.stringify(item)]);
      const { address, password } = splitPassword(PG_URL);
      await vscode.commands.executeCommand('agentSessions.openStore', address, password);
      const outcome = await vscode.commands.executeCommand<CheckOutcome>('agentSessions.checkSessionStore', {
        kind: 'session',
        dbPath: address,
        sessionId: session,
      });
      assert.ok(outcome, a.failures.at(-1)?.message);
      const uri = vscode.Uri.parse(outcome.document, true);
      const d = vscode.languages.getDiagnostics(uri).find((x) => codeOf(x) === 'dangling-tool-call');
      assert.ok(d, 'the dangling call is in the Problems panel');
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, d.range);
      assert.deepEqual(
        actions.filter((x) => x.title.startsWith('Repair: ')),
        [],
      );
      const index = vscode.languages.getDiagnostics(uri).indexOf(d);
      await vscode.commands.executeCommand('agentSessions.repairFinding', { uri: outcome.document, index }, true);
      assert.match(a.failures.at(-1)?.message ?? '', /server store: its report is read-only/);
      const rows = await pool.query('SELECT COUNT(*)::int AS n FROM agent_messages WHERE session_id = $1', [session]);
      assert.equal(rows.rows[0].n, 2, 'nothing was written to the server');
    } finally {
      await pool.query('DELETE FROM agent_sessions WHERE session_id = $1', [session]).catch(() => undefined);
      await pool.end();
      await closeAll(a);
    }
  });
});
