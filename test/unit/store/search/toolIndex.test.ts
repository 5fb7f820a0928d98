/**
 * The search's index of tool items (src/store/search/toolIndex.ts) over a file's life: kept current as the file grows,
 * started again when the file is replaced or rewritten by another writer, and never in the way of a search when it
 * cannot be used. Every search here is compared with the same search without the index (the differential suite,
 * test/unit/store/differential/searchScan.test.ts, compares them on every fixture).
 */
import { strict as assert } from 'node:assert';
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { parseSearchQuery, searchDatabase, SessionDatabaseError, type SearchHit } from '../../../../src/store';
import { ruledOutByIndex, ToolIndex } from '../../../../src/store/search/toolIndex';
import { indexName, MAX_SEARCH_INDEXES } from '../../../../src/store/search/toolIndexFile';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { TempFolder } from '../inspector/inspectorFixtures';

const user = (text: string): AgentInputItem => ({ role: 'user', content: text }) as AgentInputItem;
const call = (id: string, name: string): AgentInputItem =>
  ({ type: 'function_call', call_id: id, name, arguments: '{"city":"Oslo"}' }) as unknown as AgentInputItem;
const output = (id: string, text: string): AgentInputItem =>
  ({ type: 'function_call_output', call_id: id, output: text }) as unknown as AgentInputItem;

function turn(n: number, tool: string, failed = false): AgentInputItem[] {
  return [
    user(`turn ${n}`),
    call(`c${n}`, tool),
    output(`c${n}`, failed ? 'An error occurred while running the tool. Error: boom' : `result ${n}`),
  ];
}

