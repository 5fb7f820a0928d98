/**
 * The configured agent: command-line parsing, client isolation from the environment, workspace trust, and MCP
 * stdio servers end to end (a minimal MCP server written by the test, spoken to by the real MCP client).
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CommandLineError,
  McpServerStartError,
  OPENAI_BASE_URL,
  createConfiguredAgent,
  createOpenAIClient,
  parseCommandLine,
  type ConfiguredAgent,
} from '../../../src/agents/agentConfig';
import { UntrustedWorkspaceError } from '../../../src/agents/userAgentModule';
import { runOnBranch } from '../../../src/agents/branchRun';
import { startLoopbackOpenAI, type LoopbackOpenAI } from '../../support/loopbackOpenAI';
import { Workspace } from '../../support/sessionHelpers';
import { TEST_KEY, eventLog, readBranch, seedSession } from './agentTestKit';

/** A minimal MCP server over stdio (newline-delimited JSON-RPC) with one tool, `add`; logs methods to a file. */
const MCP_SERVER = `'use strict';
const fs = require('node:fs');
const log = process.argv[2];
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
rl.on('line', (line) => {
  const msg = JSON.parse(line);
  if (log) fs.appendFileSync(log, msg.method + '\\n');
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'adder', version: '1.0.0' } } });
  else if (msg.method === 'tools/list') send({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'add', description: 'Add two numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }] } });
  else if (msg.method === 'tools/call') send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: String(msg.params.arguments.a + msg.params.arguments.b) }], isError: false } });
  else send({ jsonrpc: '2.0', id: msg.id, result: {} });
});
`;

