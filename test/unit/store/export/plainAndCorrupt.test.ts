/**
 * Exports of a plain `SQLiteSession` session (no structure rows, no turns recorded) and of a session with an
 * unreadable row: every format still works, the JSON round trip stays exact, and Markdown shows what it cannot read.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { SQLiteSession, importJsonExport, openSessionDatabase, parseJsonExport } from '../../../../src/store';
import { execSql } from '../../../support/sessionHelpers';
import { tempDir } from '../../../support/tempFiles';
import { exportText } from './exportFixtures';

describe('export: plain sessions and unreadable rows', function () {
  this.timeout(30_000);
  const tmp = tempDir('asi-export-plain-');
  const db = join(tmp.dir, 'plain.db');
  before(async () => {
    const s = new SQLiteSession({ sessionId: 'p', dbPath: db });
    await s.addItems([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'first answer' }] },
      { role: 'user', content: 'second question' },
      { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'found' },
    ] as never);
    s.close();
  });
  after(() => tmp.cleanup());

  it('Markdown counts a plain session’s turns from its user messages', async () => {
    const md = await exportText(db, 'md', { sessionId: 'p' });
    assert.deepEqual(
      [...md.matchAll(/^## Turn (\d+)$/gm)].map((m) => m[1]),
      ['1', '2'],
    );
    assert.match(md, /\*\*Tool output\*\* `lookup`/);
  });

  it('JSON marks it unstructured and round-trips into a file with branch tables', async () => {
    const first = await exportText(db, 'json', { sessionId: 'p' });
    const doc = parseJsonExport(first);
    assert.equal(doc.structured, false);
    assert.equal(doc.structure.length, 0);
    const target = join(tmp.dir, 'target.db');
    await importJsonExport(target, doc, { createTables: true });
    assert.equal(await exportText(target, 'json', { sessionId: 'p' }), first);
  });

  it('JSONL gives every item', async () => {
    const lines = (await exportText(db, 'jsonl', { sessionId: 'p' })).trim().split('\n');
    assert.equal(lines.length, 5);
  });

  it('an unreadable row: Markdown shows its text, JSONL leaves it out, JSON keeps it', async () => {
    const path = join(tmp.dir, 'corrupt.db');
    const s = new SQLiteSession({ sessionId: 'c', dbPath: path });
    await s.addItems([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi' },
    ] as never);
    s.close();
    execSql(path, "UPDATE agent_messages SET message_data = '{broken' WHERE id = 2");
    const md = await exportText(path, 'md', { sessionId: 'c' });
    assert.match(md, /\*\*Unreadable item\*\* \([^)]*\): .*\n\n```text\n\{broken\n```/);
    assert.equal((await exportText(path, 'jsonl', { sessionId: 'c' })).trim().split('\n').length, 1);
    assert.ok((await exportText(path, 'json', { sessionId: 'c' })).includes('"message_data":"{broken"'));
    const reader = openSessionDatabase(path);
    reader.close();
  });
});
