/**
 * Search over real files written through the store (and by the Python SDK: the conformance fixtures): the §12 (a)
 * matching on item text (never JSON keys, any case, Unicode folding, Python's \u escapes), tool names, failed calls,
 * roles, shared turns reported once, streaming in batches, cancellation, and the worker.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { join } from 'node:path';
import {
  SQLiteSession,
  parseSearchQuery,
  searchDatabase,
  startWorkerSearch,
  type SearchHit,
  type SessionDatabase,
  reviewTurnSet,
} from '../../../../src/store';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { TempFolder, sql } from '../inspector/inspectorFixtures';
import { writeBuiltinToolSession } from '../../../support/builtinToolItems';

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'conformance');

async function run(db: SessionDatabase, text: string, options: { maxHits?: number } = {}): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  await searchDatabase(db, parseSearchQuery(text), { onHits: (h) => hits.push(...h), ...options });
  return hits;
}

/** trip: turn 1 user+assistant; turn 2 user, get_weather call, its output (an SDK tool error), assistant; then a branch. */
async function writeTrip(folder: TempFolder): Promise<string> {
  const path = folder.path();
  const s = folder.session({ sessionId: 'trip' });
  await s.addItems([
    { role: 'user', content: 'Plan a day in Lisbon. STRASSE test' },
    { role: 'assistant', content: [{ type: 'output_text', text: 'Start at Belém, then the role of trams.' }] },
  ] as never);
  await s.addItems([
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'And the weather, 22°C?' },
        { type: 'input_image', image_url: 'data:image/png;base64,d2VhdGhlcg==' },
      ],
    },
    { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Lisbon"}' },
    { type: 'function_call_output', call_id: 'c1', output: 'An error occurred while running the tool. Please try again. Error: boom' },
    { type: 'web_search_call', id: 'ws1', status: 'failed', action: { type: 'search', query: 'lisbon rain' } },
    { role: 'assistant', content: [{ type: 'output_text', text: 'I could not get the weather.' }] },
  ] as never);
  await s.createBranchFromTurn(2, 'alt');
  await s.addItems([{ role: 'user', content: 'Something else: straße' }] as never);
  return path;
}

