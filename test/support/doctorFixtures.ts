/**
 * The doctor's fixtures (test/fixtures/doctor/README.md): each replays, at the SQL level, the steps by which an SDK
 * bug leaves its rows, on a copy of the Python-written conformance fixture ref-multisession.db (the old SDK cannot
 * be installed here). The tests build them on the driver under test (so detection runs on both drivers); the
 * committed .db files (and stale-wal's -wal and -shm) are written by running this file:
 *   npx tsx test/support/doctorFixtures.ts [kind …]
 */
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { openDatabase } from '../../src/store/drivers/openDatabase';
import type { FindingKind } from '../../src/store/doctor/findingKinds';
import { STRUCTURE_INDEX_DDL, baseSchemaDdl, type TableNames } from '../../src/store/format/schema';

export const CONFORMANCE_DIR = join(__dirname, '..', 'fixtures', 'conformance');
export const DOCTOR_FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'doctor');
export const SOURCE_FIXTURE = join(CONFORMANCE_DIR, 'ref-multisession.db');

/** Python 0.22.0's usage details, as store_run_usage writes them. */
const DETAILS = `'{"cache_write_tokens": 0, "cached_tokens": 0}', '{"reasoning_tokens": 0}'`;

/** Store B of the shared-message-structure replay: Python's custom `sessions_table`/`messages_table`. */
const STORE_B: TableNames = { sessions: 'b_sessions', messages: 'b_messages' };

/** One add_items of Python ≤ 0.21.0 on store B: sessions row, messages, updated_at, structure rows (shared table). */
function storeBTurn(session: string, firstId: number, seq: number, turn: number, user: string, answer: string): string[] {
  const reply = `{"id": "msg_${session}_b${turn}", "content": [{"annotations": [], "text": "${answer}", "type": "output_text", "logprobs": []}], "role": "assistant", "status": "completed", "type": "message"}`;
  return [
    `INSERT OR IGNORE INTO b_sessions (session_id) VALUES ('${session}')`,
    `INSERT INTO b_messages (session_id, message_data) VALUES ('${session}', '{"content": "${user}", "role": "user"}'), ('${session}', '${reply}')`,
    `UPDATE b_sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = '${session}'`,
    // add_items' structure rows: message ids from b_messages, sequence and turn numbers from the shared table.
    `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
       branch_turn_number, tool_name) VALUES ('${session}', ${firstId}, 'main', 'user', ${seq}, ${turn}, ${turn}, NULL),
       ('${session}', ${firstId + 1}, 'main', 'assistant', ${seq + 1}, ${turn}, ${turn}, NULL)`,
    // store_run_usage after the run, into the shared turn_usage.
    `INSERT OR REPLACE INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
       input_tokens_details, output_tokens_details) VALUES ('${session}', 'main', ${turn}, 1, 20, 5, 25, ${DETAILS})`,
  ];
}

