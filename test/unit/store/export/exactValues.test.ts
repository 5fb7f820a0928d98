/**
 * The JSON export holds every value exactly on either driver, and its import writes the same rows back: texts holding
 * U+0000 (which node:sqlite reads only up to the U+0000: a branch `a\u0000b` exported as `a` was merged into branch `a`
 * on import) and BLOB items (exported as `123,34,…` on node:sqlite, and imported as TEXT on both). Runs on
 * better-sqlite3 under `npx mocha`, on node:sqlite through scripts/runStoreSuites.mjs.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { TransferError, importJsonExport, importSessionFile, openDatabase, parseJsonExport } from '../../../../src/store';
import { NUL_BRANCH, NUL_SESSION, writeControlCharFile } from '../../../support/controlCharFile';
import { tempDir } from '../../../support/tempFiles';
import { writeFileSync } from 'node:fs';
import { exportText } from './exportFixtures';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const RAW_NUL_ITEM = '{"role": "user", "content": "before\u0000after"}';
const BLOB_ITEM = '{"role": "user", "content": "stored as bytes: caf\u00e9"}';
/** Not UTF-8 (0xff never is): only base64 can carry it. */
const NOT_UTF8 = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x22, 0x7d]);

/**
 * The control-character file (`writeControlCharFile`: sessions `s1` and `s\u0000x`, each with branches `main`, `a` and
 * `a\u0000b`) with, in each session, more values node:sqlite would cut or mangle: a reserved `a\u0000b`, a tool name,
 * a time and token details holding U+0000, an item holding a raw U+0000, a BLOB item, a BLOB item that is not UTF-8,
 * and a sessions row (in `s\u0000x`) whose time holds U+0000. Written as bytes cast to TEXT, so the file is the same
 * whichever driver writes it.
 */
async function writeFile(path: string): Promise<void> {
  await writeControlCharFile(path, ['s1', NUL_SESSION]);
  const db = openDatabase(path);
  try {
    for (const sessionId of ['s1', NUL_SESSION]) {
      const sid = bytes(sessionId);
      const messages = db
        .prepare('SELECT id FROM agent_messages WHERE session_id = CAST(? AS TEXT) ORDER BY id')
        .all<{ id: number }>(sid)
        .map((r) => Number(r.id));
      const setItem = db.prepare('UPDATE agent_messages SET message_data = ? WHERE id = ?');
      db.prepare('UPDATE agent_messages SET message_data = CAST(? AS TEXT) WHERE id = ?').run(bytes(RAW_NUL_ITEM), messages[1]!);
      setItem.run(bytes(BLOB_ITEM), messages[2]!);
      setItem.run(NOT_UTF8, messages[3]!);
      db.prepare(
        `UPDATE message_structure SET tool_name = CAST(? AS TEXT), created_at = CAST(? AS TEXT)
         WHERE id = (SELECT min(id) FROM message_structure WHERE session_id = CAST(? AS TEXT))`,
      ).run(bytes('tool\u0000hidden'), bytes('2025-01-01\u0000later'), sid);
      db.prepare('UPDATE turn_usage SET input_tokens_details = CAST(? AS TEXT) WHERE session_id = CAST(? AS TEXT)').run(
        bytes('{"cached_tokens": 0}\u0000x'),
        sid,
      );
      db.prepare('INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (CAST(? AS TEXT), CAST(? AS TEXT))').run(
        sid,
        bytes(NUL_BRANCH),
      );
    }
    db.prepare('UPDATE agent_sessions SET created_at = CAST(? AS TEXT) WHERE session_id = CAST(? AS TEXT)').run(
      bytes('2025-02-02\u0000x'),
      bytes(NUL_SESSION),
    );
  } finally {
    db.close();
  }
}

/**
 * Every row of `sessionId` as hex (which no driver cuts), message ids replaced by the message's row, so two files
 * compare whatever ids their rows got.
 */
function dump(path: string, sessionId: string): string[] {
  const db = openDatabase(path);
  try {
    const sid = bytes(sessionId);
    const rows = (sql: string) =>
      db
        .prepare(sql)
        .all<Record<string, unknown>>(sid)
        .map((r) => JSON.stringify(Object.values(r)));
    return [
      ...rows(`SELECT 'session', hex(session_id), hex(created_at), hex(updated_at) FROM agent_sessions WHERE session_id = CAST(? AS TEXT)`),
      ...rows(
        `SELECT 'message', typeof(message_data), hex(message_data), hex(created_at) FROM agent_messages
         WHERE session_id = CAST(? AS TEXT) ORDER BY id`,
      ),
      ...rows(
        `SELECT 'structure', hex(s.branch_id), s.sequence_number, hex(s.message_type), s.user_turn_number, s.branch_turn_number,
           hex(s.tool_name), hex(s.created_at), typeof(m.message_data), hex(m.message_data)
         FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = CAST(? AS TEXT) ORDER BY s.sequence_number`,
      ),
      ...rows(
        `SELECT 'usage', hex(branch_id), user_turn_number, requests, input_tokens, output_tokens, total_tokens,
           hex(input_tokens_details), hex(output_tokens_details), hex(created_at)
         FROM turn_usage WHERE session_id = CAST(? AS TEXT) ORDER BY hex(branch_id), user_turn_number`,
      ),
      ...rows(`SELECT 'reserved', hex(branch_id) FROM branch_reservations WHERE session_id = CAST(? AS TEXT) ORDER BY hex(branch_id)`),
    ];
  } finally {
    db.close();
  }
}