describe('searchDatabase', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('matches the text of items in any case, never JSON keys, with the match ranges in the snippet', async () => {
    const db = folder.inspect(await writeTrip(folder));
    const weather = await run(db, 'WEATHER');
    assert.deepEqual(
      weather.map((h) => [h.branchId, h.turn, h.itemType, h.snippet.text]),
      [
        ['main', 2, 'user', 'And the weather, 22°C?'],
        ['main', 2, 'assistant', 'I could not get the weather.'],
      ],
    );
    assert.deepEqual(weather[0]!.snippet.ranges, [[8, 15]]);
    // JSON keys and types are not text: "role" occurs only as a word in the assistant's text; "content", "input_text",
    // "call_id" and the image's data never match.
    assert.deepEqual(
      (await run(db, 'role')).map((h) => h.snippet.text),
      ['Start at Belém, then the role of trams.'],
    );
    for (const key of ['content', 'input_text', 'call_id', 'd2VhdGhlcg']) assert.deepEqual(await run(db, key), [], key);
    // Tool arguments and outputs are text too: the arguments' values, not their names or JSON punctuation.
    assert.deepEqual(
      (await run(db, 'lisbon')).map((h) => [h.itemType, h.snippet.text]),
      [
        ['user', 'Plan a day in Lisbon. STRASSE test'],
        ['function_call', 'Lisbon'],
        ['web_search_call', 'lisbon rain'],
      ],
    );
    for (const notText of ['city', '"city":"lisbon"']) assert.deepEqual(await run(db, notText), [], notText);
    assert.deepEqual(
      (await run(db, 'lisbon rain')).map((h) => h.itemType),
      ['web_search_call'],
    );
  });

  it('folds Unicode as §12 (a) says (ß and SS alike) and finds non-ASCII text Python stored as \\u escapes', async () => {
    const db = folder.inspect(await writeTrip(folder));
    assert.deepEqual(
      (await run(db, 'strasse')).map((h) => [h.branchId, h.snippet.text, h.snippet.ranges]),
      [
        ['main', 'Plan a day in Lisbon. STRASSE test', [[22, 29]]],
        ['alt', 'Something else: straße', [[16, 22]]],
      ],
    );
    assert.deepEqual((await run(db, '22°c')).length, 1);
    // ref-basic.db was written by Python (json.dumps escapes non-ASCII); add one escaped row the same way.
    const copy = join(folder.dir, 'ref-basic.db');
    copyFileSync(join(FIXTURES, 'ref-basic.db'), copy);
    const raw = folder.raw(copy);
    raw
      .prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)')
      .run('plain-py', '{"content": "caf\\u00e9 au lait \\u2014 22\\u00b0C", "role": "user"}');
    raw.close();
    const py = folder.inspect(copy);
    assert.deepEqual(
      (await run(py, 'CAFÉ')).map((h) => [h.sessionId, h.branchId, h.turn, h.snippet.text]),
      [['plain-py', 'main', 1, 'café au lait — 22°C']],
    );
    assert.deepEqual((await run(py, '\\u00e9')).length, 0, 'the escape is not text');
    assert.deepEqual(
      (await run(py, 'PARIS')).map((h) => [h.sessionId, h.turn, h.role]),
      [['basic_session', 1, 'assistant']],
    );
  });

  it('finds values Python escaped inside tool arguments, shows them decoded, and never matches argument names', async () => {
    // A tool that builds its arguments with Python's json.dumps (ensure_ascii): the arguments text holds \u escapes,
    // and the row escapes that text once more.
    const copy = join(folder.dir, 'ref-basic.db');
    copyFileSync(join(FIXTURES, 'ref-basic.db'), copy);
    const raw = folder.raw(copy);
    const call = (args: string, id: string): string =>
      JSON.stringify({ type: 'function_call', call_id: id, name: 'get_weather', arguments: args }).replace(
        /[\u0080-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
    const insert = raw.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    insert.run('py-args', '{"content": "weather?", "role": "user"}');
    insert.run('py-args', call('{"city": "\\uc11c\\uc6b8", "celsius": 22}', 'k'));
    insert.run('py-args', call('{"city": "S\\u00e3o Paulo", "note": "caf\\u00e9"}', 'a'));
    insert.run('py-args', call('{"sky": "\\ud83c\\udf27\\ufe0f rain", "path": "C:\\\\u00e9"}', 'e'));
    raw.close();
    const py = folder.inspect(copy);
    const found = async (text: string): Promise<string[]> => (await run(py, text)).map((h) => h.snippet.text);
    assert.deepEqual(await found('서울'), ['서울']);
    assert.deepEqual(await found('são'), ['São Paulo']);
    assert.deepEqual(await found('CAFÉ'), ['café']);
    assert.deepEqual(await found('🌧'), ['🌧️ rain']);
    assert.deepEqual(await found('22'), ['22']);
    // Names are not text, nor is an escape, nor an escaped backslash's "u00e9" read as é.
    assert.deepEqual(await found('celsius'), []);
    assert.deepEqual(await found('city'), []);
    assert.deepEqual(await found('\\uc11c'), []);
    assert.deepEqual(await found('C:é'), []);
    assert.deepEqual(await found('C:\\u00e9'), ['C:\\u00e9']);
    // Without text, a call's hit shows its arguments as people read them.
    const byTool = await run(py, 'tool:get_weather');
    assert.deepEqual(
      byTool.map((h) => h.snippet.text),
      ['{"city": "서울", "celsius": 22}', '{"city": "São Paulo", "note": "café"}', '{"sky": "🌧️ rain", "path": "C:\\\\u00e9"}'],
    );
  });

  it('lets through in SQL exactly the rows with a character that folds into the needle, escaped or not', async () => {
    // The SQL prefilter narrows escaped and non-ASCII rows to those holding one of the needle's folding characters
    // (ß for s, the Kelvin sign for k); Python escapes them (hex in either case), the JS SDK writes them as they are.
    const copy = join(folder.dir, 'ref-basic.db');
    copyFileSync(join(FIXTURES, 'ref-basic.db'), copy);
    const raw = folder.raw(copy);
    const insert = raw.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    insert.run('plain-py', '{"content": "STRA\\u00DFE \\u2014 a \\u212aelvin scale", "role": "user"}');
    insert.run('plain-py', '{"content": "\\u017fome \\u00e9 text", "role": "user"}');
    insert.run('plain-js', '{"role":"user","content":"300 \u212aelvin, straße"}');
    raw.close();
    const py = folder.inspect(copy);
    // NFC turns the Kelvin sign into K, in the snippet too.
    const found = async (text: string): Promise<string[]> => (await run(py, text)).map((h) => h.snippet.text.normalize('NFC'));
    assert.deepEqual(await found('strasse'), ['STRAßE — a Kelvin scale', '300 Kelvin, straße']);
    assert.deepEqual(await found('KELVIN'), ['STRAßE — a Kelvin scale', '300 Kelvin, straße']);
    assert.deepEqual(await found('some'), ['\u017fome é text']);
    assert.deepEqual(await found('lvin s'), ['STRAßE — a Kelvin scale']);
  });

  it('runs the longest query allowed, even where folding and escaping grow its SQL pattern most', async () => {
    // SQLite refuses a LIKE pattern over 50,000 bytes ("LIKE or GLOB pattern too complex"): the bound keeps the worst
    // cases under it. ﬃ folds into three ASCII letters, % is escaped as two characters; each as text and as a tool.
    const db = folder.inspect(await writeTrip(folder));
    for (const c of ['\ufb03', '%', 'a']) {
      const max = c.repeat(10_000);
      assert.deepEqual(await run(db, max), [], c);
      assert.deepEqual(await run(db, `tool:${max.slice(5)}`), [], `tool:${c}`);
    }
  });

  it('finds tool calls by name, failed calls, and messages by role', async () => {
    const db = folder.inspect(await writeTrip(folder));
    const tool = await run(db, 'tool:GET_WEATHER');
    assert.deepEqual(
      tool.map((h) => [h.itemType, h.toolName, h.failed]),
      [
        ['function_call', 'get_weather', null],
        ['function_call_output', 'get_weather', 'tool error'],
      ],
    );
    assert.deepEqual(
      (await run(db, 'is:failed')).map((h) => [h.itemType, h.toolName, h.failed]),
      [
        ['function_call_output', 'get_weather', 'tool error'],
        ['web_search_call', 'web_search_call', 'status failed'],
      ],
    );
    assert.deepEqual(
      (await run(db, 'is:failed boom')).map((h) => h.itemType),
      ['function_call_output'],
    );
    assert.deepEqual((await run(db, 'tool:get_weather is:failed')).length, 1);
    assert.deepEqual((await run(db, 'tool:other')).length, 0);
    assert.deepEqual(
      (await run(db, 'role:user')).map((h) => [h.branchId, h.turn]),
      [
        ['main', 1],
        ['main', 2],
        ['alt', 2],
      ],
    );
    assert.deepEqual(
      (await run(db, 'role:assistant weather')).map((h) => h.turn),
      [2],
    );
  });

  it('reports a turn shared by several branches once, under the branch that ran it, naming the others', async () => {
    const db = folder.inspect(await writeTrip(folder));
    const lisbon = await run(db, 'lisbon.');
    assert.deepEqual(
      lisbon.map((h) => [h.branchId, h.turn, h.sharedWith]),
      [['main', 1, ['alt']]],
    );
    // Turn 2 of main is not shared (alt was forked at turn 2).
    assert.deepEqual(
      (await run(db, 'could not')).map((h) => h.sharedWith),
      [[]],
    );
  });

  it('names the branches another connection forks or deletes between two searches on one connection', async () => {
    // The branch trees are kept per connection between searches (keptScanFacts.ts): a tree kept past a commit would name
    // branches that are gone and miss new ones.
    const path = await writeTrip(folder);
    const db = folder.inspect(path);
    const writer = folder.session({ sessionId: 'trip' });
    const shared = async (text: string): Promise<unknown> => (await run(db, text)).map((h) => [h.branchId, h.turn, h.sharedWith]);
    assert.deepEqual(await shared('lisbon.'), [['main', 1, ['alt']]]);
    await writer.switchToBranch('main');
    await writer.createBranchFromTurn(2, 'second');
    assert.deepEqual(await shared('lisbon.'), [['main', 1, ['alt', 'second']]]);
    // The same answer again from what is kept, and from a review filter, which reads the tree for the turn's origin.
    assert.deepEqual(await shared('lisbon.'), [['main', 1, ['alt', 'second']]]);
    const copyOfTurn1 = { mode: 'only' as const, keys: [`trip\u0000second\u00001`, `trip\u0000main\u00001`] };
    const reviewed = async (): Promise<unknown> => {
      const hits: SearchHit[] = [];
      await searchDatabase(db, parseSearchQuery('is:bad'), { onHits: (h) => hits.push(...h), turns: copyOfTurn1 });
      return hits.map((h) => [h.branchId, h.turn, h.sharedWith]);
    };
    assert.deepEqual(await reviewed(), [['main', 1, ['alt', 'second']]]);
    await writer.deleteBranch('alt', true);
    assert.deepEqual(await shared('lisbon.'), [['main', 1, ['second']]]);
    assert.deepEqual(await reviewed(), [['main', 1, ['second']]]);
    // A fork of the fork's first turn: its turn 1 came from main, still named under main.
    await writer.switchToBranch('second');
    await writer.addItems([{ role: 'user', content: 'Second thoughts' }] as never);
    await writer.createBranchFromTurn(2, 'third');
    assert.deepEqual(await reviewed(), [['main', 1, ['second', 'third']]]);
  });

  it('finds a plain session another connection writes between two searches on one connection', async () => {
    // The list of plain sessions is kept per connection between searches too (keptScanFacts.ts): one kept past a commit
    // would miss the new session, by its text and by a review filter naming its turn.
    const path = await writeTrip(folder);
    const db = folder.inspect(path);
    const plainTurn = { mode: 'only' as const, keys: ['late\u0000main\u00001', 'trip\u0000main\u00001'] };
    const found = async (text: string, turns?: typeof plainTurn): Promise<unknown> => {
      const hits: SearchHit[] = [];
      await searchDatabase(db, parseSearchQuery(text), { onHits: (h) => hits.push(...h), ...(turns ? { turns } : {}) });
      return hits.map((h) => [h.sessionId, h.branchId, h.turn]);
    };
    assert.deepEqual(await found('zanzibar'), []);
    assert.deepEqual(await found('is:bad', plainTurn), [['trip', 'main', 1]]);
    const late = folder.track(new SQLiteSession({ sessionId: 'late', dbPath: path }));
    await late.addItems([{ role: 'user', content: 'Off to zanzibar' }] as never);
    assert.deepEqual(await found('zanzibar'), [['late', 'main', 1]]);
    assert.deepEqual(await found('is:bad', plainTurn), [
      ['trip', 'main', 1],
      ['late', 'main', 1],
    ]);
  });

  it('searches plain sessions (no structure rows) with turns counted as the view counts them', async () => {
    const path = folder.path('plain.db');
    const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: path }));
    await s.addItems([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'needle A' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: 'two' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'needle B' }] },
    ] as never);
    const hits = await run(folder.inspect(path), 'NEEDLE');
    assert.deepEqual(
      hits.map((h) => [h.sessionId, h.branchId, h.turn, h.snippet.text]),
      [
        ['p', 'main', 1, 'needle A'],
        ['p', 'main', 2, 'needle B'],
      ],
    );
  });

  it('takes time by the rows, not by the largest id: sparse and huge ids are scanned in a moment', async () => {
    const path = await writeTrip(folder);
    const queries = ['lisbon', 'straße', 'weather', 'role:user', 'tool:get_weather is:failed', 'zanzibar'];
    const hitsOf = async (file: string) => {
      const db = folder.inspect(file);
      const out: unknown[] = [];
      for (const q of queries) {
        const hits: SearchHit[] = [];
        // Windows of ids from 0 to the largest took 3 s for an id of 1e10 and never ended for one near 2^53.
        const summary = await searchDatabase(db, parseSearchQuery(q), {
          onHits: (h) => hits.push(...h),
          signal: AbortSignal.timeout(4000),
        });
        assert.equal(summary.cancelled, false, `${q}: the scan ran past 4 s`);
        out.push(
          q,
          hits.map((h) => [h.sessionId, h.branchId, h.turn, h.itemType, h.snippet.text, h.sharedWith]),
        );
      }
      db.close();
      return out;
    };
    const before = await hitsOf(path);
    assert.ok(JSON.stringify(before).includes('Something else: straße'), 'the last row is a hit');
    // The two last structure rows (alt's copy of turn 1's answer, then its own question) moved far apart, in order.
    // better-sqlite3 reads an id past 2^53 (as the nearest double); node:sqlite's default throws on one.
    const raw = folder.raw(path);
    const huge = raw.driver === 'better-sqlite3' ? '9007199254740999' : String(2 ** 50 + 7);
    const ids = raw
      .prepare('SELECT id FROM message_structure ORDER BY id DESC LIMIT 2')
      .all<{ id: number }>()
      .map((r) => Number(r.id));
    raw.exec(`UPDATE message_structure SET id = 10000000000 WHERE id = ${ids[1]}`);
    raw.exec(`UPDATE message_structure SET id = ${huge} WHERE id = ${ids[0]}`);
    raw.close();
    assert.deepEqual(await hitsOf(path), before);

    // A plain session's messages (no structure table's ids: its own, paged in order) the same way.
    const plainPath = folder.path('plain-sparse.db');
    const p = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: plainPath }));
    await p.addItems([
      { role: 'user', content: 'one needle' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'needle two' }] },
      { role: 'user', content: 'three needle' },
    ] as never);
    p.close();
    const plainRaw = folder.raw(plainPath);
    plainRaw.exec('UPDATE agent_messages SET id = 10000000000 WHERE id = 2');
    plainRaw.exec(`UPDATE agent_messages SET id = ${huge} WHERE id = 3`);
    plainRaw.close();
    const db = folder.inspect(plainPath);
    const hits = await run(db, 'needle');
    assert.deepEqual(
      hits.map((h) => [h.turn, h.snippet.text]),
      [
        [1, 'one needle'],
        [1, 'needle two'],
        [2, 'three needle'],
      ],
    );
  });

  it('searches a plain session past a row that is not JSON (the SQL never decodes it), as the structured scan does', async () => {
    const path = folder.path('plain-bad.db');
    const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: path }));
    await s.addItems([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'needle A' }] },
    ] as never);
    const raw = openDatabase(path, {});
    raw.prepare("INSERT INTO agent_messages (session_id, message_data) VALUES ('p', 'not json {')").run();
    raw.close();
    await s.addItems([
      { role: 'user', content: 'two' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'needle B' }] },
    ] as never);
    const db = folder.inspect(path);
    assert.deepEqual(
      (await run(db, 'needle')).map((h) => [h.turn, h.snippet.text]),
      [
        [1, 'needle A'],
        [2, 'needle B'],
      ],
    );
    assert.deepEqual(
      (await run(db, 'role:user')).map((h) => [h.turn, h.snippet.text]),
      [
        [1, 'one'],
        [2, 'two'],
      ],
    );
  });

  it('shows an MCP call found by filters alone by its arguments, as a function call, not its server label', async () => {
    const path = folder.path('tools.db');
    await writeBuiltinToolSession(path);
    const hits = await run(folder.inspect(path), 'tool:deepwiki.ask_question');
    const call = hits.find((h) => h.itemType.includes('mcp_call'));
    assert.ok(call, hits.map((h) => h.itemType).join(', '));
    assert.equal(call.snippet.text, '{"repo":"openai/openai-agents-python","question":"What is a session?"}');
  });

  it('agrees with the Python fixtures: user turns found by content, every session and branch', async () => {
    const db = folder.inspect(join(FIXTURES, 'ref-multisession.db'));
    const hits = await run(db, 'role:user');
    const rows = sql<{ n: number }>(
      join(FIXTURES, 'ref-multisession.db'),
      "SELECT count(*) AS n FROM agent_messages WHERE json_extract(message_data, '$.role') = 'user'",
    );
    assert.equal(hits.length, rows[0]!.n, 'each stored user message once, shared or not');
    assert.ok(new Set(hits.map((h) => h.sessionId)).size > 1, 'several sessions');
  });

  it('streams hits in batches as found, stops at maxHits, and stops when cancelled', async () => {
    const path = folder.path('big.db');
    const s = folder.session({ dbPath: path, sessionId: 'big' });
    for (let t = 0; t < 30; t++) {
      await s.addItems(Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: `turn ${t} item ${i} needle` })) as never);
    }
    const db = folder.inspect(path);
    const batches: number[] = [];
    const summary = await searchDatabase(db, parseSearchQuery('needle'), { onHits: (h) => batches.push(h.length) });
    assert.equal(summary.hits, 3000);
    assert.ok(batches.length >= 2, `several batches (${batches.join(', ')})`);
    assert.equal(batches[0], 200, 'the first batch is small, so the first hits come quickly');

    const capped = await searchDatabase(db, parseSearchQuery('needle'), { onHits: () => undefined, maxHits: 10 });
    assert.deepEqual([capped.hits, capped.truncated], [10, true]);

    const controller = new AbortController();
    let seen = 0;
    const cancelled = await searchDatabase(db, parseSearchQuery('needle'), {
      signal: controller.signal,
      onHits: (h) => {
        seen += h.length;
        controller.abort();
      },
    });
    assert.deepEqual([cancelled.cancelled, cancelled.hits, seen], [true, 200, 200]);
  });

  it('stops the worker when cancelled', async () => {
    const path = folder.path('many.db');
    const s = folder.session({ dbPath: path, sessionId: 'many' });
    for (let t = 0; t < 30; t++) await s.addItems(Array.from({ length: 100 }, () => ({ role: 'user', content: 'needle' })) as never);
    let hits = 0;
    const worker = startWorkerSearch(
      join(__dirname, '..', '..', '..', '..', 'src', 'store', 'search', 'searchWorker.ts'),
      { paths: [path], query: parseSearchQuery('needle') },
      { onHits: (_p, h) => (hits += h.length) },
      { execArgv: ['--require', 'tsx/cjs'] },
    );
    // Asked before its first batch is out: the request waits in the worker's queue, and the worker reads it at a
    // yield between batches (3,000 rows are three; here it stops after the second), so it cannot scan them all.
    // Cancelling on the first hits raced it instead: under load the worker had sent all three batches before this
    // thread read the first (3000 of 3000, node:sqlite, Node 22).
    worker.cancel();
    assert.deepEqual(await worker.finished, { cancelled: true, capped: false, notSearched: [] });
    assert.ok(hits < 3000, `stopped early (${hits} of 3000)`);
  });

  it('keeps the index of tool items in the folder it is given, and says so when it cannot use one', async function () {
    // Three workers started under tsx, each compiling the sources: seconds each when the suite runs beside another
    // phase.
    this.timeout(90_000);
    const path = await writeTrip(folder);
    const search = (indexDir: string) => {
      const hits: SearchHit[] = [];
      const notices: string[] = [];
      const worker = startWorkerSearch(
        join(__dirname, '..', '..', '..', '..', 'src', 'store', 'search', 'searchWorker.ts'),
        { paths: [path], query: parseSearchQuery('tool:get_weather'), indexDir },
        { onHits: (_p, h) => hits.push(...h), onNotice: (_p, m) => notices.push(m) },
        { execArgv: ['--require', 'tsx/cjs'] },
      );
      // After the thread ended: a late catching up of the index is done then, and its notices are in.
      return Promise.all([worker.finished, worker.exited]).then(() => ({ hits: hits.map((h) => [h.itemType, h.messageId]), notices }));
    };
    const expected = (await run(folder.inspect(path), 'tool:get_weather')).map((h) => [h.itemType, h.messageId]);
    assert.ok(expected.length >= 2);
    const indexDir = folder.path('indexes');
    assert.deepEqual(await search(indexDir), { hits: expected, notices: [] });
    assert.equal(readdirSync(indexDir).filter((n) => n.endsWith('.db')).length, 1);
    // A file where the folder should be: the search goes on without an index, and says why.
    const blocked = folder.path('not-a-folder');
    writeFileSync(blocked, 'x');
    const without = await search(blocked);
    assert.deepEqual(without.hits, expected);
    assert.equal(without.notices.length, 1);
    assert.match(without.notices[0]!, /search index .*was not used/);
    // A file 20,000 messages past its index (more than `CATCH_UP_FIRST`): the worker searches without it, posts
    // everything, then brings the index up to date before it ends.
    const raw = folder.raw(path);
    raw.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20001)
      INSERT INTO agent_messages (session_id, message_data) SELECT 'trip', '{"role":"user","content":"filler"}' FROM n`);
    const messageMax = Number((raw.prepare('SELECT max(id) AS m FROM agent_messages').get() as { m: number }).m);
    raw.close();
    const fresh = folder.path('fresh-indexes');
    assert.deepEqual(await search(fresh), { hits: expected, notices: [] });
    const through = (): number => {
      const file = existsSync(fresh) ? readdirSync(fresh).find((n) => n.endsWith('.db')) : undefined;
      if (!file) return -1;
      const db = openDatabase(join(fresh, file), { readonly: true });
      try {
        return Number(db.prepare("SELECT value FROM index_meta WHERE key = 'through'").get<{ value: string }>()?.value ?? -1);
      } finally {
        db.close();
      }
    };
    // Caught up after `finished`, before the worker ended (`search` waits for both); read only then: a reader polling
    // the index while the worker made it could hold the lock its schema's commit needed (it never waits for one).
    assert.equal(through(), messageMax);
  });

  it('says when the worker stopped at the hit limit, and which files it never opened', async () => {
    const first = await writeTrip(folder);
    const second = folder.path('second.db');
    const s = folder.session({ dbPath: second, sessionId: 'second' });
    await s.addItems([{ role: 'user', content: 'weather again' }] as never);
    const third = folder.path('third.db');
    folder.session({ dbPath: third, sessionId: 'third' });
    const search = (maxHits: number) => {
      const hits: SearchHit[] = [];
      const worker = startWorkerSearch(
        join(__dirname, '..', '..', '..', '..', 'src', 'store', 'search', 'searchWorker.ts'),
        { paths: [first, second, third], query: parseSearchQuery('weather'), maxHits },
        { onHits: (_p, h) => hits.push(...h) },
        { execArgv: ['--require', 'tsx/cjs'] },
      );
      return worker.finished.then((end) => ({ end, hits: hits.length }));
    };
    // trip has 2 hits: a limit of 2 stops in it (there may be more) and never opens the other two files.
    assert.deepEqual(await search(2), { end: { cancelled: false, capped: true, notSearched: [second, third] }, hits: 2 });
    assert.deepEqual(await search(3), { end: { cancelled: false, capped: true, notSearched: [third] }, hits: 3 });
    assert.deepEqual(await search(10), { end: { cancelled: false, capped: false, notSearched: [] }, hits: 3 });
  });

  it('review filters: the turns the review store allows, a user message per turn when they stand alone', async () => {
    const path = await writeTrip(folder);
    const db = folder.inspect(path);
    const reviews = ReviewStore.open(folder.path('reviews.db'));
    try {
      reviews.setTurnReview({ sessionId: 'trip', branchId: 'main', turn: 1, turnKey: '1'.repeat(32) }, { verdict: 'good' });
      reviews.setTurnReview(
        { sessionId: 'trip', branchId: 'main', turn: 2, turnKey: '2'.repeat(32) },
        { verdict: 'bad', tags: ['wrong-tool'] },
      );
      const withReviews = async (text: string): Promise<SearchHit[]> => {
        const query = parseSearchQuery(text);
        const hits: SearchHit[] = [];
        await searchDatabase(db, query, { onHits: (h) => hits.push(...h), turns: reviewTurnSet(query.review!, reviews.turnReviews(null)) });
        return hits;
      };
      const where = (hits: SearchHit[]) => hits.map((h) => `${h.branchId}:${h.turn}:${h.itemType}`);
      assert.deepEqual(where(await withReviews('is:bad')), ['main:2:user']);
      assert.deepEqual(where(await withReviews('reviewed:no')), ['alt:2:user']);
      assert.deepEqual(where(await withReviews('reviewed:yes')), ['main:1:user', 'main:2:user']);
      assert.deepEqual(where(await withReviews('tag:wrong-tool tool:get_weather')), [
        'main:2:function_call',
        'main:2:function_call_output',
      ]);
      assert.deepEqual(await withReviews('is:good weather'), []);
      assert.equal((await withReviews('is:bad weather')).length, 2);
      // Review filters with no turn set (the reviews could not be read) find nothing rather than everything.
      assert.deepEqual(await run(db, 'is:bad'), []);
      // The worker takes each file's set.
      const hits: SearchHit[] = [];
      const worker = startWorkerSearch(
        join(__dirname, '..', '..', '..', '..', 'src', 'store', 'search', 'searchWorker.ts'),
        {
          paths: [path],
          query: parseSearchQuery('is:bad'),
          turns: { [path]: reviewTurnSet(parseSearchQuery('is:bad').review!, reviews.turnReviews(null)) },
        },
        { onHits: (_p, h) => hits.push(...h) },
        { execArgv: ['--require', 'tsx/cjs'] },
      );
      await worker.finished;
      assert.deepEqual(where(hits), ['main:2:user']);
    } finally {
      reviews.close();
    }
  });

  it('runs in a worker thread and streams the same hits back', async () => {
    const path = await writeTrip(folder);
    const hits: SearchHit[] = [];
    const done: string[] = [];
    const worker = startWorkerSearch(
      join(__dirname, '..', '..', '..', '..', 'src', 'store', 'search', 'searchWorker.ts'),
      { paths: [path, join(folder.dir, 'missing.db')], query: parseSearchQuery('weather') },
      { onHits: (_p, h) => hits.push(...h), onDone: (p) => done.push(p), onError: (p, m) => done.push(`${p}: ${m.slice(0, 20)}`) },
      { execArgv: ['--require', 'tsx/cjs'] },
    );
    const end = await worker.finished;
    assert.deepEqual(end, { cancelled: false, capped: false, notSearched: [] });
    assert.equal(hits.length, 2);
    assert.equal(done.length, 2);
    assert.match(done[1]!, /missing\.db: /);
  });
});
