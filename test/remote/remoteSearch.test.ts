// Search over server stores (searchRemoteStore) against real PostgreSQL and Redis: the same query language and
// matching as a session file, hits on `main` at the turn the tree shows, outputs found and named through their call,
// one session only, maxHits, cancel, and a store that goes away mid-search.
import assert from 'node:assert/strict';
import type { AgentInputItem } from '@openai/agents';
import { openRemoteStore } from '../../src/store/remote/openRemoteStore';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { RedisSession } from '../../src/store/remote/redisSession';
import type { RemoteStoreBrowser } from '../../src/store/remote/remoteStore';
import { RemoteStoreError } from '../../src/store/remote/remoteErrors';
import { parseSearchQuery, searchRemoteStore, type SearchHit, type SearchOptions } from '../../src/store/search';
import { freshPostgresDatabase, freshRedisPrefix, sharedRedis } from '../support/servers';
import { js, python, rawRedis, sql } from './remoteHelpers';

/** Lisbon: turn 1 a plain question, turn 2 a get_weather call that failed and one that worked, turn 3 mixed case. */
const LISBON: AgentInputItem[] = [
  js.user('Plan a day in Lisbon.'),
  js.assistant('Start at Belém, then the Alfama.'),
  js.user('What is the weather there?'),
  js.call('call_1'),
  js.result('call_1', 'An error occurred while running the tool. Please try again. Error: timeout'),
  js.call('call_2'),
  js.result('call_2', 'Lisbon: 22°C, sunshine'),
  js.assistant('Sunny and 22°C.'),
  js.user('And the STRASSE names in Porto?'),
  js.assistant('Rua is the word for straße there.'),
];
const OSLO: AgentInputItem[] = [
  js.user('Weather in Oslo?'),
  js.call('call_9', 'get_forecast'),
  js.result('call_9', 'Oslo: -3°C, snow', 'get_forecast'),
];

async function search(browser: RemoteStoreBrowser, text: string, options: Partial<SearchOptions> = {}): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  await searchRemoteStore(browser, parseSearchQuery(text), { ...options, onHits: (h) => hits.push(...h) });
  return hits;
}

const where = (hits: SearchHit[]) => hits.map((h) => `${h.sessionId} ${h.branchId} t${h.turn} #${h.sequenceNumber} ${h.itemType}`);

