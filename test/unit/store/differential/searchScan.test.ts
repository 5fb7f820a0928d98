/**
 * The file search that keeps a verdict per message (src/store/search/searchDatabase.ts) against the search as it was
 * before (test/support/searchOracle.ts: every structure row tested on its message's text, copies included): on every
 * fixture file (test/fixtures/**.db) and on files written here to hold what the verdicts must get right — branches
 * copying turns (nested forks, a deleted branch), a history rewrite re-pointing a row to a new message, plain
 * sessions, failed calls of every kind, JS-shaped rows with raw UTF-8, an output written before its call — every
 * query must give exactly the same hits, every field, in the same order, and the same summary, whatever the hit
 * limit or session. Runs on better-sqlite3 under `npx mocha`, and on node:sqlite through scripts/runStoreSuites.mjs.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import {
  parseSearchQuery,
  searchDatabase,
  type SearchHit,
  type SearchOptions,
  type SearchSummary,
  type SessionDatabase,
} from '../../../../src/store';
import { turnSetKey, type TurnSet } from '../../../../src/store/search/reviewTurns';
import { oracleSearchDatabase } from '../../../support/searchOracle';
import { TempFolder } from '../inspector/inspectorFixtures';
import { planOps, scaleFileSpec, turnContent } from '../../../../scripts/bench/scaleFiles';

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures');

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return fixtureFiles(path);
    return name.endsWith('.db') ? [path] : [];
  });
}

/** One query per filter and their mixes; review filters get their turns from `turnSets`. */
const QUERIES = [
  'weather',
  'WEATHER',
  'berlin',
  'zanzibar',
  'strasse',
  'café',
  '22°c',
  'turn 2',
  'tool:get_weather',
  'tool:crm.lookup',
  'tool:web_search_call',
  'tool:get_weather tool:run_query',
  'tool:get_weather tool:café',
  'tool:get_weather is:failed',
  'tool:get_weather rain',
  'is:failed',
  'is:failed error',
  'role:user',
  'role:assistant',
  'role:system',
  'role:user weather',
  'role:user role:assistant',
  'is:bad',
  'is:bad role:assistant',
  'is:good weather',
  'is:good role:assistant',
  'reviewed:yes',
  'reviewed:no',
  'reviewed:yes tool:get_weather',
];

interface Run {
  hits: SearchHit[];
  summary: Omit<SearchSummary, 'elapsedMs'>;
}

async function run(
  scan: typeof searchDatabase,
  db: SessionDatabase,
  text: string,
  options: Pick<SearchOptions, 'maxHits' | 'sessionId' | 'turns' | 'index'>,
): Promise<Run> {
  const hits: SearchHit[] = [];
  // countItems: the two count the items searched each their own way (SQLite's count, rows read and counted).
  const { elapsedMs: _elapsed, ...summary } = await scan(db, parseSearchQuery(text), {
    onHits: (h) => hits.push(...h),
    countItems: true,
    ...options,
  });
  if (!summary.truncated && !summary.cancelled) assert.equal(typeof summary.itemsSearched, 'number', 'a whole scan counts its items');
  // Where a scan stopped at the limit depends on its batches, which follow the clock: only a whole scan's count is fixed.
  return { hits, summary: summary.truncated ? { ...summary, rowsScanned: -1 } : summary };
}

/**
 * Review turn sets built from the file's own turns: every third turn of each branch "bad" (turn 0, before the first
 * user message, among them), every fourth "good"; the keys in reverse order, as a review store may list them.
 */
