/**
 * Shared helpers for the session-store unit tests: temp files, item builders, raw SQL access to a file through a
 * separate connection, and assertions on errors and unchanged files.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, openDatabase, type SqliteDatabase, type SqlValue } from '../../src/store';
import type { AdvancedSQLiteSessionOptions, SessionLogger } from '../../src/store';
import { dumpTables, inspect, type TableDump } from './tableDump';
import { tempDir } from './tempFiles';

/** A temp folder whose sessions and folder are closed/removed by `cleanup()`; `open()` tracks instances. */
export class Workspace {
  readonly dir: string;
  private readonly removeDir: () => void;
  private readonly sessions: { close(): void }[] = [];
  constructor(prefix = 'asi-store-') {
    const t = tempDir(prefix);
    this.dir = t.dir;
    this.removeDir = t.cleanup;
  }
  path(name = 'session.db'): string {
    return join(this.dir, name);
  }
  /** Opens an AdvancedSQLiteSession (default: createTables true, dbPath session.db) and tracks it for cleanup. */
  open(options: Partial<AdvancedSQLiteSessionOptions> = {}): AdvancedSQLiteSession {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: this.path(), createTables: true, ...options });
    this.sessions.push(s);
    return s;
  }
  track<T extends { close(): void }>(s: T): T {
    this.sessions.push(s);
    return s;
  }
  cleanup(): void {
    for (const s of this.sessions) {
      try {
        s.close();
      } catch {
        // already closed
      }
    }
    this.removeDir();
  }
}

/** Item builders (plain objects, stored as given). */
export const mk = {
  user: (content: unknown): AgentInputItem => ({ role: 'user', content }) as unknown as AgentInputItem,
  assistant: (text: string): AgentInputItem =>
    ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] }) as unknown as AgentInputItem,
  call: (name: string | null, extra: Record<string, unknown> = {}): AgentInputItem =>
    ({ type: 'function_call', name, callId: `c_${String(name)}`, arguments: '{}', ...extra }) as unknown as AgentInputItem,
  output: (callId = 'c'): AgentInputItem => ({ type: 'function_call_output', call_id: callId, output: 'ok' }) as unknown as AgentInputItem,
  raw: (value: unknown): AgentInputItem => value as AgentInputItem,
};

/** Runs statements on a separate connection (foreign keys off, as every store connection). */
export function withDb<T>(path: string, fn: (db: SqliteDatabase) => T): T {
  const db = openDatabase(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function execSql(path: string, sql: string, ...params: SqlValue[]): void {
  withDb(path, (db) => {
    if (params.length === 0) db.exec(sql);
    else db.prepare(sql).run(...params);
  });
}

/** Rows of a query, read through a read-only connection. */
export function query<T = Record<string, unknown>>(path: string, sql: string, ...params: SqlValue[]): T[] {
  return inspect(path, (db) =>
    db
      .prepare(sql)
      .all<T>(...params)
      .map((r) => ({ ...(r as object) }) as T),
  );
}

export function tableNames(path: string): string[] {
  return query<{ name: string }>(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").map((r) => r.name);
}

export function tables(path: string): Record<string, TableDump> {
  return inspect(path, dumpTables);
}

/** Structure rows of a session (branch optional) in sequence order, without timestamps. */
export function structure(path: string, sessionId = 's1', branch?: string) {
  type Row = {
    id: number;
    message_id: number;
    branch_id: string;
    message_type: string;
    sequence_number: number;
    user_turn_number: number | null;
    branch_turn_number: number | null;
    tool_name: string | null;
  };
  const sql = `SELECT id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number, tool_name
    FROM message_structure WHERE session_id = ?${branch === undefined ? '' : ' AND branch_id = ?'} ORDER BY sequence_number`;
  return branch === undefined ? query<Row>(path, sql, sessionId) : query<Row>(path, sql, sessionId, branch);
}

/** A branch's stored item texts (`message_data` as the file holds it), in sequence order. */
export function branchTexts(path: string, sessionId: string, branchId: string): string[] {
  return query<{ message_data: string }>(
    path,
    `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
     WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number`,
    sessionId,
    branchId,
  ).map((r) => r.message_data);
}

/** Asserts that `fn` rejects (or throws) with an instance of `cls` whose message is exactly `message`. */
export async function rejectsWith(
  fn: () => unknown,
  cls: abstract new (...args: never[]) => Error,
  message: string | RegExp,
): Promise<Error> {
  let caught: unknown;
  try {
    await fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected ${cls.name} '${String(message)}', but nothing was thrown`);
  assert.ok(caught instanceof cls, `expected ${cls.name}, got ${String((caught as Error)?.name)}: ${String((caught as Error)?.message)}`);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else assert.match(caught.message, message);
  return caught;
}

/** Asserts the call fails as `rejectsWith` says and leaves every table of `path` (and the pointer) unchanged. */
export async function failsWithoutChange(
  path: string,
  session: AdvancedSQLiteSession,
  fn: () => unknown,
  cls: abstract new (...args: never[]) => Error,
  message: string | RegExp,
): Promise<void> {
  const before = tables(path);
  const branch = session.getCurrentBranchId();
  await rejectsWith(fn, cls, message);
  assert.deepStrictEqual(tables(path), before, 'the file changed although the call failed');
  assert.equal(session.getCurrentBranchId(), branch, 'the current branch moved although the call failed');
}

/** A logger that records every call. */
export function captureLogger(): SessionLogger & { errors: { message: string; err: unknown }[]; warnings: string[] } {
  const errors: { message: string; err: unknown }[] = [];
  const warnings: string[] = [];
  return {
    errors,
    warnings,
    error: (message: string, err: unknown) => void errors.push({ message, err }),
    warn: (message: string) => void warnings.push(message),
  };
}

/** Compares values and key order. */
export function sameJson(actual: unknown, expected: unknown, what?: string): void {
  assert.deepStrictEqual(actual, expected, what);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${what ?? 'value'}: key order`);
}
