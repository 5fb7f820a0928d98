/**
 * The JSON export and its import: rows exactly as stored, and the round trip export → import → export byte-identical
 * in messages, structure and usage, on our files and on the Python-written fixtures.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdvancedSQLiteSession,
  InvalidArgumentError,
  TransferError,
  exportSessionToFile,
  importJsonExport,
  importSessionFile,
  openSessionDatabase,
  parseJsonExport,
} from '../../../../src/store';
import { execSql, query, tables } from '../../../support/sessionHelpers';
import { tempDir } from '../../../support/tempFiles';
import { PYTHON_FIXTURES, copyPythonFixture, exportText, importWhileCreated, writeExportFixture } from './exportFixtures';

/** The parts of an export that must survive the round trip byte for byte (everything but the session id). */
function sections(text: string): { messages: string; structure: string; usage: string } {
  const part = (name: string, next: string) => text.slice(text.indexOf(`\n"${name}": [`), text.indexOf(`\n"${next}"`));
  return {
    messages: part('messages', 'structure'),
    structure: part('structure', 'usage'),
    usage: text.slice(text.indexOf('\n"usage": [')),
  };
}

function isProblem(problem: string, extra: (e: TransferError) => boolean = () => true) {
  return (e: unknown) => e instanceof TransferError && e.problem === problem && extra(e);
}

