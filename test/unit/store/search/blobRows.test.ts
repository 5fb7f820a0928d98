/**
 * Search over rows whose `message_data` another writer stored as a BLOB (UTF-8 bytes of the JSON text): the store
 * reads them as that text, so a search finds them exactly as it finds the same rows stored as TEXT, on either driver.
 * better-sqlite3's SQLite is built with SQLITE_LIKE_DOESNT_MATCH_BLOBS (its LIKE and GLOB never match a BLOB), so
 * the SQL prefilter let no such row through there, while node:sqlite's found them.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync } from 'node:fs';
import { SQLiteSession, parseSearchQuery, searchDatabase, type SearchHit, type SessionDatabase } from '../../../../src/store';
import { TempFolder, sql } from '../inspector/inspectorFixtures';

async function run(db: SessionDatabase, text: string): Promise<string[]> {
  const hits: SearchHit[] = [];
  await searchDatabase(db, parseSearchQuery(text), { onHits: (h) => hits.push(...h) });
  return hits
    .map((h) => `${h.sessionId} ${h.branchId} ${h.messageId} ${h.itemType} ${h.toolName ?? '-'} ${h.failed === null ? '' : 'failed'}`)
    .sort();
}

describe('searchDatabase on BLOB message_data', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('finds the same hits as when the rows are TEXT: text, folding, roles, tools, failed calls', async () => {
    const text = folder.path('text.db');
    const s = folder.session({ sessionId: 'trip', dbPath: text });
    await s.addItems([
      { role: 'user', content: 'Why is the sky blue? STRASSE' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Rayleigh scattering: the sky scatters blue.' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: 'And the weather in Berlin, 22°C?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Berlin"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'An error occurred while running the tool. Please try again. Error: boom' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Something else: straße' }] },
    ] as never);
    s.close();
    // A plain session's rows (no structure rows: its prefilter tests the role in the text too).
    const plain = folder.track(new SQLiteSession({ sessionId: 'notes', dbPath: text }));
    await plain.addItems([
      { role: 'user', content: 'A plain note about the sky over Berlin' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Noted.' }] },
    ] as never);
    plain.close();
    const blob = folder.path('blob.db');
    copyFileSync(text, blob);
    sql(blob, 'UPDATE agent_messages SET message_data = CAST(message_data AS BLOB)');
    assert.deepEqual(
      sql<{ t: string }>(blob, 'SELECT DISTINCT typeof(message_data) AS t FROM agent_messages').map((r) => r.t),
      ['blob'],
    );
    const textDb = folder.inspect(text);
    const blobDb = folder.inspect(blob);
    for (const q of ['sky', 'SKY', 'berlin', 'strasse', 'rayleigh role:assistant', 'role:user', 'tool:get_weather', 'is:failed', 'boom']) {
      const expected = await run(textDb, q);
      assert.ok(expected.length > 0, `no hit on TEXT rows for ${q}`);
      assert.deepEqual(await run(blobDb, q), expected, q);
    }
    assert.deepEqual(await run(blobDb, 'zanzibar'), []);
  });
});