/** Per kind: the SQL that replays the bug's steps on ref-multisession.db. */
export const FIXTURE_STEPS: Readonly<Partial<Record<FindingKind, readonly string[]>>> = {
  // A hand edit, not an SDK bug: someone drops an index they think unused, a privacy script adds a trigger that
  // rewrites every stored message, and turn_usage is rebuilt (the usual CREATE/INSERT…SELECT/DROP/RENAME) with
  // total_tokens as TEXT and created_at without its default; the rebuild's author recreates the usage index.
  'altered-schema': [
    `DROP INDEX idx_structure_turn`,
    `CREATE TRIGGER redact_names AFTER INSERT ON agent_messages BEGIN
       UPDATE agent_messages SET message_data = replace(new.message_data, 'Alice', '[name]') WHERE id = new.id; END`,
    `CREATE TABLE turn_usage_new (
       id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, branch_id TEXT NOT NULL DEFAULT 'main',
       user_turn_number INTEGER NOT NULL, requests INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
       output_tokens INTEGER DEFAULT 0, total_tokens TEXT DEFAULT 0, input_tokens_details JSON, output_tokens_details JSON,
       created_at TIMESTAMP, FOREIGN KEY (session_id) REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
       UNIQUE(session_id, branch_id, user_turn_number))`,
    `INSERT INTO turn_usage_new SELECT * FROM turn_usage`,
    `DROP TABLE turn_usage`,
    `ALTER TABLE turn_usage_new RENAME TO turn_usage`,
    ...STRUCTURE_INDEX_DDL.filter((ddl) => ddl.includes('idx_turn_usage_session_turn')),
  ],
  // #4902 / #4454 (Python ≤ 0.21.0): AdvancedSQLiteSession(create_tables=True, sessions_table='b_sessions',
  // messages_table='b_messages') on the same file creates its base tables; CREATE TABLE IF NOT EXISTS keeps
  // message_structure and turn_usage as agent_sessions/agent_messages made them. Store B then runs a turn for
  // 'alice' (its message ids 1, 2 are also alice's ids 1, 2 in agent_messages: each shows twice on main) and one for
  // 'carol' (a session agent_sessions does not have; its ids 3, 4 are not in agent_messages).
  'shared-message-structure': [
    ...baseSchemaDdl(STORE_B),
    `INSERT OR IGNORE INTO session_clear_generations (session_id, generation) VALUES ('alice', 0), ('carol', 0)`,
    ...storeBTurn('alice', 1, 9, 3, 'What does store B know?', 'Only its own rows.'),
    ...storeBTurn('carol', 3, 1, 1, 'Hello from carol', 'Hello, carol.'),
  ],
  // #4821: alice's create_branch_from_turn(1, 'fresh') copies nothing and makes 'fresh' current; a run fails before
  // its first item is stored, and store_run_usage still writes a row, for turn 0, on the branch with no turn.
  'turn-zero-usage': [
    `INSERT INTO branch_reservations (session_id, branch_id) VALUES ('alice', 'fresh')`,
    `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
       input_tokens_details, output_tokens_details) VALUES ('alice', 'fresh', 0, 1, 12, 3, 15, ${DETAILS})`,
  ],
  // #3755: delete_branch('alt') of alice removes the branch's structure rows and the messages only it referenced
  // (ids 9, 10) but leaves the branch's turn_usage row (turn 2 on 'alt').
  'orphan-usage': [
    `DELETE FROM agent_messages WHERE id IN (9, 10)`,
    `DELETE FROM message_structure WHERE session_id = 'alice' AND branch_id = 'alt'`,
  ],
  // #3346: delete_branch('alt') of alice removes the structure rows and usage of the branch but not the messages only
  // it referenced (ids 9, 10): nothing references them any more.
  'orphan-messages': [
    `DELETE FROM message_structure WHERE session_id = 'alice' AND branch_id = 'alt'`,
    `DELETE FROM turn_usage WHERE session_id = 'alice' AND branch_id = 'alt'`,
  ],
  // A run on bob's main stores the user message and the model's function_call (add_items after each model response),
  // then the process is killed before the tool returns: the branch ends in a call without its output.
  'dangling-tool-call': [
    `INSERT INTO agent_messages (session_id, message_data) VALUES ('bob', '{"content": "And 12 * 12?", "role": "user"}')`,
    `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
       branch_turn_number, tool_name) VALUES ('bob', last_insert_rowid(), 'main', 'user', 3, 2, 2, NULL)`,
    `INSERT INTO agent_messages (session_id, message_data) VALUES ('bob',
       '{"arguments": "{\\"expression\\": \\"12*12\\"}", "call_id": "call_b9", "name": "calculator", "type": "function_call", "id": "fc_b9", "status": "completed"}')`,
    `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
       branch_turn_number, tool_name) VALUES ('bob', last_insert_rowid(), 'main', 'function_call', 4, 2, 2, 'calculator')`,
    `UPDATE agent_sessions SET updated_at = '2026-11-29 07:32:20' WHERE session_id = 'bob'`,
  ],
  // #5081: alice pops every item of main (each pop deletes the structure row, the message when no other branch
  // references it, and the usage of an emptied turn); the forced delete_branch('alt') that follows fails on the empty
  // main after moving the pointer. 'alt' keeps the turns; main is empty.
  'empty-main': [
    `DELETE FROM message_structure WHERE session_id = 'alice' AND branch_id = 'main'`,
    `DELETE FROM agent_messages WHERE id IN (7, 8)`,
    `DELETE FROM turn_usage WHERE session_id = 'alice' AND branch_id = 'main'`,
  ],
  // Not an SDK bug: another program's edits. Alice's main reply 8 cut short, alt's user message 9 rewritten as bytes
  // that are not UTF-8, alt's reply 10 replaced by a JSON array, bob's reply 18 with a NUL after its object; alice's
  // message 7 gains a bare NaN, which Python's json.loads reads (no finding).
  'malformed-item': [
    `UPDATE agent_messages SET message_data = substr(message_data, 1, 40) WHERE id = 8`,
    `UPDATE agent_messages SET message_data = X'7B22636F6E74656E74223A2022FF222C2022726F6C65223A202275736572227D' WHERE id = 9`,
    `UPDATE agent_messages SET message_data = '[{"type": "message"}]' WHERE id = 10`,
    `UPDATE agent_messages SET message_data = message_data || char(0) WHERE id = 18`,
    `UPDATE agent_messages SET message_data = '{"content": "Something shorter, please.", "role": "user", "score": NaN}' WHERE id = 7`,
  ],
  // #5007: alice's create_branch_from_turn(2, ' ') accepts a blank name: turn 1 is copied onto branch ' '.
  'blank-branch-id': [
    `INSERT INTO branch_reservations (session_id, branch_id) VALUES ('alice', ' ')`,
    `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
       branch_turn_number, tool_name) VALUES ('alice', 1, ' ', 'user', 9, 1, 1, NULL), ('alice', 2, ' ', 'assistant', 10, 1, 1, NULL)`,
  ],
};