for (const kind of ['PostgreSQL', 'Redis'] as const) {
  describe(`searchRemoteStore on ${kind} (real server)`, () => {
    let browser: RemoteStoreBrowser;
    let url: string;
    let prefix: string | undefined;

    before(async () => {
      if (kind === 'PostgreSQL') {
        url = await freshPostgresDatabase();
        for (const [id, items] of [
          ['lisbon', LISBON],
          ['oslo', OSLO],
        ] as const) {
          const s = new PostgresSession({ sessionId: id, connection: { url }, createTables: true });
          await s.addItems(items);
          await s.close();
        }
        // Rows as a Python agent writes them: the output has no tool name, only its call id.
        await sql(url, `INSERT INTO agent_sessions (session_id) VALUES ('python')`);
        for (const item of [
          python.user('Convert 22 C please'),
          python.call('c7', 'convert_temperature', '{"celsius": 22}'),
          python.output('c7', '71.6 F'),
        ])
          await sql(url, 'INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2)', ['python', JSON.stringify(item)]);
        browser = await openRemoteStore({ url });
      } else {
        const server = await sharedRedis();
        url = server.url;
        prefix = freshRedisPrefix().replace(/:$/, '');
        for (const [id, items] of [
          ['lisbon', LISBON],
          ['oslo', OSLO],
        ] as const) {
          const s = new RedisSession({ sessionId: id, connection: { url }, keyPrefix: prefix });
          await s.addItems(items);
          await s.close();
        }
        const raw = await rawRedis(url);
        await raw.hset(`${prefix}:python`, 'session_id', 'python', 'created_at', '1700000000', 'updated_at', '1700000000');
        await raw.rpush(
          `${prefix}:python:messages`,
          ...[
            python.user('Convert 22 C please'),
            python.call('c7', 'convert_temperature', '{"celsius": 22}'),
            python.output('c7', '71.6 F'),
          ].map((i) => JSON.stringify(i)),
        );
        raw.disconnect();
        browser = await openRemoteStore({ url, keyPrefix: prefix });
      }
    });
    after(async () => {
      await browser?.close();
    });

    it('finds text as the file search does (any case, Unicode folding), on main at the turn the tree shows', async () => {
      const hits = await search(browser, 'lisbon');
      assert.deepEqual(where(hits.filter((h) => h.sessionId === 'lisbon')), [
        'lisbon main t1 #1 user',
        'lisbon main t2 #7 function_call_output',
      ]);
      assert.equal(hits[0]!.snippet.text.slice(...hits[0]!.snippet.ranges[0]!), 'Lisbon');
      // STRASSE finds straße, and ß finds STRASSE (the store's §12 (a) folding).
      assert.deepEqual(where(await search(browser, 'strasse')), ['lisbon main t3 #9 user', 'lisbon main t3 #10 assistant']);
      assert.deepEqual(where(await search(browser, '22°c')).length, 2);
    });

    it('filters by tool (calls and their outputs), failed calls and role', async () => {
      const weather = await search(browser, 'tool:get_weather');
      assert.deepEqual(
        weather.map((h) => `${h.sequenceNumber} ${h.itemType} ${h.toolName}`),
        [
          '4 function_call get_weather',
          '5 function_call_output get_weather',
          '6 function_call get_weather',
          '7 function_call_output get_weather',
        ],
      );
      const failed = await search(browser, 'is:failed');
      assert.deepEqual(
        failed.map((h) => `${h.sessionId} #${h.sequenceNumber} ${h.failed}`),
        ['lisbon #5 tool error'],
      );
      assert.deepEqual(where(await search(browser, 'role:user weather')).sort(), ['lisbon main t2 #3 user', 'oslo main t1 #1 user']);
      // A Python-written output carries only the call id: `tool:` still finds it, and it is named by its call.
      const python = await search(browser, 'tool:convert_temperature');
      assert.deepEqual(
        python.map((h) => `${h.sessionId} t${h.turn} ${h.itemType} ${h.toolName}`),
        ['python t1 function_call convert_temperature', 'python t1 function_call_output convert_temperature'],
      );
      const output = await search(browser, '71.6');
      assert.equal(output[0]?.toolName, 'convert_temperature');
    });

    it('searches one session, stops at maxHits, and stops when cancelled', async () => {
      assert.deepEqual(where(await search(browser, 'weather', { sessionId: 'oslo' })), ['oslo main t1 #1 user']);
      assert.deepEqual(await search(browser, 'anything', { sessionId: 'no-such-session' }), []);
      const capped: SearchHit[] = [];
      const summary = await searchRemoteStore(browser, parseSearchQuery('tool:get_weather'), {
        maxHits: 3,
        onHits: (h) => capped.push(...h),
      });
      assert.equal(capped.length, 3);
      assert.equal(summary.truncated, true);
      const stop = new AbortController();
      stop.abort();
      const cancelled = await searchRemoteStore(browser, parseSearchQuery('lisbon'), {
        signal: stop.signal,
        onHits: () => assert.fail('no hits'),
      });
      assert.equal(cancelled.cancelled, true);
      assert.equal(cancelled.rowsScanned, 0);
    });

    it('reports a store closed under it as a store error naming the store', async () => {
      const gone = await openRemoteStore(kind === 'PostgreSQL' ? { url } : { url, keyPrefix: prefix });
      await gone.close();
      await assert.rejects(search(gone, 'lisbon'), (err: unknown) => {
        assert.ok(err instanceof RemoteStoreError, String(err));
        assert.match(err.message, kind === 'PostgreSQL' ? /^PostgreSQL .*pool/ : /^Redis .*connection to the server was lost/);
        return true;
      });
    });
  });
}