describe('export: JSON and its import', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-export-json-');
  const db = join(tmp.dir, 'demo.db');
  before(async () => writeExportFixture(db));
  after(() => tmp.cleanup());

  it('holds message_data verbatim, the structure rows and the usage rows as stored', async () => {
    const doc = parseJsonExport(await exportText(db, 'json', { sessionId: 'weather-trip' }));
    assert.equal(doc.format, 'agent-session-inspector/session');
    assert.equal(doc.version, 1);
    assert.equal(doc.session?.session_id, 'weather-trip');
    const rows = query<{ message_data: string; created_at: string }>(
      db,
      "SELECT message_data, created_at FROM agent_messages WHERE session_id = 'weather-trip' ORDER BY id",
    );
    assert.deepEqual(
      doc.messages.map((m) => [m.message_data, m.created_at]),
      rows.map((r) => [r.message_data, r.created_at]),
    );
    const structure = query<Record<string, unknown>>(
      db,
      `SELECT branch_id, sequence_number, message_type, user_turn_number, branch_turn_number, tool_name, created_at
       FROM message_structure WHERE session_id = 'weather-trip' ORDER BY sequence_number`,
    );
    assert.deepEqual(
      doc.structure.map(({ message_ref: _ref, ...rest }) => rest),
      structure,
    );
    assert.equal(doc.usage.length, query(db, "SELECT 1 FROM turn_usage WHERE session_id = 'weather-trip'").length);
    assert.deepEqual(new Set(doc.structure.map((s) => s.branch_id)), new Set(['main', 'lisbon-instead', 'oslo-retry']));
  });

  it("each structure row's message_ref is its message's place; a row whose message is gone is left out", async () => {
    const copy = join(tmp.dir, 'gone.db');
    writeFileSync(copy, readFileSync(db));
    // Messages deleted by hand (the structure rows stay, as no SDK leaves them): one early, one in the middle.
    const ids = query<{ id: number }>(copy, "SELECT id FROM agent_messages WHERE session_id = 'weather-trip' ORDER BY id").map((r) => r.id);
    const gone = [ids[1]!, ids[Math.floor(ids.length / 2)]!];
    execSql(copy, `DELETE FROM agent_messages WHERE id IN (${gone.join(', ')})`);
    const doc = parseJsonExport(await exportText(copy, 'json', { sessionId: 'weather-trip' }));
    const expected = query<{ message_data: string; sequence_number: number }>(
      copy,
      `SELECT m.message_data, s.sequence_number FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = 'weather-trip' ORDER BY s.sequence_number, s.id`,
    );
    const all = query(copy, "SELECT 1 FROM message_structure WHERE session_id = 'weather-trip'").length;
    assert.ok(expected.length < all, 'no structure row lost its message');
    assert.deepEqual(
      doc.structure.map((s) => [s.sequence_number, doc.messages[s.message_ref]?.message_data]),
      expected.map((r) => [r.sequence_number, r.message_data]),
    );
  });

  it('round trip: export → import → export is byte-identical in messages, structure and usage', async () => {
    for (const [sessionId, branchId] of [
      ['weather-trip', null],
      ['weather-trip', 'oslo-retry'],
      ['support-chat', null],
      ['tools', null],
    ] as const) {
      const first = await exportText(db, 'json', { sessionId, branchId });
      const target = join(tmp.dir, `rt-${sessionId}-${branchId ?? 'all'}.db`);
      const result = await importJsonExport(target, parseJsonExport(first), { createTables: true });
      assert.equal(result.sessionId, sessionId);
      const second = await exportText(target, 'json', { sessionId, branchId });
      assert.equal(second, first, `${sessionId} ${branchId ?? ''}`);
      // And under a new id in the same file: only the session id differs.
      await importJsonExport(db, parseJsonExport(first), { sessionId: `${sessionId}-copy-${branchId ?? 'all'}` });
      const third = await exportText(db, 'json', { sessionId: `${sessionId}-copy-${branchId ?? 'all'}`, branchId });
      assert.deepEqual(sections(third), sections(first));
    }
  });

  it("asMain: a branch's export imports as the new session's main, its usage too; refused for a whole session", async () => {
    const text = await exportText(db, 'json', { sessionId: 'weather-trip', branchId: 'oslo-retry' });
    const file = join(tmp.dir, 'oslo.json');
    writeFileSync(file, text);
    const target = join(tmp.dir, 'as-main.db');
    const rowsOf = (sessionId: string, path: string) => ({
      structure: query(path, `SELECT DISTINCT branch_id FROM message_structure WHERE session_id = '${sessionId}'`).map((r) => r.branch_id),
      usage: query(path, `SELECT DISTINCT branch_id FROM turn_usage WHERE session_id = '${sessionId}'`).map((r) => r.branch_id),
    });
    // Kept: the session has no main, and says which branch it got (an agent opening it would start on an empty main).
    const kept = await importSessionFile(target, file, { sessionId: 'kept', createTables: true });
    assert.equal(kept.withoutMain, 'oslo-retry');
    assert.deepEqual(rowsOf('kept', target), { structure: ['oslo-retry'], usage: ['oslo-retry'] });
    // Both ways in (the export's line layout, and a document parsed whole), the rows are the branch's but named main.
    const streamed = await importSessionFile(target, file, { sessionId: 'main-1', asMain: true });
    const parsed = await importJsonExport(target, parseJsonExport(text), { sessionId: 'main-2', asMain: true });
    for (const [result, id] of [
      [streamed, 'main-1'],
      [parsed, 'main-2'],
    ] as const) {
      assert.equal(result.mainFrom, 'oslo-retry');
      assert.equal(result.withoutMain, undefined);
      assert.deepEqual(rowsOf(id, target), { structure: ['main'], usage: ['main'] });
      assert.deepEqual(
        query(
          target,
          `SELECT sequence_number, user_turn_number, branch_turn_number FROM message_structure WHERE session_id = '${id}' ORDER BY sequence_number`,
        ),
        query(
          target,
          "SELECT sequence_number, user_turn_number, branch_turn_number FROM message_structure WHERE session_id = 'kept' ORDER BY sequence_number",
        ),
      );
    }
    const whole = join(tmp.dir, 'whole.json');
    writeFileSync(whole, await exportText(db, 'json', { sessionId: 'weather-trip' }));
    await assert.rejects(importSessionFile(target, whole, { sessionId: 'w', asMain: true }), /whole session/);
    assert.equal(query(target, "SELECT 1 FROM agent_messages WHERE session_id = 'w'").length, 0);
  });

  it('round trip on the Python-written fixtures, every session', async () => {
    for (const fixture of PYTHON_FIXTURES) {
      const path = copyPythonFixture(fixture, tmp.dir);
      const reader = openSessionDatabase(path);
      const ids = reader.listSessions().map((s) => s.sessionId);
      reader.close();
      for (const sessionId of ids) {
        const first = await exportText(path, 'json', { sessionId });
        const target = join(tmp.dir, `py-${sessionId}.db`);
        await importJsonExport(target, parseJsonExport(first), { createTables: true });
        assert.equal(await exportText(target, 'json', { sessionId }), first, sessionId);
      }
    }
  });

  it("carries a session's reserved branch ids, a deleted branch's too: the copy refuses that name as the original does", async () => {
    // Python's fixture: bob's branch 'alt' was deleted, its id kept in branch_reservations (spec §8.1).
    const path = copyPythonFixture(
      PYTHON_FIXTURES.find((f) => f.endsWith('ref-multisession.db'))!,
      tmp.dir,
    );
    const text = await exportText(path, 'json', { sessionId: 'bob' });
    assert.match(text, /\n"reserved_branches": \["alt","main"\],\n/);
    const copy = join(tmp.dir, 'reserved-copy.db');
    const file = join(tmp.dir, 'bob.json');
    writeFileSync(file, text);
    // Read a line at a time (the layout the export writes), as the CLI imports it.
    await importSessionFile(copy, file, { createTables: true });
    assert.deepEqual(
      query(copy, "SELECT branch_id FROM branch_reservations WHERE session_id = 'bob' ORDER BY branch_id").map((r) => r.branch_id),
      ['alt', 'main'],
    );
    const bob = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: copy });
    try {
      await assert.rejects(bob.createBranchFromTurn(1, 'alt'), /alt/);
    } finally {
      bob.close();
    }
    // A branch's export carries none (the branch alone is no record of the others' names).
    assert.doesNotMatch(await exportText(path, 'json', { sessionId: 'alice', branchId: 'alt' }), /reserved_branches/);
    // Checked as ids: a blank one, or a list on a session without structure rows, is malformed.
    assert.throws(
      () => parseJsonExport(text.replace('"reserved_branches": ["alt","main"]', '"reserved_branches": ["alt"," "]')),
      isProblem('malformed', (e) => /reserved_branches\[1\]/.test(e.message)),
    );
  });

  it('keeps a corrupt message_data as its text', async () => {
    const path = join(tmp.dir, 'corrupt.db');
    await importJsonExport(path, parseJsonExport(await exportText(db, 'json', { sessionId: 'support-chat' })), { createTables: true });
    execSql(path, "UPDATE agent_messages SET message_data = '{not json' WHERE id = (SELECT min(id) FROM agent_messages)");
    const first = await exportText(path, 'json', { sessionId: 'support-chat' });
    assert.ok(first.includes('"message_data":"{not json"'));
    const target = join(tmp.dir, 'corrupt2.db');
    await importJsonExport(target, parseJsonExport(first), { createTables: true });
    assert.equal(await exportText(target, 'json', { sessionId: 'support-chat' }), first);
  });

  it('writes a file only when complete (exportSessionToFile), and imports it by extension', async () => {
    const out = join(tmp.dir, 'support.json');
    const summary = await exportSessionToFile(db, out, 'json', { sessionId: 'support-chat' });
    assert.equal(summary.items, query(db, "SELECT 1 FROM agent_messages WHERE session_id = 'support-chat'").length);
    await assert.rejects(exportSessionToFile(db, join(tmp.dir, 'none.json'), 'json', { sessionId: 'nope' }), isProblem('not-found'));
    assert.equal(existsSync(join(tmp.dir, 'none.json')), false);
    const r = await importSessionFile(join(tmp.dir, 'fresh.db'), out, { createTables: true });
    assert.deepEqual([r.sessionId, r.items, r.createdTables], ['support-chat', summary.items, true]);
  });

  describe('refusals write nothing', () => {
    let good: string;
    before(async () => {
      good = await exportText(db, 'json', { sessionId: 'support-chat' });
    });

    const malformed: [string, (doc: Record<string, unknown>) => void, string][] = [
      ['wrong format', (d) => (d.format = 'other'), '$.format'],
      ['newer version', (d) => (d.version = 2), '$.version'],
      [
        'message_data not a string',
        (d) => ((d.messages as { message_data: unknown }[])[1]!.message_data = { a: 1 }),
        '$.messages[1].message_data',
      ],
      [
        'message_ref out of range',
        (d) => ((d.structure as { message_ref: unknown }[])[2]!.message_ref = 999),
        '$.structure[2].message_ref',
      ],
      [
        'turn not an integer',
        (d) => ((d.structure as { user_turn_number: unknown }[])[0]!.user_turn_number = 1.5),
        '$.structure[0].user_turn_number',
      ],
      ['usage not an array', (d) => (d.usage = {}), '$.usage'],
      // What the doctor would report once written (docs/doctor.md): refused before anything is.
      [
        'usage for turn 0, which no structure row holds (turn-zero-usage)',
        (d) => ((d.usage as { user_turn_number: unknown }[])[0]!.user_turn_number = 0),
        '$.usage[0].user_turn_number',
      ],
      [
        'usage of a branch with no rows (orphan-usage)',
        (d) => ((d.usage as { branch_id: unknown }[])[0]!.branch_id = 'no-such-branch'),
        '$.usage[0]',
      ],
      [
        'usage of a turn the branch does not hold (orphan-usage)',
        (d) => ((d.usage as { user_turn_number: unknown }[])[1]!.user_turn_number = 7),
        '$.usage[1]',
      ],
      [
        'a message no structure row references (orphan-messages)',
        (d) =>
          (d.messages as unknown[]).push({ ref: (d.messages as unknown[]).length, created_at: null, message_data: '{"role": "user"}' }),
        '$.messages[8]',
      ],
      ['a negative token count', (d) => ((d.usage as { total_tokens: unknown }[])[0]!.total_tokens = -5), '$.usage[0].total_tokens'],
      [
        'a blank branch id (blank-branch-id)',
        (d) => ((d.structure as { branch_id: unknown }[])[0]!.branch_id = '   '),
        '$.structure[0].branch_id',
      ],
    ];
    for (const [what, mutate, path] of malformed) {
      it(`${what}: malformed, naming ${path}`, async () => {
        const doc = JSON.parse(good) as Record<string, unknown>;
        mutate(doc);
        const file = join(tmp.dir, 'bad.json');
        writeFileSync(file, JSON.stringify(doc));
        const before = tables(db);
        await assert.rejects(
          importSessionFile(db, file, { sessionId: 'should-not-exist' }),
          isProblem('malformed', (e) => e.jsonPath === path && e.message.includes(path)),
        );
        assert.deepEqual(tables(db), before);
      });
    }

    it('in the layout the export writes (read a line at a time): the error names the line and the path', async () => {
      const lines = good.split('\n');
      const at = lines.findIndex((l) => l.startsWith('{"ref":2,'));
      lines[at] = lines[at]!.replace(/"message_data":"(?:[^"\\]|\\.)*"/, '"message_data":42');
      const file = join(tmp.dir, 'bad-line.json');
      writeFileSync(file, lines.join('\n'));
      const before = tables(db);
      await assert.rejects(
        importSessionFile(db, file, { sessionId: 'should-not-exist' }),
        isProblem(
          'malformed',
          (e) => e.line === at + 1 && e.jsonPath === '$.messages[2].message_data' && e.message.startsWith(`Line ${at + 1}:`),
        ),
      );
      assert.deepEqual(tables(db), before);
    });

    it('in the line layout too, rows the doctor would report are refused, naming the line and the path', async () => {
      const lines = good.split('\n');
      const usage = lines.indexOf('"usage": [') + 1;
      const turnZero = lines.slice();
      turnZero[usage] = turnZero[usage]!.replace('"user_turn_number":1,', '"user_turn_number":0,');
      // One more message after the last (the line before "],"): no structure row names it.
      const end = lines.indexOf('"structure": [') - 1;
      const orphan = lines.slice();
      orphan.splice(end - 1, 1, `${lines[end - 1]},`, JSON.stringify({ ref: 8, created_at: null, message_data: '{"role": "user"}' }));
      for (const [name, edited, check] of [
        ['turn-zero.json', turnZero, (e: TransferError) => e.line === usage + 1 && e.jsonPath === '$.usage[0].user_turn_number'],
        ['orphan.json', orphan, (e: TransferError) => e.jsonPath === '$.messages[8]' && /orphan-messages/.test(e.message)],
      ] as const) {
        assert.notEqual(edited.join('\n'), good, `${name} is not edited`);
        const file = join(tmp.dir, name);
        writeFileSync(file, edited.join('\n'));
        const before = tables(db);
        await assert.rejects(importSessionFile(db, file, { sessionId: 'should-not-exist' }), isProblem('malformed', check));
        assert.deepEqual(tables(db), before);
      }
    });

    it('a file cut short is malformed; a re-indented export still imports (parsed whole)', async () => {
      const cut = join(tmp.dir, 'cut.json');
      writeFileSync(cut, good.slice(0, Math.floor(good.length / 2)));
      const before = tables(db);
      await assert.rejects(importSessionFile(db, cut, { sessionId: 'should-not-exist' }), isProblem('malformed'));
      assert.deepEqual(tables(db), before);
      const pretty = join(tmp.dir, 'pretty.json');
      writeFileSync(pretty, JSON.stringify(JSON.parse(good), null, 2));
      const r = await importSessionFile(db, pretty, { sessionId: 'support-chat-pretty' });
      assert.equal(r.items, parseJsonExport(good).messages.length);
      const again = await exportText(db, 'json', { sessionId: 'support-chat-pretty' });
      assert.deepEqual(sections(again), sections(good));
    });

    it('not JSON at all: malformed', async () => {
      const file = join(tmp.dir, 'garbage.json');
      writeFileSync(file, '{"format": ');
      await assert.rejects(importSessionFile(join(tmp.dir, 'never.db'), file, { createTables: true }), isProblem('malformed'));
      assert.equal(existsSync(join(tmp.dir, 'never.db')), false);
    });

    it("a blank session id, given or the export's own, is refused", async () => {
      const before = tables(db);
      const file = join(tmp.dir, 'blank-id.json');
      writeFileSync(file, good);
      for (const sessionId of ['', '   '])
        await assert.rejects(
          importSessionFile(db, file, { sessionId }),
          (e: unknown) => e instanceof InvalidArgumentError && /blank/.test(e.message),
        );
      writeFileSync(file, good.replace('"session_id":"support-chat"', '"session_id":"  "'));
      await assert.rejects(
        importSessionFile(db, file),
        isProblem('malformed', (e) => e.jsonPath === '$.session.session_id'),
      );
      assert.deepEqual(tables(db), before);
    });

    it('a taken session id is refused, another id is accepted', async () => {
      const before = tables(db);
      await assert.rejects(importJsonExport(db, parseJsonExport(good)), isProblem('session-exists'));
      assert.deepEqual(tables(db), before);
      const r = await importJsonExport(db, parseJsonExport(good), { sessionId: 'support-chat-2' });
      assert.equal(r.sessionId, 'support-chat-2');
    });

    it('a session another writer creates while the import waits for the lock is refused as taken, writing nothing', async () => {
      const path = join(tmp.dir, 'raced.db');
      const other = new AdvancedSQLiteSession({ sessionId: 'other', dbPath: path, createTables: true });
      await other.addItems([{ role: 'user', content: 'hi' }] as never);
      other.close();
      const file = join(tmp.dir, 'raced.json');
      writeFileSync(file, good);
      const outcome = await importWhileCreated(path, 'newsess', () => importSessionFile(path, file, { sessionId: 'newsess' }));
      assert.ok(
        !outcome.ok && isProblem('session-exists')(outcome.error),
        `refused as taken, got ${outcome.ok ? 'an import' : String(outcome.error)}`,
      );
      assert.deepEqual(
        query(
          path,
          "SELECT m.message_data, s.sequence_number FROM agent_messages m JOIN message_structure s ON s.message_id = m.id WHERE m.session_id = 'newsess'",
        ),
        [{ message_data: '{"role": "user", "content": "from the other writer"}', sequence_number: 1 }],
        "the other writer's session alone",
      );
      assert.equal(query(path, "SELECT 1 FROM agent_messages WHERE session_id = 'newsess'").length, 1);
    });

    it('a database without session tables needs createTables', async () => {
      const path = join(tmp.dir, 'other.db');
      execSql(path, 'CREATE TABLE notes (x TEXT)');
      const before = readFileSync(path);
      await assert.rejects(importJsonExport(path, parseJsonExport(good)), isProblem('missing-tables'));
      assert.deepEqual(readFileSync(path), before);
      await importJsonExport(path, parseJsonExport(good), { createTables: true });
      assert.equal(query(path, "SELECT 1 FROM agent_messages WHERE session_id = 'support-chat'").length > 0, true);
    });

    it('a cancel after the rows were inserted rolls them back', async () => {
      // Not yet cancelled when the import starts, cancelled at its last check inside the transaction.
      let reads = 0;
      const signal = {
        get aborted() {
          return ++reads > 1;
        },
      } as AbortSignal;
      const before = tables(db);
      await assert.rejects(importJsonExport(db, parseJsonExport(good), { sessionId: 'cancelled', signal }), isProblem('cancelled'));
      assert.ok(reads >= 2);
      assert.deepEqual(tables(db), before);
    });
  });
});
