// `agent-sessions mcp` on a PostgreSQL store, through a real MCP client (the SDK's Client over stdio) spawning the
// CLI's bundle: the store by its address with the password from $AGENT_SESSIONS_PASSWORD (never shown), its sessions,
// a conversation read and searched, usage reported as absent, resources; the server writes nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { freshPostgresDatabase } from '../support/servers';
import { TRIP, js, sql } from './remoteHelpers';
import { buildSharedCli, sharedCliPath } from '../support/cliBundle';

const ROOT = resolve(__dirname, '..', '..');

describe('agent-sessions mcp on a PostgreSQL store (real client, real server)', function () {
  this.timeout(120_000);
  let dir: string;
  let client: Client;
  let url: string;
  let address: string;
  let password: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-mcp-remote-'));
    const cli = sharedCliPath();
    await buildSharedCli();
    url = await freshPostgresDatabase();
    for (const [id, items] of [
      ['trip', TRIP],
      ['other', [js.user('Hello there')]],
    ] as const) {
      const s = new PostgresSession({ sessionId: id, connection: { url }, createTables: true });
      await s.addItems([...items]);
      await s.close();
    }
    const u = new URL(url);
    password = decodeURIComponent(u.password);
    u.password = '';
    address = u.toString();
    client = new Client({ name: 'mcp-remote-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, 'mcp', '--store', address],
        env: {
          ...(process.env as Record<string, string>),
          NODE_PATH: join(ROOT, 'node_modules'),
          AGENT_SESSIONS_PASSWORD: password,
          AGENT_SESSIONS_DB: '',
        },
        stderr: 'pipe',
        cwd: dir,
      }),
    );
  });
  after(async () => {
    await client?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function ok(name: string, args: Record<string, unknown>): Promise<string> {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    assert.notEqual(r.isError, true, text);
    if (password) assert.doesNotMatch(text, new RegExp(password), 'the password never shows');
    return text;
  }

  it('lists, reads and searches the store; no usage; sessions as resources; nothing written', async () => {
    const before = await sql(url, 'SELECT count(*)::int AS n FROM agent_messages');
    const stores = await ok('list_stores', {});
    assert.match(stores, /server store "postgresql:\/\/.*127\.0\.0\.1/);
    const sessions = await ok('list_sessions', {});
    assert.match(sessions, /- "trip": 6 items, 1 branch, updated /);
    assert.match(sessions, /- "other": 1 item, 1 branch/);
    assert.match(await ok('branch_tree', { session: 'trip' }), /1 branch:\n- "main": 2\+? turns, 6 items/);
    const turns = await ok('read_turns', { session: 'trip' });
    assert.match(turns, /## Turn 1 \(branch main\)[\s\S]*\*\*Tool output\*\* `get_weather`/);
    const hits = await ok('search_sessions', { query: 'tool:get_weather' });
    assert.match(hits, /- session "trip", branch "main", turn 2, function_call get_weather: /);
    assert.match(await ok('token_usage', { session: 'trip' }), /No token usage: PostgreSQL and Redis sessions record none/);
    const { resources } = await client.listResources();
    assert.ok(
      resources.some((r) => r.uri.endsWith('/trip')),
      resources.map((r) => r.uri).join(' '),
    );
    assert.deepEqual(await sql(url, 'SELECT count(*)::int AS n FROM agent_messages'), before);
  });
});
