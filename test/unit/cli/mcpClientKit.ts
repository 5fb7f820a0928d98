/**
 * What the MCP suites share: the CLI's esbuild bundle (built with the options of dist/cli.js, into the suite's own
 * temporary folder, never into dist/), and a real MCP client (the SDK's `Client` over `StdioClientTransport`) started
 * on it, whose calls come back as the text a model reads and whether it was an error.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';
import { tempDir } from '../../support/tempFiles';
import { ROOT, writeExportFixture } from '../store/export/exportFixtures';

/** A connected client, and its calls as text. */
export interface McpSession {
  client: Client;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** The MCP log messages (`notifications/message`) the server sent so far, as `level: data`. */
  logs(): string[];
  call(name: string, args: unknown): Promise<{ text: string; isError: boolean }>;
  ok(name: string, args: Record<string, unknown>): Promise<string>;
  fails(name: string, args: unknown): Promise<string>;
  close(): Promise<void>;
}

/** Starts `node <cli> mcp ...args` in `cwd` (`env` on top of this process's) and connects a client to it. */
export async function startMcp(cli: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<McpSession> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', ...args],
    // The bundle lives outside the repository: let it find better-sqlite3 in this checkout's node_modules.
    env: { ...(process.env as Record<string, string>), NODE_PATH: join(ROOT, 'node_modules'), AGENT_SESSIONS_DB: '', ...env },
    stderr: 'pipe',
    cwd,
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const logs: string[] = [];
  // Before connecting: a server may log as soon as the client says it is initialized.
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(`${n.params.level}: ${String(n.params.data)}`));
  await client.connect(transport);
  const call = async (name: string, args: unknown): Promise<{ text: string; isError: boolean }> => {
    // `arguments` as given, even when it is not an object: the server must answer what a broken client sends.
    const r = (await client.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult;
    return { text: r.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), isError: r.isError === true };
  };
  return {
    client,
    stderr: () => stderr,
    logs: () => [...logs],
    call,
    ok: async (name, args) => {
      const r = await call(name, args);
      assert.equal(r.isError, false, r.text);
      return r.text;
    },
    fails: async (name, args) => {
      const r = await call(name, args);
      assert.equal(r.isError, true, `expected an error, got: ${r.text}`);
      return r.text;
    },
    close: () => client.close(),
  };
}

/** What a suite of MCP servers has: its folder, the CLI bundle in it, a session file, and a start that closes at the end. */
export interface McpSuite {
  readonly dir: string;
  readonly cli: string;
  /** A session file written by the export fixture (`writeExportFixture`), at `fixtureName` in the suite's folder. */
  readonly fixture: string;
  start(args: readonly string[], env?: Record<string, string>): Promise<McpSession>;
}

/**
 * Registers the suite's hooks (call inside `describe`): builds the CLI and writes the fixture before, closes every
 * server started and removes the folder after.
 */
export function mcpSuite(prefix: string, fixtureName = 'demo.db'): McpSuite {
  const tmp = tempDir(prefix);
  const cli = sharedCliPath();
  const fixture = join(tmp.dir, fixtureName);
  const sessions: McpSession[] = [];
  before(async () => {
    await buildSharedCli();
    await writeExportFixture(fixture);
  });
  after(async () => {
    for (const s of sessions) await s.close();
    tmp.cleanup();
  });
  return {
    dir: tmp.dir,
    cli,
    fixture,
    async start(args, env = {}) {
      const s = await startMcp(cli, args, tmp.dir, env);
      sessions.push(s);
      return s;
    },
  };
}