describe('agentConfig', () => {
  describe('parseCommandLine', () => {
    it('splits words and honours quotes and escapes without a shell', () => {
      assert.deepEqual(parseCommandLine('npx -y @modelcontextprotocol/server-filesystem /tmp'), [
        'npx',
        '-y',
        '@modelcontextprotocol/server-filesystem',
        '/tmp',
      ]);
      assert.deepEqual(parseCommandLine(`node "/path with spaces/server.js" --name 'it''s' a\\ b`), [
        'node',
        '/path with spaces/server.js',
        '--name',
        'its',
        'a b',
      ]);
      assert.deepEqual(parseCommandLine('"C:\\Program Files\\node.exe" C:\\srv\\mcp.js'), [
        'C:\\Program Files\\node.exe',
        'C:\\srv\\mcp.js',
      ]);
      assert.deepEqual(parseCommandLine(`cmd "say \\"hi\\"" '$HOME' ""`), ['cmd', 'say "hi"', '$HOME', '']);
      assert.deepEqual(parseCommandLine('  tool   --flag=1  '), ['tool', '--flag=1']);
      assert.deepEqual(parseCommandLine('echo "a|b" \'x;y\' \\$(z)'), ['echo', 'a|b', 'x;y', '$(z)']);
      assert.deepEqual(parseCommandLine(''), []);
    });

    it('refuses shell operators and unterminated quotes', () => {
      for (const line of ['server | tee log', 'a && b', 'a; rm -rf /', 'server > out', 'x `id`', 'x $(id)']) {
        assert.throws(() => parseCommandLine(line), CommandLineError, line);
      }
      assert.throws(() => parseCommandLine('node "open'), /Unterminated double quote/);
      assert.throws(() => parseCommandLine("node 'open"), /Unterminated single quote/);
    });
  });

  describe('client isolation', () => {
    const vars = ['OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_API_KEY'] as const;
    let saved: Record<string, string | undefined>;
    beforeEach(() => {
      saved = Object.fromEntries(vars.map((v) => [v, process.env[v]]));
      process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
      process.env.OPENAI_ORG_ID = 'org-from-env';
      process.env.OPENAI_PROJECT_ID = 'proj-from-env';
      process.env.OPENAI_API_KEY = 'sk-from-env-not-to-be-sent';
    });
    afterEach(() => {
      for (const v of vars) {
        if (saved[v] === undefined) delete process.env[v];
        else process.env[v] = saved[v];
      }
    });

    it('uses only the given base URL and key; ignores OPENAI_* variables', async () => {
      const client = createOpenAIClient({}, 'sk-given');
      assert.equal(client.baseURL, OPENAI_BASE_URL);
      assert.equal(client.organization, null);
      assert.equal(client.project, null);
      assert.equal(client.apiKey, 'sk-given');

      const server = await startLoopbackOpenAI({ script: () => ({ kind: 'text', text: 'ok' }) });
      const ws = new Workspace('asi-iso-');
      let agent: ConfiguredAgent | undefined;
      try {
        const dbPath = ws.path('db.sqlite');
        await seedSession(dbPath, [['q', 'a']]);
        agent = await createConfiguredAgent({ model: 'm', instructions: 'i', baseUrl: server.baseUrl, maxRetries: 0 }, TEST_KEY, {
          trusted: false,
        });
        const outcome = await runOnBranch({ dbPath, sessionId: 's1', agent, input: 'hi' });
        assert.equal(outcome.kind, 'run/completed');
        const [req] = server.requests;
        assert.equal(req?.authorization, `Bearer ${TEST_KEY}`);
        assert.equal(req?.headers['openai-organization'], undefined);
        assert.equal(req?.headers['openai-project'], undefined);
      } finally {
        await agent?.close();
        await server.close();
        ws.cleanup();
      }
    });
  });

  describe('trust and MCP servers', () => {
    let ws: Workspace;
    let server: LoopbackOpenAI;
    const opened: ConfiguredAgent[] = [];
    beforeEach(async () => {
      ws = new Workspace('asi-mcp-');
      writeFileSync(join(ws.dir, 'adder.js'), MCP_SERVER);
      server = await startLoopbackOpenAI({
        script: (r) => {
          const input = r.body.input as Record<string, unknown>[];
          const last = input[input.length - 1]!;
          return last.type === 'function_call_output'
            ? { kind: 'text', text: `The sum is ${JSON.stringify(last.output)}` }
            : { kind: 'calls', calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] };
        },
      });
    });
    afterEach(async () => {
      for (const a of opened.splice(0)) await a.close();
      await server.close();
      ws.cleanup();
    });
    const mcpLine = (log: string) => `"${process.execPath}" "${join(ws.dir, 'adder.js')}" "${log}"`;

    it('starts no MCP server in an untrusted workspace, and says so', async () => {
      const log = join(ws.dir, 'mcp.log');
      const agent = await createConfiguredAgent(
        { model: 'm', instructions: 'i', baseUrl: server.baseUrl, mcpServers: [mcpLine(log)] },
        'k',
        { trusted: false, cwd: ws.dir },
      );
      opened.push(agent);
      assert.equal(agent.agent.mcpServers.length, 0);
      assert.match(agent.warnings[0] ?? '', /1 MCP server\(s\) not started: this workspace is not trusted/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(existsSync(log), false, 'the server program never ran');
    });

    it('refuses an agent module in an untrusted workspace without reading it', async () => {
      await assert.rejects(
        createConfiguredAgent({ model: 'm', instructions: 'i', agentModule: 'does-not-matter.js' }, 'k', { trusted: false, cwd: ws.dir }),
        UntrustedWorkspaceError,
      );
    });

    it('gives the built-in agent the tools of an MCP server, round trip through the real MCP client', async () => {
      const log = join(ws.dir, 'mcp.log');
      const dbPath = ws.path('db.sqlite');
      await seedSession(dbPath, [['q', 'a']]);
      const agent = await createConfiguredAgent(
        { model: 'm', instructions: 'Use add.', baseUrl: server.baseUrl, maxRetries: 0, mcpServers: [mcpLine(log)] },
        TEST_KEY,
        { trusted: true, cwd: ws.dir },
      );
      opened.push(agent);
      const events = eventLog();
      const outcome = await runOnBranch({ dbPath, sessionId: 's1', agent, input: 'What is 2+3?', onEvent: events.onEvent });
      assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
      assert.deepEqual(
        server.requests[0]!.body.tools?.map((t) => t.name),
        ['add'],
        'the MCP tool was offered to the model',
      );
      const output = events.events.find((e) => e.kind === 'tool/output');
      assert.deepEqual(output && output.kind === 'tool/output' && [output.name, output.output], ['add', '5']);
      const main = await readBranch(dbPath, 'main');
      assert.deepEqual(
        main.byTurns.get(2)?.map((i) => [i.type, i.toolName]),
        [
          ['user', null],
          ['function_call', 'add'],
          ['function_call_output', null],
          ['assistant', null],
        ],
      );
      const methods = readFileSync(log, 'utf8').trim().split('\n');
      assert.ok(methods.includes('initialize'), methods.join(','));
      assert.ok(methods.includes('tools/list'));
      assert.equal(methods.filter((m) => m === 'tools/call').length, 1, 'the tool ran once, in the MCP server');
    });

    it('an MCP server that cannot start: McpServerStartError, reported as a tool failure with nothing written', async () => {
      const dbPath = ws.path('db.sqlite');
      await seedSession(dbPath, [['q', 'a']]);
      const config = {
        model: 'm',
        instructions: 'i',
        baseUrl: server.baseUrl,
        mcpServers: [`"${join(ws.dir, 'no-such-program')}" --stdio`],
      };
      await assert.rejects(createConfiguredAgent(config, 'k', { trusted: true, cwd: ws.dir }), McpServerStartError);
      const outcome = await runOnBranch({
        dbPath,
        sessionId: 's1',
        agent: () => createConfiguredAgent(config, 'k', { trusted: true, cwd: ws.dir }),
        input: 'hi',
      });
      assert.equal(outcome.kind, 'run/failed');
      assert.equal(outcome.kind === 'run/failed' && outcome.failure, 'tool');
      assert.match(outcome.kind === 'run/failed' ? outcome.message : '', /The MCP server '.*no-such-program" --stdio' did not start/);
      assert.equal(server.requests.length, 0);
    });

    it('a command line with a shell operator is refused before anything starts', async () => {
      await assert.rejects(
        createConfiguredAgent({ model: 'm', instructions: 'i', mcpServers: ['server | tee log'] }, 'k', { trusted: true, cwd: ws.dir }),
        CommandLineError,
      );
    });
  });
});