describe('the search index of tool items', () => {
  let folder: TempFolder;
  let indexDir: string;
  let problems: string[];
  beforeEach(() => {
    folder = new TempFolder();
    indexDir = folder.path('index');
    problems = [];
  });
  afterEach(() => folder.cleanup());

  /** The hits of `text` on `path`, with the index and without, which must agree; the hits with it. */
  async function search(path: string, text: string): Promise<SearchHit[]> {
    const db = folder.inspect(path);
    try {
      const hits = { with: [] as SearchHit[], without: [] as SearchHit[] };
      const query = parseSearchQuery(text);
      await searchDatabase(db, query, { onHits: (h) => hits.without.push(...h) });
      await searchDatabase(db, query, {
        onHits: (h) => hits.with.push(...h),
        index: { dir: indexDir, onProblem: (m) => problems.push(m) },
      });
      assert.deepEqual(hits.with, hits.without, `${text}: the same hits with the index`);
      return hits.with;
    } finally {
      db.close();
    }
  }

  /** What the one index file in the folder (or `file`) holds: its last message id and its rows. */
  function indexState(file?: string): { through: number; rows: number } {
    const files = readdirSync(indexDir).filter((n) => n.endsWith('.db'));
    if (file === undefined) assert.equal(files.length, 1, 'one index file for the one session file');
    const db = openDatabase(file ?? join(indexDir, files[0]!), { readonly: true });
    try {
      const through = Number(db.prepare("SELECT value FROM index_meta WHERE key = 'through'").get<{ value: string }>()?.value);
      const rows = Number(db.prepare('SELECT count(*) AS n FROM tool_items').get<{ n: number }>()?.n);
      return { through, rows };
    } finally {
      db.close();
    }
  }

  it('is made at the first tool: search and catches up with messages written since', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([...turn(1, 'get_weather'), ...turn(2, 'run_query'), ...turn(3, 'get_weather', true)]);
    assert.equal((await search(path, 'tool:get_weather')).length, 4);
    assert.deepEqual(indexState(), { through: 9, rows: 6 });
    await s.addItems([...turn(4, 'get_weather'), ...turn(5, 'run_query', true)]);
    const hits = await search(path, 'tool:get_weather');
    assert.deepEqual(
      hits.map((h) => h.snippet.text),
      [
        '{"city":"Oslo"}',
        'result 1',
        '{"city":"Oslo"}',
        'An error occurred while running the tool. Error: boom',
        '{"city":"Oslo"}',
        'result 4',
      ],
    );
    assert.deepEqual(indexState(), { through: 15, rows: 10 });
    // The same file by another path (a symbolic link): the same index, current as it is, not started again (a row
    // no message has, put there by hand, would go with a new start).
    const marker = openDatabase(
      join(
        indexDir,
        readdirSync(indexDir).find((n) => n.endsWith('.db'))!,
      ),
    );
    marker.prepare("INSERT INTO tool_items (message_id, name, call_id, flags) VALUES (1000000, 'marker', NULL, 1)").run();
    marker.close();
    const link = folder.path('link.db');
    symlinkSync(path, link);
    assert.equal((await search(link, 'tool:get_weather')).length, 6);
    assert.deepEqual(indexState(), { through: 15, rows: 11 });
    assert.equal((await search(path, 'is:failed')).length, 2);
    assert.equal((await search(path, 'tool:run_query is:failed')).length, 1);
    assert.deepEqual(problems, []);
  });

  it('hands a long catching up to `later` (run once the hits are out), and catches up a short one first', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([...turn(1, 'get_weather'), ...turn(2, 'run_query')]);
    const db = folder.inspect(path);
    try {
      const query = parseSearchQuery('tool:get_weather');
      const expected: SearchHit[] = [];
      await searchDatabase(db, query, { onHits: (h) => expected.push(...h) });
      const tasks: (() => void)[] = [];
      const option = {
        dir: indexDir,
        catchUpFirst: 5,
        later: (task: () => void) => tasks.push(task),
        onProblem: (m: string) => problems.push(m),
      };
      const run = async (signal?: AbortSignal): Promise<SearchHit[]> => {
        const hits: SearchHit[] = [];
        await searchDatabase(db, query, { onHits: (h) => hits.push(...h), index: option, signal });
        return hits;
      };
      // Six messages behind, more than 5: the search goes without, and leaves the catching up for later; a search
      // cancelled once its hits are out (Ctrl+C after the CLI's summary) stops that too.
      const cancel = new AbortController();
      assert.deepEqual(await run(cancel.signal), expected);
      assert.equal(tasks.length, 1);
      cancel.abort();
      tasks.shift()!();
      assert.deepEqual(indexState(), { through: 0, rows: 0 });
      assert.deepEqual(await run(), expected);
      assert.equal(tasks.length, 1);
      tasks.shift()!();
      assert.deepEqual(indexState(), { through: 6, rows: 4 });
      // Three behind: caught up before the scan.
      await s.addItems(turn(3, 'get_weather'));
      expected.length = 0;
      await searchDatabase(db, query, { onHits: (h) => expected.push(...h) });
      assert.deepEqual(await run(), expected);
      assert.equal(tasks.length, 0);
      assert.deepEqual(indexState(), { through: 9, rows: 6 });
      assert.deepEqual(problems, []);
    } finally {
      db.close();
    }
  });

  /**
   * Session `a` (get_weather then run_query) searched for `query` with the index, and another file of session `b`
   * whose messages have the same ids and other tools, both closed (each file holds its rows, not its -wal).
   */
  async function indexedThenOther(query: string, other: AgentInputItem[]): Promise<{ path: string; other: string }> {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([...turn(1, 'get_weather'), ...turn(2, 'run_query')]);
    assert.equal((await search(path, query)).length, 2);
    const otherPath = folder.path('other.db');
    const o = folder.session({ sessionId: 'b', dbPath: otherPath });
    await o.addItems(other);
    s.close();
    o.close();
    return { path, other: otherPath };
  }

  it('starts again when another file is moved over the session file', async () => {
    // The old index would rule the other file's run_query calls out.
    const { path, other } = await indexedThenOther('tool:run_query', [...turn(1, 'run_query'), ...turn(2, 'get_weather')]);
    renameSync(other, path);
    const hits = await search(path, 'tool:run_query');
    assert.deepEqual(
      hits.map((h) => [h.sessionId, h.messageId]),
      [
        ['b', 2],
        ['b', 3],
      ],
    );
    assert.deepEqual(problems, []);
  });

  it('starts again when another writer rewrites the file in place (same inode, ids reused)', async () => {
    const { path, other } = await indexedThenOther('tool:get_weather', [
      ...turn(1, 'run_query'),
      ...turn(2, 'get_weather'),
      ...turn(3, 'get_weather'),
    ]);
    // Copied over in place: the same file on disk, its messages from another session whose tools differ.
    copyFileSync(other, path);
    assert.deepEqual(
      (await search(path, 'tool:get_weather')).map((h) => h.messageId),
      [5, 6, 8, 9],
    );
    // The table emptied and its sequence reset by hand: ids start again at 1 with other items.
    const raw = folder.raw(path);
    raw.exec("DELETE FROM message_structure; DELETE FROM agent_messages; DELETE FROM sqlite_sequence WHERE name = 'agent_messages'");
    raw.close();
    const again = folder.session({ sessionId: 'c' });
    await again.addItems([...turn(1, 'get_weather'), ...turn(2, 'get_weather')]);
    assert.deepEqual(
      (await search(path, 'tool:get_weather')).map((h) => h.messageId),
      [2, 3, 5, 6],
    );
    assert.deepEqual(problems, []);
  });

  it('starts again when the id sequence went back, though the messages it kept a hash of are gone or the same', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([...turn(1, 'run_query'), ...turn(2, 'run_query')]);
    assert.equal((await search(path, 'tool:get_weather')).length, 0);
    s.close();
    // Every message but the first removed and the sequence set back: the next ids name other messages than indexed
    // (4 was a user message, now the output of a get_weather call), and the hashes kept are of 1 (the same) and 6 (gone).
    const raw = folder.raw(path);
    raw.exec(
      "DELETE FROM message_structure WHERE message_id > 1; DELETE FROM agent_messages WHERE id > 1; UPDATE sqlite_sequence SET seq = 1 WHERE name = 'agent_messages'",
    );
    raw.close();
    await folder.session({ sessionId: 'a' }).addItems(turn(3, 'get_weather'));
    assert.deepEqual(
      (await search(path, 'tool:get_weather')).map((h) => h.messageId),
      [3, 4],
    );
    assert.deepEqual(problems, []);
  });

  it('is passed over, with the reason, when its file is not an index of ours; the search goes on', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems(turn(1, 'get_weather'));
    s.close();
    assert.equal((await search(path, 'tool:get_weather')).length, 2);
    const [name] = readdirSync(indexDir).filter((n) => n.endsWith('.db'));
    // A session file where the index would be (a mistake, or someone else's database): refused, never written.
    copyFileSync(path, join(indexDir, name!));
    for (const suffix of ['-wal', '-shm']) writeFileSync(join(indexDir, name! + suffix), '');
    const before = readFileSync(join(indexDir, name!));
    assert.equal((await search(path, 'tool:get_weather')).length, 2);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /was not used: .*is not a search index/);
    // Not ours (no application id of an index): never removed, though the index is a cache; and no advice that fits
    // no cache (another path, a backup).
    assert.match(problems[0]!, /left as it is\. Move it out of the folder/);
    assert.doesNotMatch(problems[0]!, /backup|recover|choose another/i);
    assert.ok(readFileSync(join(indexDir, name!)).equals(before));
  });

  /** What a search may say of an index it made again: that it did, never SQLite's advice for a file of one's own. */
  function assertRebuiltNote(what: RegExp): void {
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^The search index \S+\.db was (.+): it was removed, and is made again\.$/);
    assert.match(problems[0]!, what);
    assert.doesNotMatch(problems[0]!, /backup|recover|choose another/i);
    problems.length = 0;
  }

  /** Session `a`, three turns (get_weather, run_query, a failed get_weather), searched once: its index built. */
  async function indexedSession(): Promise<{ path: string; index: string }> {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([...turn(1, 'get_weather'), ...turn(2, 'run_query'), ...turn(3, 'get_weather', true)]);
    s.close();
    assert.equal((await search(path, 'tool:get_weather')).length, 4);
    assert.deepEqual(indexState(), { through: 9, rows: 6 });
    assert.deepEqual(problems, []);
    return { path, index: join(indexDir, `${indexName(path)}.db`) };
  }

  /**
   * The search after one that made the index again: no note, the index file the same (not made again), and what it
   * rules out for `tool:get_weather` what it holds (the search asks `ruledOutByIndex`, which says null when it could
   * not use the index).
   */
  async function assertUsed(path: string, index: string): Promise<void> {
    const ino = statSync(index).ino;
    assert.equal((await search(path, 'tool:get_weather')).length, 4);
    assert.equal((await search(path, 'is:failed')).length, 1);
    assert.deepEqual(problems, []);
    assert.equal(statSync(index).ino, ino);
    assert.deepEqual(indexState(index), { through: 9, rows: 6 });
    const db = folder.inspect(path);
    try {
      const ruled = ruledOutByIndex({ dir: indexDir, onProblem: (m) => problems.push(m) }, db, parseSearchQuery('tool:get_weather'), 9);
      assert.ok(ruled, 'the index was used');
      // The get_weather calls (2, 8) and their outputs (3, 9); every output is nameless (3, 6, 9).
      assert.deepEqual({ ...ruled, keep: ruled.keep.sort() }, { through: 9, keep: [2, 3, 8, 9], namedOnly: [3, 6, 9] });
    } finally {
      db.close();
    }
    assert.deepEqual(problems, []);
  }

  it('is made again when its file is cut short or overwritten, and used by the next search; not for a lock or the session file', async () => {
    const { path, index } = await indexedSession();
    // Another session file's index, and a file of someone else's, in the same folder: never touched.
    const neighbour = join(indexDir, `${'0'.repeat(24)}.db`);
    writeFileSync(neighbour, 'not ours to judge');
    const stranger = join(indexDir, 'notes.txt');
    writeFileSync(stranger, 'kept');
    const size = statSync(index).size;
    assert.ok(size > 8192, `${size} bytes: more than two pages`);
    /** Garbage over the page of the index file `page` (from 1), of `pageSize` bytes. */
    const garble = (page: number, pageSize: number): void => {
      const bytes = readFileSync(index);
      for (let i = (page - 1) * pageSize; i < Math.min(bytes.length, page * pageSize); i++) bytes[i] = (i * 7919) & 0xff;
      writeFileSync(index, bytes);
    };
    /** The page size of the index file and the first page of its partial index of failed items. */
    const layout = (): { pageSize: number; failedRoot: number } => {
      const raw = openDatabase(index, { readonly: true });
      try {
        return {
          pageSize: Number(raw.prepare('PRAGMA page_size').get<{ page_size: number }>()?.page_size),
          failedRoot: Number(
            raw.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'tool_items_failed'").get<{ rootpage: number }>()?.rootpage,
          ),
        };
      } finally {
        raw.close();
      }
    };
    const damages: [string, () => void, RegExp, string][] = [
      ['cut to half its size', () => truncateSync(index, Math.floor(size / 2)), /corrupt or cut short/, 'tool:get_weather'],
      ['cut to its first page', () => truncateSync(index, 4096), /corrupt or cut short/, 'tool:get_weather'],
      ['cut within its header', () => truncateSync(index, 50), /not a SQLite database|corrupt or cut short/, 'tool:get_weather'],
      ['garbage over all of it', () => writeFileSync(index, Buffer.alloc(size, 0xa5)), /not a SQLite database/, 'tool:get_weather'],
      [
        'garbage past its first page, and a garbage -wal and -shm beside it',
        () => {
          const { pageSize } = layout();
          const pages = Math.ceil(statSync(index).size / pageSize);
          for (let page = 2; page <= pages; page++) garble(page, pageSize);
          writeFileSync(`${index}-wal`, Buffer.alloc(8192, 0x5a));
          writeFileSync(`${index}-shm`, Buffer.alloc(32768, 0x5a));
        },
        /corrupt or cut short/,
        'tool:get_weather',
      ],
      [
        // Met after the index was opened and brought up to date, by the query of the failed items: the driver's own
        // error, not the one of the open.
        'garbage over the partial index of failed items',
        () => {
          const { pageSize, failedRoot } = layout();
          garble(failedRoot, pageSize);
        },
        /corrupt or cut short/,
        'is:failed',
      ],
    ];
    for (const [what, damage, note, query] of damages) {
      damage();
      // The search after the damage: the hits of a search without an index (`search` compares them), a note, and
      // the index made again from the session file.
      assert.equal((await search(path, query)).length, query === 'is:failed' ? 1 : 4, what);
      assertRebuiltNote(note);
      assert.deepEqual(indexState(index), { through: 9, rows: 6 }, what);
      await assertUsed(path, index);
    }
    assert.equal(readFileSync(neighbour, 'utf8'), 'not ours to judge');
    assert.equal(readFileSync(stranger, 'utf8'), 'kept');

    // The session file is what cannot be read (its pages damaged under the messages whose hashes the index keeps: its
    // reads fail with SQLite's "corrupt" while the index checks it is still the file indexed): the index is kept.
    const before = readFileSync(index);
    const db = folder.inspect(path);
    try {
      db.readWith = (() => {
        throw new SessionDatabaseError('corrupt', `${path} is corrupt or truncated (database disk image is malformed).`);
      }) as typeof db.readWith;
      assert.equal(
        ruledOutByIndex({ dir: indexDir, onProblem: (m) => problems.push(m) }, db, parseSearchQuery('tool:get_weather'), 9),
        null,
      );
    } finally {
      db.close();
    }
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /was not used: .*sessions\.db is corrupt/);
    assert.ok(readFileSync(index).equals(before), 'the index file as it was');
    problems.length = 0;
    await assertUsed(path, index);

    // Another search catching up holds the index's write lock: this one goes on without it (it never waits), the file
    // untouched, and the next one catches it up.
    await folder.session({ sessionId: 'a' }).addItems(turn(4, 'get_weather'));
    const other = openDatabase(index);
    other.exec('BEGIN IMMEDIATE');
    try {
      assert.equal((await search(path, 'tool:get_weather')).length, 6);
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /was not used: .*is locked/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    problems.length = 0;
    assert.ok(readFileSync(index).equals(before), 'the index file as it was');
    const ino = statSync(index).ino;
    assert.equal((await search(path, 'tool:get_weather')).length, 6);
    assert.deepEqual(problems, []);
    assert.equal(statSync(index).ino, ino, 'the same file, caught up');
    assert.deepEqual(indexState(index), { through: 12, rows: 8 });
  });

  it('is made again when it is ours (its application id) in another format or layout', async () => {
    const { path, index } = await indexedSession();
    const changes: [string, RegExp][] = [
      ["UPDATE index_meta SET value = '99' WHERE key = 'format'", /in the format of a newer version/],
      ["DELETE FROM index_meta WHERE key = 'format'", /not laid out as a search index/],
      ['DROP INDEX tool_items_unresolved', /not laid out as a search index/],
      [
        'DROP TABLE tool_items; CREATE TABLE tool_items (message_id INTEGER PRIMARY KEY, name TEXT, flags INTEGER NOT NULL)',
        /not laid out as a search index/,
      ],
      ['DROP TABLE tool_items', /not laid out as a search index/],
    ];
    for (const [sql, note] of changes) {
      const raw = openDatabase(index);
      raw.exec(sql);
      raw.close();
      assert.equal((await search(path, 'tool:get_weather')).length, 4, sql);
      assertRebuiltNote(note);
      await assertUsed(path, index);
    }
  });

  it('keeps an output whose call it does not hold (the call may be written while the scan runs)', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([user('hi'), output('c_later', 'early answer'), ...turn(1, 'run_query')]);
    const db = folder.inspect(path);
    const index = ToolIndex.open(indexDir, db);
    try {
      const through = index.catchUp(db);
      const ruled = index.ruledOut(parseSearchQuery('tool:get_weather'), through);
      // The run_query call's output (5) can still be named get_weather by a structure row: left to such rows. Every
      // nameless tool item is listed so; one that is kept (2) is kept.
      assert.deepEqual(ruled, { through: 5, keep: [2], namedOnly: [2, 5] });
    } finally {
      index.close();
      db.close();
    }
  });

  it('learns an answer written before its call, once the call is indexed (then rules it out for other tools)', async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    await s.addItems([user('hi'), output('c_late', 'answer first')]);
    const db = folder.inspect(path);
    const index = ToolIndex.open(indexDir, db);
    try {
      const first = index.catchUp(db);
      // Its call is not there yet: kept for any tool.
      assert.deepEqual(index.ruledOut(parseSearchQuery('tool:run_query'), first).keep, [2]);
      await s.addItems([call('c_late', 'get_weather')]);
      const through = index.catchUp(db);
      assert.deepEqual(index.ruledOut(parseSearchQuery('tool:run_query'), through).keep, []);
      assert.deepEqual(index.ruledOut(parseSearchQuery('tool:get_weather'), through).keep.sort(), [2, 3]);
    } finally {
      index.close();
      db.close();
    }
  });

  /** Every row of the one index file in `dir`, in id order. */
  function indexRows(dir: string): unknown[] {
    const files = readdirSync(dir).filter((n) => n.endsWith('.db'));
    assert.equal(files.length, 1);
    const db = openDatabase(join(dir, files[0]!), { readonly: true });
    try {
      return db.prepare('SELECT message_id, name, call_id, flags FROM tool_items ORDER BY message_id').all();
    } finally {
      db.close();
    }
  }

  it("takes another search's progress when that one caught up the index between this one's read and its write", async () => {
    const path = folder.path();
    const s = folder.session({ sessionId: 'a' });
    // 2,100 messages: three chunks of the catching up.
    const items: AgentInputItem[] = [];
    for (let n = 1; n <= 700; n++) items.push(...turn(n, n % 2 === 0 ? 'get_weather' : 'run_query', n % 7 === 0));
    await s.addItems(items);
    // The same file built alone, for its rows.
    const alone = folder.path('alone');
    const db0 = folder.inspect(path);
    const clean = ToolIndex.open(alone, db0);
    // `onChunk` after each chunk written: the CLI looks at its heap there (a first build decodes the whole file).
    let chunks = 0;
    assert.equal(
      clean.catchUp(db0, undefined, undefined, () => chunks++),
      2100,
    );
    assert.equal(chunks, 3);
    clean.close();
    db0.close();
    // Two searches' connections and indexes of the one file; the second catches up all of it right after the first
    // read its first chunk, before the first one writes it.
    const db1 = folder.inspect(path);
    const db2 = folder.inspect(path);
    const first = ToolIndex.open(indexDir, db1);
    const second = ToolIndex.open(indexDir, db2);
    try {
      const behind = first.indexedThrough(db1);
      assert.equal(behind, 0);
      let reads = 0;
      const read = db1.readWith.bind(db1);
      db1.readWith = ((fn: Parameters<typeof read>[0]) => {
        const rows = read(fn);
        if (++reads === 1) assert.equal(second.catchUp(db2), 2100);
        return rows;
      }) as typeof db1.readWith;
      assert.equal(first.catchUp(db1, undefined, behind), 2100);
      // Its first chunk was written already: it went on from the other's progress (one read past it, which found
      // nothing), rather than index the file again from its second chunk.
      assert.equal(reads, 2);
    } finally {
      first.close();
      second.close();
      db1.close();
      db2.close();
    }
    assert.deepEqual(indexRows(indexDir), indexRows(alone));
    // Still the file's index, current: a search uses it as it is, with the hits it finds without it.
    assert.deepEqual(indexState(), { through: 2100, rows: 1400 });
    assert.equal((await search(path, 'tool:get_weather')).length, 700);
    assert.equal((await search(path, 'is:failed')).length, 100);
    assert.deepEqual(indexState(), { through: 2100, rows: 1400 });
    assert.deepEqual(problems, []);
  });

  it(`keeps at most ${MAX_SEARCH_INDEXES} index files, removing the least recently used`, () => {
    mkdirSync(indexDir, { recursive: true });
    const old = new Date(Date.now() - 86_400_000);
    for (let i = 0; i < MAX_SEARCH_INDEXES + 5; i++) {
      const file = join(indexDir, `${i.toString(16).padStart(24, '0')}.db`);
      writeFileSync(file, '');
      utimesSync(file, old, new Date(old.getTime() + i * 1000));
    }
    const path = folder.path();
    folder.session({ sessionId: 'a' }).close();
    const db = folder.inspect(path);
    try {
      ToolIndex.open(indexDir, db).close();
    } finally {
      db.close();
    }
    const left = readdirSync(indexDir).filter((n) => n.endsWith('.db'));
    assert.equal(left.length, MAX_SEARCH_INDEXES);
    // The oldest six went (five over the bound, and one for the new index), the new one stayed.
    for (let i = 0; i < 6; i++) assert.ok(!left.includes(`${i.toString(16).padStart(24, '0')}.db`));
  });
});