function turnSets(db: SessionDatabase): Record<'bad' | 'good' | 'reviewed', TurnSet> {
  const keys: Record<'bad' | 'good', string[]> = { bad: [], good: [] };
  for (const s of db.listSessions()) {
    for (const b of db.getBranchTree(s.sessionId)) {
      for (let turn = 0; turn <= b.userTurns; turn++) {
        if (turn % 3 === 0) keys.bad.push(turnSetKey(s.sessionId, b.branchId, turn));
        if (turn % 4 === 2) keys.good.push(turnSetKey(s.sessionId, b.branchId, turn));
      }
    }
  }
  return {
    bad: { mode: 'only', keys: [...keys.bad].reverse() },
    good: { mode: 'only', keys: [...keys.good].reverse() },
    reviewed: { mode: 'except', keys: [...keys.bad, ...keys.good] },
  };
}

function turnsFor(text: string, sets: ReturnType<typeof turnSets>): TurnSet | undefined {
  if (text.includes('is:bad')) return sets.bad;
  if (text.includes('is:good')) return sets.good;
  if (text.includes('reviewed:no')) return sets.reviewed;
  if (text.includes('reviewed:yes')) return { mode: 'only', keys: [...sets.bad.keys, ...sets.good.keys] };
  return undefined;
}

/**
 * Compares both scans on `path` for every query, with no limit, small limits and each session alone; and the scan with
 * the search's index of tool items (src/store/search/toolIndex.ts, built at the first query that uses it) against the
 * same expectations.
 */
async function compareOn(folder: TempFolder, path: string): Promise<number> {
  const db = folder.inspect(path);
  const index = { dir: `${path}.search-index`, onProblem: (message: string) => assert.fail(message) };
  const sets = turnSets(db);
  const sessions = db.listSessions().map((s) => s.sessionId);
  let compared = 0;
  for (const text of QUERIES) {
    const turns = turnsFor(text, sets);
    const variants: { maxHits?: number; sessionId?: string }[] = [
      {},
      { maxHits: 1 },
      { maxHits: 3 },
      ...sessions.map((sessionId) => ({ sessionId })),
    ];
    for (const v of variants) {
      const options = { ...v, ...(turns ? { turns } : {}) };
      const expected = await run(oracleSearchDatabase, db, text, options);
      const actual = await run(searchDatabase, db, text, options);
      assert.deepEqual(actual, expected, `${relative(FIXTURES, path) || path}: ${JSON.stringify(text)} ${JSON.stringify(v)}`);
      const indexed = await run(searchDatabase, db, text, { ...options, index });
      assert.deepEqual(
        indexed,
        expected,
        `${relative(FIXTURES, path) || path}: ${JSON.stringify(text)} ${JSON.stringify(v)}, with the index`,
      );
      compared++;
    }
  }
  return compared;
}

const user = (text: string): AgentInputItem => ({ role: 'user', content: text }) as AgentInputItem;
const assistant = (text: string): AgentInputItem =>
  ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] }) as AgentInputItem;
const call = (id: string, name: string, args: string): AgentInputItem =>
  ({ type: 'function_call', call_id: id, name, arguments: args }) as unknown as AgentInputItem;
const output = (id: string, text: string): AgentInputItem =>
  ({ type: 'function_call_output', call_id: id, output: text }) as unknown as AgentInputItem;

/** Turns with every kind of item the filters look at, failed ones included. */
function turn(n: number, tag: string): AgentInputItem[] {
  const tool = ['get_weather', 'run_query', 'search_docs'][n % 3]!;
  const id = `c_${tag}_${n}`;
  const failed = n % 4 === 1;
  return [
    user(`Turn ${n} ${tag}: weather in Berlin? straße café ${n % 5 === 0 ? 'zanzibar' : ''}`),
    call(id, tool, JSON.stringify({ city: n % 2 ? 'Berlin' : 'Lisbon', note: 'rain 22°C' })),
    output(id, failed ? 'An error occurred while running the tool. Please try again. Error: boom' : `sunny in Berlin, turn ${n}`),
    ...(n % 5 === 2
      ? [
          { type: 'web_search_call', id: `ws_${tag}_${n}`, status: 'failed', action: { type: 'search', query: 'berlin rain' } },
          { type: 'mcp_call', id: `mcp_${tag}_${n}`, server_label: 'crm', name: 'lookup', arguments: '{}', error: 'denied' },
          { type: 'function_call_output', call_id: `late_${n}`, output: "Tool 'get_weather' timed out after 5000ms." },
        ]
      : []),
    assistant(`It is ${failed ? 'unknown' : 'sunny'} in Berlin (turn ${n}).`),
  ] as AgentInputItem[];
}

