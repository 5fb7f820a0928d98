/**
 * What `agent-sessions mcp` serves, through a real MCP client over stdio: exactly the stores it was started with plus
 * the files calls named that opened (issue 38: a path that failed to open used to join the set, and every later call
 * without `store` failed as ambiguous); with --only-stores (the server VS Code starts, issue 46) nothing else, and a
 * refusal that tells the model how the user lets it read a file; an unknown tool and arguments that break the schema
 * answered as errors, the server serving on.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, linkSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema, McpError, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '../../support/tempFiles';
import { mcpSuite, type McpSession } from './mcpClientKit';

describe('agent-sessions mcp: the stores it serves', function () {
  this.timeout(60_000);
  const suite = mcpSuite('asi-mcp-set-');
  const demo = suite.fixture;
  const start = (args: string[]): Promise<McpSession> => suite.start(args);

  it('a path that does not open is reported and not served: calls without store still go to the one store', async () => {
    const mcp = await start(['--store', demo]);
    const notSqlite = join(suite.dir, 'notes.db');
    writeFileSync(notSqlite, 'root:x:0:0:root:/root:/bin/bash\n');
    const failed = await mcp.fails('list_sessions', { store: notSqlite });
    assert.match(failed, /Cannot open store "notes" \(".*notes\.db"\): ".*not a SQLite database.*"/);
    const stores = await mcp.ok('list_stores', {});
    assert.match(stores, /1 store:\n- "demo": SQLite session file/);
    assert.doesNotMatch(stores, /notes/);
    assert.match(await mcp.ok('list_sessions', {}), /Source: store "demo" /);
    // Asked again, it is tried again (and fails the same way), still without joining the set.
    assert.match(await mcp.fails('list_sessions', { store: notSqlite }), /Cannot open store "notes"/);
    assert.doesNotMatch(await mcp.ok('list_stores', {}), /notes/);
    // Once the path holds a session file, it opens and is served, under the name the failed attempt did not use up.
    copyFileSync(demo, notSqlite);
    assert.match(await mcp.ok('list_sessions', { store: notSqlite }), /Source: store "notes" /);
    assert.match(await mcp.ok('list_stores', {}), /2 stores:\n- "demo": [^\n]*\n- "notes": SQLite session file/);
  });

  it('two calls naming the same new file at once open it once, under one name', async () => {
    const mcp = await start(['--store', demo]);
    const other = join(suite.dir, 'twice.db');
    copyFileSync(demo, other);
    const [a, b] = await Promise.all([mcp.ok('list_sessions', { store: other }), mcp.ok('list_sessions', { store: other })]);
    assert.match(a, /Source: store "twice" /);
    assert.match(b, /Source: store "twice" /);
    assert.match(await mcp.ok('list_stores', {}), /2 stores:\n- "demo": [^\n]*\n- "twice": [^\n]*\n(?!- )/);
  });

  it('one file is served once, however it is named; two files of one name get two names', async () => {
    // The same path twice, a relative spelling (the server runs in the suite's folder), a symbolic and a hard link.
    const links = join(suite.dir, 'links');
    mkdirSync(links, { recursive: true });
    symlinkSync(demo, join(links, 'symlinked.db'));
    linkSync(demo, join(links, 'hardlinked.db'));
    const mcp = await start([
      '--store',
      demo,
      '--store',
      demo,
      '--store',
      'demo.db',
      '--store',
      join(links, 'symlinked.db'),
      '--store',
      join(links, 'hardlinked.db'),
    ]);
    assert.match(await mcp.ok('list_stores', {}), /1 store:\n- "demo": SQLite session file [^\n]*\n(?!- )/);
    assert.match(await mcp.ok('list_sessions', {}), /Source: store "demo" /);
    const { resources } = await mcp.client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.deepEqual(uris, [...new Set(uris)], 'each resource listed once');
    // A call naming the file by another path reads the store already served, adding none.
    assert.match(await mcp.ok('list_sessions', { store: join(links, 'symlinked.db') }), /Source: store "demo" /);
    assert.match(await mcp.ok('list_stores', {}), /1 store:/);
    // Another file called demo.db is another store: demo-2.
    const elsewhere = join(suite.dir, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    copyFileSync(demo, join(elsewhere, 'demo.db'));
    const two = await start(['--store', demo, '--store', join(elsewhere, 'demo.db')]);
    assert.match(await two.ok('list_stores', {}), /2 stores:\n- "demo": [^\n]*\n- "demo-2": SQLite session file .*elsewhere/);
  });

  it('tells the client the resource list changed when a file joins the served set, and only then', async () => {
    const mcp = await start(['--store', demo]);
    let changes = 0;
    mcp.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changes++);
    const joined = join(suite.dir, 'joined.db');
    copyFileSync(demo, joined);
    await mcp.ok('list_sessions', { store: 'demo' });
    await mcp.ok('list_sessions', { store: joined });
    const deadline = Date.now() + 5_000;
    while (changes === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(changes, 1, 'one notifications/resources/list_changed');
    assert.ok((await mcp.client.listResources()).resources.some((r) => r.uri.startsWith('agent-sessions://joined/')));
    // Named again, the file is served already: nothing changed.
    await mcp.ok('list_sessions', { store: joined });
    await mcp.ok('list_stores', {});
    assert.equal(changes, 1);
  });

  it('--only-stores: a call naming another session file is refused, says how the user lets it be read, reads nothing', async () => {
    const mcp = await start(['--only-stores', '--store', demo]);
    const folder = tempDir('asi-mcp-other-');
    try {
      const other = join(folder.dir, 'elsewhere.db');
      copyFileSync(demo, other);
      const refused = await mcp.fails('list_sessions', { store: other });
      assert.match(refused, /No store ".*elsewhere\.db": this server reads only the stores it was started with \(--only-stores\)/);
      assert.match(refused, /open the session file in VS Code's Sessions view first/);
      assert.match(refused, /Stores: "demo"/);
      assert.match(await mcp.fails('read_turns', { store: other, session: 'weather-trip' }), /--only-stores/);
      // Not opened at all: SQLite would have left -shm (and -wal) files beside a file it read.
      assert.deepEqual(readdirSync(folder.dir), ['elsewhere.db']);
      const stores = await mcp.ok('list_stores', {});
      assert.match(stores, /1 store:\n- "demo": /);
      assert.match(stores, /Only these stores are read here/);
      assert.doesNotMatch(stores, /Any tool also takes "store" as the path/);
      assert.match(await mcp.ok('list_sessions', { store: 'demo' }), /"weather-trip"/);
    } finally {
      folder.cleanup();
    }
  });

  it('--only-stores with no store: every call refused with what the user does, not a path to pass', async () => {
    const mcp = await start(['--only-stores']);
    const none = await mcp.fails('list_sessions', {});
    assert.match(none, /No store is being served: .*--only-stores.*started with none/);
    assert.doesNotMatch(none, /pass store, the path/);
    assert.match(await mcp.fails('list_sessions', { store: demo }), /--only-stores/);
    assert.match(await mcp.ok('list_stores', {}), /No stores are served, and this server reads no other file/);
    assert.match(mcp.stderr(), /serving no stores \(--only-stores: every call is refused\)/);
  });

  it('an unknown tool and arguments that break the schema are errors the model can act on; the server serves on', async () => {
    const mcp = await start(['--store', demo]);
    const unknown = await mcp.fails('drop_sessions', { store: 'demo' });
    assert.match(unknown, /Tool drop_sessions not found/);
    // Each parameter's own message: what it takes, and a call that works on this store.
    const missing = await mcp.fails('read_turns', { store: 'demo' });
    assert.match(missing, /session is required: a non-empty string\. Example: read_turns \{"store":"demo","session":"[^"]+"\}/);
    const wrongType = await mcp.fails('read_turns', { store: 'demo', session: 'weather-trip', maxChars: 'lots' });
    assert.match(
      wrongType,
      /maxChars must be a whole number from 200 to 100000, got "lots"\. Example: read_turns \{"store":"demo","session":"weather-trip"\}/,
    );
    const outOfRange = await mcp.fails('search_sessions', { store: 'demo', query: 'paris', maxHits: 1_000_000 });
    assert.match(outOfRange, /maxHits must be a whole number from 1 to 200/);
    const fraction = await mcp.fails('read_turns', { store: 'demo', session: 'weather-trip', turn: 1.5 });
    assert.match(fraction, /turn must be a whole number/);
    const storeType = await mcp.fails('list_sessions', { store: 42 });
    assert.match(storeType, /store must be a string/);
    // `arguments` that is not an object at all is refused by the SDK's request check: a JSON-RPC error naming the
    // field, not a crash (the SDK reports it as an internal error, -32603).
    await assert.rejects(
      mcp.client.request({ method: 'tools/call', params: { name: 'list_sessions', arguments: 'demo' as never } }, CallToolResultSchema),
      (err: unknown) => err instanceof McpError && /"arguments"[\s\S]*expected record/.test(err.message),
    );
    assert.match(await mcp.ok('list_sessions', {}), /"weather-trip"/);
  });
});
