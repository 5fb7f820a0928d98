/** Databases the export tests read: the demo, a session with every built-in tool type, the Python-written fixtures. */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../../../scripts/demo';
import { exportSession, type ExportFormat, type ExportRequest } from '../../../../src/store';
import { writeBuiltinToolSession } from '../../../support/builtinToolItems';
import { runSupportScript } from '../../../support/childProcess';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const PYTHON_FIXTURES = ['ref-basic', 'ref-multisession'].map((n) => join(ROOT, 'test', 'fixtures', 'conformance', `${n}.db`));

/** Copies a Python fixture (with its -wal/-shm) into `dir`; opening the original would touch it. */
export function copyPythonFixture(fixture: string, dir: string): string {
  const name = fixture.split(/[\\/]/).pop()!;
  const target = join(dir, name);
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(fixture + suffix)) copyFileSync(fixture + suffix, target + suffix);
  return target;
}

/** The demo database (two sessions, three branches, tool calls, usage) plus the built-in tools session `tools`. */
export async function writeExportFixture(path: string): Promise<void> {
  await writeDemoDatabase(path);
  await writeBuiltinToolSession(path, 'tools');
}

/** An export as one string. */
export async function exportText(dbPath: string, format: ExportFormat, request: ExportRequest): Promise<string> {
  let text = '';
  await exportSession(dbPath, format, request, (chunk) => {
    text += chunk;
  });
  return text;
}

/**
 * Runs `importing` while another process holds the write lock of `dbPath` with session `sessionId` created (a sessions
 * row, a user message and its structure row) but not yet committed, as a Python agent between its BEGIN IMMEDIATE and
 * its COMMIT; the writer commits after `holdMs`, within the import's busy timeout. Resolves with the import's outcome
 * once the writer has committed.
 */
export async function importWhileCreated(
  dbPath: string,
  sessionId: string,
  importing: () => Promise<unknown>,
  holdMs = 800,
): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  const id = sessionId.replace(/'/g, "''");
  const writer = runSupportScript(
    'lockedWriter.ts',
    [
      dbPath,
      String(holdMs),
      JSON.stringify([
        `INSERT INTO agent_sessions (session_id) VALUES ('${id}')`,
        `INSERT INTO agent_messages (session_id, message_data) VALUES ('${id}', '{"role": "user", "content": "from the other writer"}')`,
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
           branch_turn_number) VALUES ('${id}', last_insert_rowid(), 'main', 'user', 1, 1, 1)`,
      ]),
    ],
    30_000,
  );
  await writer.waitForLine('locked');
  const outcome = await importing().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const done = await writer.done;
  if (done.code !== 0) throw new Error(`the other writer failed (${done.code}): ${done.stderr}`);
  return outcome;
}
