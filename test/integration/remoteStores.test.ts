/**
 * PostgreSQL and Redis stores in the workbench, against the real servers test/host/runInHost.ts starts: open an
 * address, browse sessions (paged, filtered) down to items, follow another writer, refuse writes until the user
 * allows them, keep the password out of everything but secret storage, and copy a session to a local file where it
 * can be branched; Search Sessions… and the view's search box read them too.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import pg from 'pg';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, DEFAULT_POSTGRES_TABLES, postgresDdl, type RemoteSessionSource } from '../../src/store';
import { splitPassword } from '../../src/extension/databases/remoteAddress';
import type { HandOverOutcome } from '../../src/extension/codingAgents/handOver';
import type { SearchOutcome } from '../../src/extension/search/sessionSearch';
import { api, askPanel, child, childRows, closeAll, freshScratchPerTest, waitFor } from './helpers';

const PG_URL = process.env.ASI_TEST_PG_URL ?? '';
const REDIS_URL = process.env.ASI_TEST_REDIS_URL ?? '';

/** A Python-format row: compact JSON with ASCII escapes, as SQLAlchemySession and RedisSession write it. */
function row(item: unknown): string {
  return JSON.stringify(item).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Runs a command and throws what it reported as failed (our commands show errors instead of throwing). */
async function command<T>(id: string, ...args: unknown[]): Promise<T> {
  const a = await api();
  const before = a.failures.length;
  const result = await vscode.commands.executeCommand<T>(id, ...args);
  const failed = a.failures.slice(before);
  if (failed.length > 0) throw new Error(failed.map((f) => f.message).join('\n'));
  return result;
}

const user = (text: string) => ({ role: 'user', content: text });
const assistant = (text: string) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const call = { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };
const output = { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' };
const WEATHER = [user('Weather in Paris?'), call, output, assistant('Sunny, 22 °C ☀'), user('Thanks!'), assistant('You are welcome.')];

describe('PostgreSQL and Redis stores in the workbench', function () {
  this.timeout(60_000);
  const scratch = freshScratchPerTest();

  before(function () {
    if (!PG_URL || !REDIS_URL) {
      throw new Error(`the launcher started no test servers: ${process.env.ASI_TEST_SERVERS_ERROR || 'no addresses in the environment'}`);
    }
  });

  describe('PostgreSQL', () => {
    let pool: pg.Pool;
    before(async () => {
      pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
      for (const ddl of postgresDdl(DEFAULT_POSTGRES_TABLES)) await pool.query(ddl);
      // 60 sessions, as Python writes them: a session row each, then its messages in order.
      for (let i = 0; i < 60; i++) {
        const id = `user-${String(i).padStart(3, '0')}`;
        await pool.query(`INSERT INTO agent_sessions (session_id, updated_at) VALUES ($1, now() - make_interval(mins => $2::int))`, [
          id,
          60 - i,
        ]);
        const items = i === 59 ? WEATHER : [user(`hello ${i}`), assistant(`hi ${i}`)];
        for (const item of items)
          await pool.query('INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2)', [id, row(item)]);
      }
    });
    after(async () => {
      await pool.end();
    });
    afterEach(async () => closeAll(await api()));

    it('opens an address read-only, keeps the password only in secret storage, and pages sessions newest first', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      assert.ok(password, 'the test server has a password');
      const path = await command<string>('agentSessions.openStore', address, password);
      assert.equal(path, address);
      const entry = a.registry.require(address);
      assert.equal(entry.problem, undefined);
      assert.equal(entry.readonly, true, 'server stores open read-only');
      assert.equal(entry.readonlyReason, 'server');
      assert.ok(!address.includes(password));
      assert.ok(!JSON.stringify(a.registry.remembered()).includes(password), 'the workspace state never holds the password');
      const config = vscode.workspace.getConfiguration();
      for (const key of ['agentSessions.openReadOnly', 'agentSessions.discoveryGlobs', 'agentSessions.agent']) {
        assert.ok(!JSON.stringify(config.inspect(key) ?? null).includes(password), `setting ${key} never holds the password`);
      }

      const [store] = await childRows(a);
      assert.ok(store, 'the store is in the tree');
      assert.match(store.description, /PostgreSQL · read-only · 60 sessions/);
      const first = await childRows(a, store.node);
      assert.equal(first.length, 51, '50 sessions and a Load more node');
      assert.equal(first[0]?.label, 'user-059', 'most recently updated first');
      assert.equal(first[50]?.label, 'Load more sessions…');
      const more = await childRows(a, first[50]?.node);
      assert.deepEqual(
        more.map((r) => r.label),
        ['user-009', 'user-008', 'user-007', 'user-006', 'user-005', 'user-004', 'user-003', 'user-002', 'user-001', 'user-000'],
      );

      await command('agentSessions.filterSessions', store.node, 'user-05');
      const filtered = await childRows(a, store.node);
      assert.equal(filtered.length, 10);
      assert.ok(filtered.every((r) => r.label.startsWith('user-05')));
    });

    it('moves the password of a ?password= address to secret storage: never in the state, the tree, the MCP server or a prompt', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      assert.ok(password, 'the test server has a password');
      // The same server with its password as a query parameter, which pg reads too (issue 46).
      const withQuery = new URL(address);
      withQuery.searchParams.set('password', password);
      const path = await command<string>('agentSessions.openStore', withQuery.toString());
      assert.equal(path, address, 'the entry is the address without the password');
      assert.equal(a.registry.require(address).problem, undefined, 'it connects with the password from secret storage');
      const held = (text: string): boolean => text.includes(password) || /[?&]password=/.test(text);
      assert.ok(!held(JSON.stringify(a.registry.remembered())), 'the workspace state never holds the password');
      const [root] = await a.tree.children(undefined);
      assert.ok(root, 'the store is in the tree');
      const shown = await a.tree.resolveTreeItem(root[1], root[0]);
      assert.ok(!held(JSON.stringify([shown.label, shown.description, shown.tooltip, shown.id])), 'the tree item never shows it');
      const definitions = (await a.codingAgents.mcp?.provideMcpServerDefinitions()) ?? [];
      assert.ok(!held(JSON.stringify(definitions.map((d) => [d.label, d.args]))), 'the MCP server definitions never hold it');
      const asked = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.askAboutTurn', {
        dbPath: address,
        sessionId: 'user-059',
        branchId: 'main',
        turn: 1,
      });
      assert.ok(!held(asked.prompt), 'the chat prompt never holds it');
    });

    it('shows a Python-written session as turns and items, and follows another writer', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      await command('agentSessions.openStore', address, password);
      const store = { kind: 'database' as const, dbPath: address };
      await command('agentSessions.filterSessions', store, 'user-059');
      const session = await child(a, store, 'user-059');
      const main = await child(a, session, 'main');
      const turns = await childRows(a, main);
      assert.deepEqual(
        turns.map((t) => [t.label, t.description]),
        [
          ['Turn 1', 'Weather in Paris?'],
          ['Turn 2', 'Thanks!'],
        ],
      );
      assert.doesNotMatch(turns[0]?.contextValue ?? '', /canBranch/, 'server sessions are branched in a local copy');
      const items = await childRows(a, turns[0]?.node);
      assert.equal(items.length, 4, 'user, call, output, answer');
      assert.ok(items.some((i) => /get_weather/.test(i.label + i.description)));

      // Another process appends a turn: the poll sees the session's token move and the tree refreshes.
      const changed = new Promise<void>((resolve) => {
        const sub = a.registry.onDidChange((c) => {
          if (c.kind === 'rows' && c.path === address) {
            sub.dispose();
            resolve();
          }
        });
      });
      await pool.query('INSERT INTO agent_messages (session_id, message_data) VALUES ($1, $2), ($1, $3)', [
        'user-059',
        row(user('One more question')),
        row(assistant('One more answer')),
      ]);
      await changed;
      await waitFor(async () => (await childRows(a, main)).length === 3, 8000, 'the third turn in the tree');
    });

    it('searches the store with Search Sessions… and in the view; a hit opens its turn', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      await command('agentSessions.openStore', address, password);
      // The Python-written output carries only its call id: tool: finds it through the call, and names it.
      const outcome = await command<SearchOutcome>('agentSessions.searchSessions', 'tool:get_weather');
      assert.deepEqual([outcome.files, outcome.hits, outcome.errors], [1, 2, []]);
      const [root] = a.search.results.getChildren();
      const storeItem = a.search.results.getTreeItem(root!);
      assert.equal(
        storeItem.label,
        (a.registry.get(address)!.db as RemoteSessionSource).label,
        'the group is named as the tree names the store',
      );
      assert.doesNotMatch(String(storeItem.label), /password|:[^@/]*@/);
      assert.deepEqual(
        a.search.results
          .hits()
          .map((h) => [h.hit.sessionId, h.hit.branchId, h.hit.turn, h.hit.sequenceNumber, h.hit.itemType, h.hit.toolName]),
        [
          ['user-059', 'main', 1, 2, 'function_call', 'get_weather'],
          ['user-059', 'main', 1, 3, 'function_call_output', 'get_weather'],
        ],
      );
      assert.match(a.search.view.message ?? '', /^2 hits for "tool:get_weather" in 1 file\(s\) and store\(s\)/);
      // Text over every session (a quoted phrase): one of the 60.
      await command<SearchOutcome>('agentSessions.searchSessions', '"HELLO 42"');
      assert.deepEqual(
        a.search.results.hits().map((h) => [h.hit.sessionId, h.hit.turn, h.hit.itemType, h.hit.snippet.text]),
        [['user-042', 1, 'user', 'hello 42']],
      );

      await command<SearchOutcome>('agentSessions.searchSessions', 'sunny');
      const answerHit = a.search.results.hits().find((h) => h.hit.itemType === 'assistant')!;
      assert.ok(answerHit, 'the answer "Sunny, 22 °C" is found');
      await command('agentSessions.openSearchHit', answerHit);
      const panel = a.panels.get(address, 'user-059');
      assert.ok(panel, 'the conversation view of user-059 is open');
      assert.deepEqual([panel.target.branchId, panel.target.turn], ['main', 1]);
      const inView = await askPanel(panel, 'search/session', { query: 'sunny', branchId: 'main' });
      assert.deepEqual(
        inView.kind === 'response' &&
          inView.ok &&
          (inView.result as { hits: { turn: number; sequenceNumber: number; itemType: string }[] }).hits,
        [
          { branchId: 'main', turn: 1, sequenceNumber: 3, itemType: 'function_call_output', snippet: { text: 'Sunny', ranges: [[0, 5]] } },
          {
            branchId: 'main',
            turn: 1,
            sequenceNumber: 4,
            itemType: 'assistant',
            snippet: { text: 'Sunny, 22 °C ☀', ranges: [[0, 5]] },
          },
        ],
      );
      await vscode.commands.executeCommand('agentSessions.clearSearchResults');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    });

    it('refuses writes while read-only, and deletes a session only after writing is allowed', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      await command('agentSessions.openStore', address, password);
      const node = { kind: 'session' as const, dbPath: address, sessionId: 'user-000' };
      await assert.rejects(command('agentSessions.deleteRemoteSession', node, true), /read-only/);
      const before = await pool.query('SELECT count(*)::int AS n FROM agent_messages WHERE session_id = $1', ['user-000']);
      assert.equal(before.rows[0].n, 2, 'nothing was deleted');
      await command('agentSessions.toggleReadOnly', { kind: 'database', dbPath: address }, true);
      assert.equal(a.registry.require(address).readonly, false);
      await command('agentSessions.deleteRemoteSession', node, true);
      const after = await pool.query('SELECT count(*)::int AS n FROM agent_sessions WHERE session_id = $1', ['user-000']);
      assert.equal(after.rows[0].n, 0);
    });

    it('copies a session to a local file, where it can be branched', async () => {
      const a = await api();
      const { address, password } = splitPassword(PG_URL);
      await command('agentSessions.openStore', address, password);
      const target = join(scratch().dir, 'copy.db');
      const node = { kind: 'session' as const, dbPath: address, sessionId: 'user-059' };
      const result = await command<{ copied: number }>('agentSessions.copySessionToLocal', node, target);
      assert.ok(existsSync(target));
      assert.equal(result.copied, 8, 'the six seeded items and the two another writer appended');
      assert.equal(a.registry.require(target).readonly, false);
      const s = new AdvancedSQLiteSession({ sessionId: 'user-059', dbPath: target, readonly: true });
      try {
        assert.deepEqual((await s.getStoredItems()).slice(0, 6), WEATHER);
        assert.equal((await s.getConversationTurns()).length, 3);
      } finally {
        s.close();
      }
      const localMain = await child(a, await child(a, { kind: 'database', dbPath: target }, 'user-059'), 'main');
      const turn = await child(a, localMain, 'Turn 2');
      const branch = await command<string>('agentSessions.branchFromTurn', turn, 'retry-thanks');
      assert.equal(branch, 'retry-thanks');
      const copy = new AdvancedSQLiteSession({ sessionId: 'user-059', dbPath: target, readonly: true });
      try {
        assert.ok((await copy.listBranches()).some((b) => b.branchId === 'retry-thanks'));
      } finally {
        copy.close();
      }
    });

    it('says why a wrong password fails, without the password', async () => {
      const { address } = splitPassword(PG_URL);
      await assert.rejects(
        command('agentSessions.openStore', address, 'not-the-password-xyz'),
        (err: Error) => /refused the credentials/.test(err.message) && !err.message.includes('not-the-password-xyz'),
      );
    });
  });

  describe('Redis', () => {
    let redis: Redis;
    before(async () => {
      redis = new Redis(REDIS_URL);
      for (let i = 0; i < 5; i++) {
        const key = `agents:session:chat-${i}`;
        await redis.hset(key, 'session_id', `chat-${i}`, 'created_at', String(1764460800 + i), 'updated_at', String(1764460900 + i));
        await redis.rpush(`${key}:messages`, row(user(`question ${i}`)), row(assistant(`answer ${i}`)));
      }
    });
    after(async () => {
      await redis.quit();
    });
    afterEach(async () => closeAll(await api()));

    it('browses sessions and items, and copies one to a local file', async () => {
      const a = await api();
      const { address, password } = splitPassword(REDIS_URL);
      await command('agentSessions.openStore', address, password);
      const [store] = await childRows(a);
      assert.ok(store);
      assert.match(store.description, /Redis · read-only/);
      const sessions = await childRows(a, store.node);
      assert.deepEqual(
        sessions.map((s) => s.label),
        ['chat-4', 'chat-3', 'chat-2', 'chat-1', 'chat-0'],
        'one page, newest first',
      );
      const main = await child(a, sessions[0]?.node, 'main');
      const [turn] = await childRows(a, main);
      assert.deepEqual([turn?.label, turn?.description], ['Turn 1', 'question 4']);
      const target = join(scratch().dir, 'chat-4.db');
      await command('agentSessions.copySessionToLocal', sessions[0]?.node, target);
      const s = new AdvancedSQLiteSession({ sessionId: 'chat-4', dbPath: target, readonly: true });
      try {
        assert.deepEqual(await s.getStoredItems(), [user('question 4'), assistant('answer 4')]);
      } finally {
        s.close();
      }
    });
  });
});
