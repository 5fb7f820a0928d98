/**
 * The doctor's fixtures (test/fixtures/doctor/README.md): each replays, at the SQL level, the steps by which an SDK
 * bug leaves its rows, on a copy of the Python-written conformance fixture ref-multisession.db (the old SDK cannot
 * be installed here). The tests build them on the driver under test (so detection runs on both drivers); the
 * committed .db files are written by running this file:
 *   npx tsx test/support/doctorFixtures.ts
 */
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/drivers/openDatabase';
import type { FindingKind } from '../../src/store/doctor/findingKinds';

export const CONFORMANCE_DIR = join(__dirname, '..', 'fixtures', 'conformance');
export const DOCTOR_FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'doctor');
export const SOURCE_FIXTURE = join(CONFORMANCE_DIR, 'ref-multisession.db');

/** Python 0.22.0's usage details, as store_run_usage writes them. */
const DETAILS = `'{"cache_write_tokens": 0, "cached_tokens": 0}', '{"reasoning_tokens": 0}'`;

/** Per kind: the SQL that replays the bug's steps on ref-multisession.db. */
export const FIXTURE_STEPS: Readonly<Partial<Record<FindingKind, readonly string[]>>> = {
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

/** The kinds with a fixture. */
export const FIXTURE_KINDS: readonly FindingKind[] = [...(Object.keys(FIXTURE_STEPS) as FindingKind[]), 'integrity-check'];

/** The fixture file of a kind. */
export function doctorFixturePath(kind: FindingKind): string {
  return join(DOCTOR_FIXTURE_DIR, `${kind}.db`);
}

/** Writes the fixture of `kind` at `target` (replaced), on the driver the environment picks. */
export function makeDoctorFixture(kind: FindingKind, target: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
  copyFileSync(SOURCE_FIXTURE, target);
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

if (require.main === module) {
  for (const kind of FIXTURE_KINDS) {
    makeDoctorFixture(kind, doctorFixturePath(kind));
    console.log(`wrote ${doctorFixturePath(kind)}`);
  }
}
