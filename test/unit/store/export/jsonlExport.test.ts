/**
 * JSONL: one `@openai/agents` input item per line (what `getItems` returns), and its import numbered as `addItems`
 * numbers items; malformed lines are named and nothing is written.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import {
  AdvancedSQLiteSession,
  TransferError,
  checkImportFile,
  exportSessionToFile,
  importJsonlFile,
  importSessionFile,
  openSessionDatabase,
} from '../../../../src/store';
import { query, structure, tables } from '../../../support/sessionHelpers';
import { tempDir } from '../../../support/tempFiles';
import { PYTHON_FIXTURES, copyPythonFixture, exportText, importWhileCreated, writeExportFixture } from './exportFixtures';

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AgentInputItem);

describe('export: JSONL and its import', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-export-jsonl-');
  const db = join(tmp.dir, 'demo.db');
  before(async () => writeExportFixture(db));
  after(() => tmp.cleanup());

  async function items(path: string, sessionId: string, branch: string): Promise<AgentInputItem[]> {
    const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, readonly: true });
    try {
      return await s.getItems(undefined, branch);
    } finally {
      s.close();
    }
  }

  it('is exactly what getItems returns for the branch, one item per line', async () => {
    for (const [sessionId, branch] of [
      ['weather-trip', 'main'],
      ['weather-trip', 'lisbon-instead'],
      ['tools', 'main'],
    ] as const) {
      const text = await exportText(db, 'jsonl', { sessionId, branchId: branch });
      assert.ok(text.endsWith('\n'));
      assert.deepEqual(lines(text), JSON.parse(JSON.stringify(await items(db, sessionId, branch))), `${sessionId}/${branch}`);
    }
  });

  it('pairs an output with its call across pages (tool names survive a page break)', async () => {
    for (const pageSize of [1, 2, 3]) {
      const text = await exportText(db, 'jsonl', { sessionId: 'weather-trip', branchId: 'main', pageSize });
      assert.deepEqual(lines(text), JSON.parse(JSON.stringify(await items(db, 'weather-trip', 'main'))), `page size ${pageSize}`);
    }
  });

  it('exports main when no branch is given; the Python fixtures too', async () => {
    assert.deepEqual(
      lines(await exportText(db, 'jsonl', { sessionId: 'weather-trip' })).length,
      (await items(db, 'weather-trip', 'main')).length,
    );
    for (const fixture of PYTHON_FIXTURES) {
      const path = copyPythonFixture(fixture, tmp.dir);
      const reader = openSessionDatabase(path);
      const ids = reader.listSessions().map((s) => s.sessionId);
      reader.close();
      for (const id of ids) {
        assert.deepEqual(
          lines(await exportText(path, 'jsonl', { sessionId: id })),
          JSON.parse(JSON.stringify(await items(path, id, 'main'))),
          id,
        );
      }
    }
  });

  it('import writes the rows addItems would write for the same items', async () => {
    const file = join(tmp.dir, 'weather.jsonl');
    await exportSessionToFile(db, file, 'jsonl', { sessionId: 'weather-trip', branchId: 'oslo-retry' });
    const imported = join(tmp.dir, 'imported.db');
    const r = await importSessionFile(imported, file, { sessionId: 's1', createTables: true });
    assert.equal(r.items, lines(readFileSync(file, 'utf8')).length);
    const expected = join(tmp.dir, 'added.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: expected, createTables: true });
    await s.addItems(lines(readFileSync(file, 'utf8')));
    s.close();
    assert.deepEqual(structure(imported), structure(expected));
    const data = (p: string) =>
      query<{ message_data: string }>(p, 'SELECT message_data FROM agent_messages ORDER BY id').map((m) => m.message_data);
    assert.deepEqual(data(imported), data(expected));
    // Read back, the session gives the same items as the source branch.
    assert.deepEqual(await items(imported, 's1', 'main'), await items(db, 'weather-trip', 'oslo-retry'));
  });

  describe('malformed lines: the error names the line, nothing is written', () => {
    const cases: [string, string, number][] = [
      ['invalid JSON', '{"role":"user","content":"hi"}\n{"role": "assistant", \n', 2],
      ['not an object', '{"role":"user","content":"hi"}\n\n[1,2]\n', 3],
      ['no type or role', '{"role":"user","content":"hi"}\n{"content":"x"}\n', 2],
    ];
    for (const [what, text, line] of cases) {
      it(`${what} → line ${line}`, async () => {
        const file = join(tmp.dir, 'bad.jsonl');
        writeFileSync(file, text);
        const before = tables(db);
        await assert.rejects(
          importJsonlFile(db, file, { sessionId: 'never' }),
          (e: unknown) =>
            e instanceof TransferError && e.problem === 'malformed' && e.line === line && e.message.startsWith(`Line ${line}:`),
        );
        assert.deepEqual(tables(db), before);
        const fresh = join(tmp.dir, 'never-created.db');
        await assert.rejects(importJsonlFile(fresh, file, { sessionId: 'never', createTables: true }), TransferError);
        assert.equal(existsSync(fresh), false, 'the file is not even created');
      });
    }

    it('checkImportFile refuses a Markdown export and a bad first line before anything is asked or written', async () => {
      const markdown = join(tmp.dir, 'weather-trip.md');
      await exportSessionToFile(db, markdown, 'md', { sessionId: 'weather-trip', branchId: 'main' });
      assert.throws(
        () => checkImportFile(markdown),
        (e: unknown) => e instanceof TransferError && e.problem === 'malformed' && /is Markdown, which is for reading/.test(e.message),
      );
      // The same text under another name is found by its first line.
      const renamed = join(tmp.dir, 'transcript.txt');
      writeFileSync(renamed, readFileSync(markdown));
      assert.throws(() => checkImportFile(renamed), /is Markdown/);
      const bad = join(tmp.dir, 'bad.jsonl');
      writeFileSync(bad, '\n{"role":"user","content":"hi"\n');
      assert.throws(
        () => checkImportFile(bad),
        (e: unknown) => e instanceof TransferError && e.line === 2,
      );
      const good = join(tmp.dir, 'good.jsonl');
      writeFileSync(good, '{"role":"user","content":"hi"}\n{not checked yet}\n');
      assert.equal(checkImportFile(good), 'jsonl', 'only the first item line is checked up front; the import checks all');
    });

    it('an empty file holds no items', async () => {
      const file = join(tmp.dir, 'empty.jsonl');
      writeFileSync(file, '\n\n');
      await assert.rejects(
        importJsonlFile(db, file, { sessionId: 'never' }),
        (e: unknown) => e instanceof TransferError && e.problem === 'malformed',
      );
    });

    it('a taken session id is refused', async () => {
      const file = join(tmp.dir, 'ok.jsonl');
      writeFileSync(file, '{"role":"user","content":"hi"}\n');
      const before = tables(db);
      await assert.rejects(
        importJsonlFile(db, file, { sessionId: 'weather-trip' }),
        (e: unknown) => e instanceof TransferError && e.problem === 'session-exists',
      );
      assert.deepEqual(tables(db), before);
    });

    it('a session another writer creates while the import waits for the lock is refused as taken, not merged into', async () => {
      const path = join(tmp.dir, 'raced.db');
      const other = new AdvancedSQLiteSession({ sessionId: 'other', dbPath: path, createTables: true });
      await other.addItems([{ role: 'user', content: 'hi' }] as never);
      other.close();
      const file = join(tmp.dir, 'raced.jsonl');
      writeFileSync(file, '{"role":"user","content":"imported"}\n{"role":"assistant","content":"reply"}\n');
      const outcome = await importWhileCreated(path, 'newsess', () => importJsonlFile(path, file, { sessionId: 'newsess' }));
      assert.ok(
        !outcome.ok && outcome.error instanceof TransferError && outcome.error.problem === 'session-exists',
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
  });
});