describe('export: JSON holds every value exactly, and its import writes it back', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-export-exact-');
  const source = join(tmp.dir, 'source.db');
  before(async () => writeFile(source));
  after(() => tmp.cleanup());

  it('texts holding U+0000 are exported whole: branch ids, the session id, a tool name, times, token details, an item', async () => {
    const doc = parseJsonExport(await exportText(source, 'json', { sessionId: NUL_SESSION }));
    assert.equal(doc.session?.session_id, NUL_SESSION);
    assert.equal(doc.session?.created_at, '2025-02-02\u0000x');
    assert.deepEqual([...new Set(doc.structure.map((s) => s.branch_id))].sort(), ['a', NUL_BRANCH, 'main'].sort());
    assert.ok(doc.reserved_branches?.includes(NUL_BRANCH), 'the reserved a\\u0000b');
    assert.equal(doc.structure[0]?.tool_name, 'tool\u0000hidden');
    assert.equal(doc.structure[0]?.created_at, '2025-01-01\u0000later');
    assert.deepEqual(
      doc.usage.map((u) => [u.branch_id, u.input_tokens_details]),
      [
        ['a', '{"cached_tokens": 0}\u0000x'],
        [NUL_BRANCH, '{"cached_tokens": 0}\u0000x'],
      ],
    );
    assert.equal(doc.messages[1]?.message_data, RAW_NUL_ITEM);
    assert.equal(doc.messages[1]?.message_data_type, undefined, 'TEXT is not marked');
  });

  it('a BLOB item is its UTF-8 text marked as a BLOB; bytes that are not UTF-8 are carried as base64 too', async () => {
    const doc = parseJsonExport(await exportText(source, 'json', { sessionId: 's1' }));
    assert.deepEqual(doc.messages[2], {
      ref: 2,
      created_at: doc.messages[2]?.created_at,
      message_data: BLOB_ITEM,
      message_data_type: 'blob',
    });
    assert.equal(doc.messages[3]?.message_data_type, 'blob');
    assert.equal(doc.messages[3]?.message_data, NOT_UTF8.toString('utf8'));
    assert.equal(doc.messages[3]?.message_data_base64, NOT_UTF8.toString('base64'));
  });

  it('round trip: the imported rows are the same, byte for byte and type for type, and export the same', async () => {
    for (const sessionId of ['s1', NUL_SESSION]) {
      for (const branchId of [null, NUL_BRANCH, 'a']) {
        const first = await exportText(source, 'json', { sessionId, branchId });
        const name = `rt-${sessionId === 's1' ? 's1' : 'nul'}-${branchId === null ? 'all' : branchId === 'a' ? 'a' : 'nul'}`;
        const target = join(tmp.dir, `${name}.db`);
        // Through the file, read a line at a time, as the CLI and the extension import it.
        writeFileSync(join(tmp.dir, `${name}.json`), first);
        const result = await importSessionFile(target, join(tmp.dir, `${name}.json`), { createTables: true });
        assert.equal(result.sessionId, sessionId);
        assert.equal(await exportText(target, 'json', { sessionId, branchId }), first, `${name}: the second export`);
        if (branchId === null) assert.deepEqual(dump(target, sessionId), dump(source, sessionId), `${name}: the rows`);
      }
    }
  });

  it('an import that does not know the marks (an earlier version) gets the text, as before', async () => {
    const text = await exportText(source, 'json', { sessionId: 's1' });
    const doc = parseJsonExport(text);
    for (const m of doc.messages) {
      delete m.message_data_type;
      delete m.message_data_base64;
    }
    const target = join(tmp.dir, 'unmarked.db');
    await importJsonExport(target, doc, { createTables: true });
    const db = openDatabase(target);
    try {
      const types = db
        .prepare("SELECT typeof(message_data) AS t FROM agent_messages WHERE session_id = 's1' ORDER BY id")
        .all<{ t: string }>();
      assert.deepEqual(new Set(types.map((r) => r.t)), new Set(['text']));
    } finally {
      db.close();
    }
  });

  it('a wrong mark or base64 is malformed, naming its path', () => {
    const header = `{"format": "agent-session-inspector/session", "version": 1, "scope": "session", "branch": null, "structured": false,
      "session": {"session_id": "x", "created_at": null, "updated_at": null}, "structure": [], "usage": [], "messages": [`;
    for (const [message, path] of [
      ['{"ref": 0, "created_at": null, "message_data": "{}", "message_data_type": "text"}', '$.messages[0].message_data_type'],
      ['{"ref": 0, "created_at": null, "message_data": "{}", "message_data_base64": "e30="}', '$.messages[0].message_data_base64'],
      [
        '{"ref": 0, "created_at": null, "message_data": "{}", "message_data_type": "blob", "message_data_base64": "e3@="}',
        '$.messages[0].message_data_base64',
      ],
      [
        '{"ref": 0, "created_at": null, "message_data": "{}", "message_data_type": "blob", "message_data_base64": 7}',
        '$.messages[0].message_data_base64',
      ],
    ] as const) {
      assert.throws(
        () => parseJsonExport(`${header}${message}]}`),
        (e: unknown) => e instanceof TransferError && e.problem === 'malformed' && e.jsonPath === path,
        message,
      );
    }
  });
});