/**
 * Damage no SDK writes (a file copied while it was written, a bad disk), made on the bytes since SQLite refuses to
 * write its schema table in defensive mode: the pages of two message_structure indexes swap places, so each index's
 * entries disagree with the table while every page stays a well-formed b-tree page (the file opens, reads work,
 * integrity_check names the rows missing from each index).
 */
function swapIndexPages(target: string): void {
  const db = openDatabase(target, { readonly: true, fileMustExist: true });
  let pages: number[];
  let pageSize: number;
  try {
    pageSize = Number(db.prepare('PRAGMA page_size').get<{ page_size: number }>()!.page_size);
    pages = ['idx_structure_branch', 'idx_structure_session_seq'].map((name) =>
      Number(db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get<{ rootpage: number }>(name)!.rootpage),
    );
  } finally {
    db.close();
  }
  const bytes = readFileSync(target);
  const [a, b] = pages.map((p) => Buffer.from(bytes.subarray((p - 1) * pageSize, p * pageSize))) as [Buffer, Buffer];
  b.copy(bytes, (pages[0]! - 1) * pageSize);
  a.copy(bytes, (pages[1]! - 1) * pageSize);
  writeFileSync(target, bytes);
}

/**
 * stale-wal: bob's next run on main stores a turn (add_items, then store_run_usage) and the process is killed
 * before any checkpoint (as a Python agent killed mid-conversation, whose connection never closes): the turn's frames
 * stay in the -wal (and its index in the -shm), and the main file does not hold them. Replayed in a child process
 * (test/support/killedWriter.ts) that SIGKILLs itself, since closing a connection checkpoints.
 */
const STALE_WAL_STEPS: readonly string[] = [
  `INSERT INTO agent_messages (session_id, message_data) VALUES ('bob', '{"content": "And 3 + 3?", "role": "user"}'),
     ('bob', '{"id": "msg_b5", "content": [{"annotations": [], "text": "6.", "type": "output_text", "logprobs": []}], "role": "assistant", "status": "completed", "type": "message"}')`,
  `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
     branch_turn_number, tool_name) VALUES ('bob', (SELECT MAX(id) - 1 FROM agent_messages), 'main', 'user', 3, 2, 2, NULL),
     ('bob', (SELECT MAX(id) FROM agent_messages), 'main', 'assistant', 4, 2, 2, NULL)`,
  `UPDATE agent_sessions SET updated_at = '2026-11-29 07:32:30' WHERE session_id = 'bob'`,
  `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
     input_tokens_details, output_tokens_details) VALUES ('bob', 'main', 2, 1, 30, 2, 32, ${DETAILS})`,
];

/** The kinds with a fixture. */
export const FIXTURE_KINDS: readonly FindingKind[] = [...(Object.keys(FIXTURE_STEPS) as FindingKind[]), 'stale-wal', 'integrity-check'];

/** The files beside a fixture that belong to it (stale-wal's -wal and -shm); none for the others. */
export function fixtureSidecars(kind: FindingKind): string[] {
  return kind === 'stale-wal' ? ['-wal', '-shm'] : [];
}

/** The fixture file of a kind. */
export function doctorFixturePath(kind: FindingKind): string {
  return join(DOCTOR_FIXTURE_DIR, `${kind}.db`);
}

/** Writes the fixture of `kind` at `target` (replaced), on the driver the environment picks. */
export function makeDoctorFixture(kind: FindingKind, target: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
  copyFileSync(SOURCE_FIXTURE, target);
  if (kind === 'stale-wal') return killedWriter(target, STALE_WAL_STEPS);
  const db = openDatabase(target, { fileMustExist: true });
  try {
    for (const sql of FIXTURE_STEPS[kind] ?? []) db.exec(sql);
  } finally {
    // The last connection to close checkpoints the -wal into the file and removes it: one file per fixture.
    db.close();
  }
  if (existsSync(`${target}-wal`)) throw new Error(`${target}-wal was left behind`);
  if (kind === 'integrity-check') swapIndexPages(target);
}

/** Runs `steps` in a child process on this Node and driver that then SIGKILLs itself, leaving its -wal and -shm. */
function killedWriter(target: string, steps: readonly string[]): void {
  const child = join(__dirname, 'killedWriter.ts');
  const r = spawnSync(process.execPath, ['--import', 'tsx', child, target, JSON.stringify(steps)], {
    cwd: join(__dirname, '..', '..'),
    encoding: 'utf8',
  });
  if (r.signal !== 'SIGKILL') throw new Error(`the writer was to be killed, but exited ${String(r.status)}: ${r.stderr}`);
  if (!existsSync(`${target}-wal`)) throw new Error(`${target}-wal is missing after the killed writer`);
}

if (require.main === module) {
  // Every fixture, or the kinds named: npx tsx test/support/doctorFixtures.ts stale-wal
  const named = process.argv.slice(2) as FindingKind[];
  for (const kind of named.length > 0 ? named : FIXTURE_KINDS) {
    makeDoctorFixture(kind, doctorFixturePath(kind));
    console.log(`wrote ${doctorFixturePath(kind)}`);
  }
}
