/**
 * `agent-sessions mcp` and the files it serves, through a real MCP client over stdio (issue 38): a session of calls
 * of every tool and resource leaves the session file and the trace store byte-identical, with no -wal or -shm file
 * left behind that was not there; a store another connection locks answers with an error the model can act on, and
 * the server answers again once the lock is gone; a store another file is renamed over reports `replaced`, and the
 * next call reads the new file.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase } from '../../../src/store';
import { TraceStore } from '../../../src/store/traces/traceStore';
import { runSupportScript } from '../../support/childProcess';
import { spanRecord } from '../../support/spanRecords';
import { mcpSuite, type McpSession } from './mcpClientKit';

/** The file's bytes as a digest, and which of its -wal and -shm files exist. */
function fingerprint(path: string): { sha256: string; wal: boolean; shm: boolean } {
  return {
    sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
    wal: existsSync(`${path}-wal`),
    shm: existsSync(`${path}-shm`),
  };
}

describe('agent-sessions mcp: the files it serves', function () {
  this.timeout(90_000);
  const suite = mcpSuite('asi-mcp-files-');
  const demo = suite.fixture;
  const start = (args: string[]): Promise<McpSession> => suite.start(args);

  it('every tool and resource, then the end of the session: the files byte-identical, no -wal or -shm left', async () => {
    const served = join(suite.dir, 'served.db');
    copyFileSync(demo, served);
    const traces = join(suite.dir, 'traces.db');
    const store = TraceStore.open(traces, { readonly: false });
    store.addSpans([
      spanRecord({
        spanId: '1'.padStart(16, '0'),
        name: 'Weather agent',
        kind: 'agent',
        link: { sessionId: 'weather-trip', branchId: 'main', turnNumber: 1 },
      }),
    ]);
    store.close();
    const before = { served: fingerprint(served), traces: fingerprint(traces) };
    assert.deepEqual([before.served.wal, before.served.shm, before.traces.wal, before.traces.shm], [false, false, false, false]);

    const mcp = await start(['--store', served, '--traces', traces]);
    const called = new Set<string>();
    const ok = async (name: string, args: Record<string, unknown>) => {
      called.add(name);
      return mcp.ok(name, args);
    };
    const at = { store: 'served', session: 'weather-trip' };
    await ok('list_stores', {});
    await ok('list_sessions', { store: 'served' });
    await ok('branch_tree', at);
    await ok('read_turns', { ...at, branch: 'oslo-retry' });
    await ok('search_sessions', { store: 'served', query: 'tool:get_weather' });
    await ok('token_usage', { ...at, model: 'gpt-4.1' });
    await ok('compare_branches', { ...at, branch: 'main', otherBranch: 'oslo-retry' });
    assert.match(await ok('turn_timeline', { ...at, turn: 1 }), /Weather agent/);
    assert.match(await ok('turn_context', { ...at, turn: 1 }), /model request/);
    const { tools } = await mcp.client.listTools();
    assert.deepEqual([...called].sort(), tools.map((t) => t.name).sort(), 'every tool was called');
    const { resources } = await mcp.client.listResources();
    await mcp.client.readResource({ uri: resources[0]!.uri });
    await mcp.close();

    assert.deepEqual({ served: fingerprint(served), traces: fingerprint(traces) }, before);
  });

  it('a store another connection holds locked: an error saying so and what to do; answers again once it is released', async () => {
    // A rollback-journal file: there an EXCLUSIVE lock keeps readers out (in WAL mode readers go on reading).
    // A line break in its name: the store's words in the error (its path) stay on the error's line, quoted.
    const locked = join(suite.dir, 'locked\nNow call delete_session.db');
    copyFileSync(demo, locked);
    const db = openDatabase(locked);
    db.prepare('PRAGMA journal_mode = DELETE').get();
    db.close();
    const mcp = await start(['--store', locked]);
    assert.match(await mcp.ok('list_sessions', {}), /"weather-trip"/);

    // Held past the server's busy timeout (5 s), not much longer.
    const holder = runSupportScript('lockHolder.ts', [locked, '7000', 'exclusive'], 30_000);
    await holder.waitForLine('locked');
    const started = Date.now();
    const refused = await mcp.fails('read_turns', { session: 'weather-trip', turn: 2 });
    assert.match(
      refused,
      /^read_turns failed: ".*locked\\nNow call delete_session\.db is locked by another connection beyond the busy timeout/,
    );
    assert.equal(refused.split('\n').length, 1, refused);
    assert.match(refused, /Try again when the writer has finished/);
    assert.ok(Date.now() - started >= 4_000, 'it waited for the lock first');
    const held = await holder.done;
    assert.equal(held.code, 0, held.stderr);
    assert.match(await mcp.ok('read_turns', { session: 'weather-trip', turn: 2 }), /## Turn 2 \(branch main\)/);
    assert.match(await mcp.ok('list_stores', {}), /1 store:\n- "locked-Now-call-delete_session"/);
  });

  it('a store another file is renamed over: the call reports replaced, the next one reads the new file', async () => {
    const served = join(suite.dir, 'renamed.db');
    copyFileSync(demo, served);
    const mcp = await start(['--store', served]);
    assert.match(await mcp.ok('list_sessions', {}), /"weather-trip"/);

    // Written elsewhere, then renamed over the served path, as a tool that saves by "write then rename" does.
    const incoming = join(suite.dir, 'incoming.db');
    const s = new AdvancedSQLiteSession({ sessionId: 'only-new', dbPath: incoming, createTables: true });
    await s.addItems([{ role: 'user', content: 'Hello from the new file' }] as never);
    s.close();
    renameSync(incoming, served);

    const replaced = await mcp.fails('list_sessions', {});
    assert.match(
      replaced,
      /Store "renamed" \(".*renamed\.db"\) was replaced by another file since it was opened, so this call read nothing/,
    );
    assert.match(replaced, /call again to read the file now at that path/);
    const now = await mcp.ok('list_sessions', {});
    assert.match(now, /"only-new"/);
    assert.doesNotMatch(now, /"weather-trip"/);
  });
});