describe('the search with verdicts per message gives the hits of the search without them', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('on every fixture file', async function () {
    this.timeout(120_000);
    const files = fixtureFiles(FIXTURES);
    assert.ok(files.length >= 2, 'the conformance fixtures are there');
    let compared = 0;
    for (const file of files) {
      const copy = folder.path(`fixture-${compared}.db`);
      copyFileSync(file, copy);
      for (const suffix of ['-wal', '-shm']) if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix);
      compared += await compareOn(folder, copy);
    }
    assert.ok(compared > 100);
  });

  it('on a file with long-lived branches, a deleted branch, a history rewrite, plain sessions and JS-shaped rows', async function () {
    this.timeout(120_000);
    const path = folder.path();
    const s = folder.session({ sessionId: 'trip' });
    for (let n = 1; n <= 12; n++) await s.addItems(turn(n, 'main'));
    await s.createBranchFromTurn(9, 'late');
    for (let n = 9; n <= 14; n++) await s.addItems(turn(n, 'late'));
    await s.createBranchFromTurn(11, 'nested');
    await s.addItems(turn(11, 'nested'));
    await s.switchToBranch('main');
    await s.createBranchFromTurn(3, 'early');
    await s.addItems(turn(3, 'early'));
    await s.createBranchFromTurn(2, 'doomed');
    await s.addItems(turn(2, 'doomed'));
    await s.switchToBranch('main');
    await s.deleteBranch('doomed', true);
    // A history rewrite points an early row at a new message (the highest id), then a branch copies it.
    await s.switchToBranch('late');
    await (s as unknown as Required<Pick<typeof s, 'applyHistoryMutations'>>).applyHistoryMutations({
      mutations: [
        { type: 'replace_function_call', callId: 'c_main_1', replacement: call('c_main_1', 'get_weather', '{"city":"Zanzibar"}') as never },
      ],
    });
    await s.createBranchFromTurn(13, 'after_rewrite');
    // An output stored before its call (a writer of its own), then copied by a branch: `tool:` names it only once
    // the call is learned, so the copy is a hit where the first row was not.
    const odd = folder.session({ sessionId: 'odd' });
    await odd.addItems([
      user('odd order'),
      output('c_odd', 'reply first'),
      call('c_odd', 'get_weather', '{"city":"Oslo"}'),
      assistant('done'),
    ]);
    // More rows than the first batches read (200, then at most 4 times as many) before the copy, so the copy's row is read in a later batch than the
    // output's first row: the verdict the first row left must be taken back when the call is learned.
    await odd.addItems([user('second turn'), ...Array.from({ length: 2000 }, (_, i) => assistant(`filler ${i}`))]);
    await odd.createBranchFromTurn(2, 'copy');
    // An answer on the copy, after the 2,000 above: reviews naming the copy's turn before main's (`turnSets` lists keys
    // backwards) must still give the hits in file order, across the chunks review filters read their rows in.
    await odd.addItems([user('on the copy'), assistant('copy answer')]);
    const raw = folder.raw(path);
    const insert = raw.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    // A plain session (no structure rows), and JS-shaped rows with raw UTF-8 (the JS SDK writes no \u escapes).
    raw.prepare('INSERT INTO agent_sessions (session_id) VALUES (?)').run('plain');
    insert.run('plain', '{"role":"user","content":"STRASSE in Berlin, 22°C, straße"}');
    insert.run(
      'plain',
      '{"type":"function_call_result","name":"get_weather","callId":"j1","status":"completed","output":{"type":"text","text":"An error occurred while running the tool"}}',
    );
    insert.run('plain', '{"type":"message","role":"system","content":"be brief, weather only"}');
    insert.run(
      'plain',
      '{"type":"message","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"Berlin ıs cold"}]}',
    );
    // A row without a turn number (another writer's item before the first user message): the scan counts it as turn 0.
    raw.prepare("UPDATE message_structure SET user_turn_number = NULL WHERE session_id = 'trip' AND sequence_number = 1").run();
    raw.close();
    const compared = await compareOn(folder, path);
    assert.ok(compared > 100);
    // The odd session's copy is the case the verdicts must take back: make sure it is there to be compared.
    const db = folder.inspect(path);
    // An MCP call is named by its server and tool, which its row holds apart: the prefilter lets it through.
    assert.deepEqual((await run(searchDatabase, db, 'tool:crm.lookup', {})).hits.map((h) => [h.itemType, h.toolName]).slice(0, 1), [
      ['mcp_call', 'crm.lookup'],
    ]);
    const hits = (await run(searchDatabase, db, 'tool:get_weather', { sessionId: 'odd' })).hits;
    assert.deepEqual(
      hits.map((h) => [h.branchId, h.itemType]),
      [
        ['main', 'function_call'],
        ['copy', 'function_call_output'],
      ],
    );
  });

  it('on tool outputs with odd rows: a call named by no structure row, repeated keys, a damaged output', async () => {
    // `tool:` names an output by its call: here the call is named by its own item only (another writer left the
    // structure row's tool name empty), an output by its structure row only, an output's JSON names a tool twice (JSON.parse keeps the last), and two
    // outputs are what SQLite would not read as JSON (Python's NaN) or not JSON at all.
    const path = folder.path();
    const s = folder.session({ sessionId: 'probe' });
    await s.addItems([
      user('weather'),
      call('c_bare', 'get_weather', '{"city":"Oslo"}'),
      output('c_bare', 'rain'),
      call('c_other', 'run_query', '{}'),
      output('c_other', 'rows'),
      output('c_twice', 'named twice'),
      output('c_nan', 'not a number'),
      output('c_bad', 'damaged'),
      call('c_nan', 'get_weather', '{}'),
      assistant('done'),
    ]);
    const raw = folder.raw(path);
    const idOf = (text: string): number =>
      (raw.prepare('SELECT id FROM agent_messages WHERE message_data LIKE ?').get(`%${text}%`) as { id: number }).id;
    // The first call of get_weather (c_bare): its structure row keeps no tool name.
    raw
      .prepare(
        `UPDATE message_structure SET tool_name = NULL WHERE id = (SELECT min(id) FROM message_structure
          WHERE session_id = 'probe' AND message_type = 'function_call' AND tool_name = 'get_weather')`,
      )
      .run();
    // The output of run_query's call: its structure row names get_weather (another writer's tool name, spec §6), which
    // the search takes for an item naming no tool itself; the index must leave it to that row.
    raw.prepare("UPDATE message_structure SET tool_name = 'get_weather' WHERE message_id = ?").run(idOf('"rows"'));
    const setText = raw.prepare('UPDATE agent_messages SET message_data = ? WHERE id = ?');
    setText.run(
      '{"type":"function_call_output","call_id":"c_twice","name":null,"output":"named twice","name":"get_weather"}',
      idOf('named twice'),
    );
    setText.run('{"type":"function_call_output","call_id":"c_nan","output":"not a number","score":NaN}', idOf('not a number'));
    setText.run('{"type":"function_call_output","call_id":"c_bad","output":"damaged"', idOf('damaged'));
    raw.close();
    assert.ok((await compareOn(folder, path)) > 0);
    const hits = (await run(searchDatabase, folder.inspect(path), 'tool:get_weather', {})).hits;
    assert.deepEqual(
      hits.map((h) => [h.itemType, h.snippet.text]),
      [
        ['function_call', '{"city":"Oslo"}'],
        ['function_call_output', 'rain'],
        ['function_call_output', 'rows'],
        ['function_call_output', 'named twice'],
        ['function_call', '{}'],
      ],
    );
  });

  it('on an output read in a later batch than its call, in a batch holding no call of the tool', async () => {
    // The first batch is structure rows 1–200: the call is row 200, its output row 201, in a batch where no message
    // judged so far is still in question (the call was reported): the output must still be read and named.
    const path = folder.path();
    const s = folder.session({ sessionId: 'split' });
    await s.addItems([user('weather please'), ...Array.from({ length: 198 }, (_, i) => assistant(`filler ${i}`))]);
    await s.addItems([call('c_split', 'get_weather', '{"city":"Oslo"}')]);
    await s.addItems([output('c_split', 'sunny'), assistant('done')]);
    assert.ok((await compareOn(folder, path)) > 0);
    const hits = (await run(searchDatabase, folder.inspect(path), 'tool:get_weather', {})).hits;
    assert.deepEqual(
      hits.map((h) => h.itemType),
      ['function_call', 'function_call_output'],
    );
  });

  it('on outputs named by their calls: parallel calls, another session between, a message naming the call id', async () => {
    // A hit's output is named by the nearest earlier row of its session holding its call id, read for the row just
    // before the output in one read and further back one output at a time: here the row before is the other parallel
    // call, another session's row holding the same id, and an assistant message naming the id (so no name).
    const path = folder.path();
    const p = folder.session({ sessionId: 'p' });
    const q = folder.session({ sessionId: 'q' });
    await p.addItems([
      user('weather in Berlin?'),
      call('c_p1', 'get_weather', '{"city":"Berlin"}'),
      call('c_p2', 'run_query', '{"q":"berlin"}'),
      output('c_p1', 'sunny in Berlin'),
      output('c_p2', 'rows for berlin'),
      call('c_p3', 'get_weather', '{"city":"Berlin"}'),
    ]);
    await q.addItems([user('berlin too'), output('c_p3', 'a stray answer in berlin')]);
    await p.addItems([
      output('c_p3', 'rain in Berlin'),
      call('c_p4', 'get_weather', '{}'),
      assistant('asked c_p4 about Berlin'),
      output('c_p4', 'cold in Berlin'),
    ]);
    assert.ok((await compareOn(folder, path)) > 0);
    const hits = (await run(searchDatabase, folder.inspect(path), 'berlin', {})).hits;
    assert.deepEqual(
      hits.filter((h) => h.itemType === 'function_call_output').map((h) => [h.sessionId, h.snippet.text, h.toolName]),
      [
        ['p', 'sunny in Berlin', 'get_weather'],
        ['p', 'rows for berlin', 'run_query'],
        ['q', 'a stray answer in berlin', null],
        ['p', 'rain in Berlin', 'get_weather'],
        ['p', 'cold in Berlin', null],
      ],
    );
  });

  it("on a small file shaped like the bench's file A (branches that copy most of main)", async function () {
    this.timeout(120_000);
    const spec = scaleFileSpec('A', 0.0008);
    for (const b of spec.sessions[0]!.branches) b.ownTurns = 12;
    const path = folder.path('scale-a.db');
    // Written through the store (the generator's own writer loads better-sqlite3, which node:sqlite runs lack).
    const s = folder.session({ sessionId: spec.sessions[0]!.sessionId, dbPath: path });
    let current = 'main';
    for (const op of planOps(spec)) {
      if (op.kind === 'branch') {
        await s.switchToBranch(op.source);
        current = await s.createBranchFromTurn(op.atTurn, op.name);
      } else {
        if (current !== op.branch) await s.switchToBranch((current = op.branch));
        await s.addItems(turnContent(op.sessionIndex, op.branch, op.turn).items as unknown as AgentInputItem[]);
      }
    }
    assert.ok((await compareOn(folder, path)) > 50);
  });
});
