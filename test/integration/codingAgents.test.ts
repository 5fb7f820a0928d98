/**
 * Coding agents in the extension host (issue 27, docs/mcp.md "In VS Code"): the query tools registered as Language
 * Model tools and invoked through `vscode.lm.invokeTool` on an open store (bounded answers that say how to continue,
 * a search run in the search worker, a bad argument's message written for a model, a cancelled call), a file that is
 * not open read only after a confirmation, the MCP server definition the provider lists (started and asked for its
 * tools, as VS Code would), and the hand-over commands' prompts, with and without a chat to open.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import * as vscode from 'vscode';
import type { HandOverOutcome } from '../../src/extension/codingAgents/handOver';
import { QUERY_TOOLS } from '../../src/store/query/queryTools';
import { AdvancedSQLiteSession } from '../../src/store';
import { api, closeAll, scratch, type Scratch } from './helpers';

const TOOL_PREFIX = 'agentSessions_';

/** A session: turn 1 asks, turn 2 calls get_weather and the call fails, turn 3 follows up; `retry` forks at turn 2. */
async function writeTrip(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
  try {
    await s.addItems([
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Hi! Where are you going?' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: 'What is the weather in Oslo?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'An error occurred while running the tool. Please try again. Error: timeout' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Sorry, the weather service failed.' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: 'Try again please' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Rain, 7 °C.' }] },
    ] as never);
    await s.createBranchFromTurn(2, 'retry');
    await s.addItems([
      { role: 'user', content: 'What is the weather in Oslo today?' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Sunny, 12 °C.' }] },
    ] as never);
  } finally {
    s.close();
  }
}

const textOf = (result: vscode.LanguageModelToolResult): string =>
  result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');

async function invoke(name: string, input: object, token?: vscode.CancellationToken): Promise<string> {
  return textOf(await vscode.lm.invokeTool(`${TOOL_PREFIX}${name}`, { input, toolInvocationToken: undefined }, token));
}

async function rejection(p: Thenable<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('coding agents: Language Model tools, the MCP server definition, the hand-over', function () {
  this.timeout(60_000);
  let s: Scratch;
  let path: string;
  before(async () => {
    s = scratch();
    path = join(s.dir, 'trips.db');
    await writeTrip(path);
    const a = await api();
    await closeAll(a);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
  });
  after(async () => {
    const a = await api();
    a.codingAgents.handOver.chatCommand = 'workbench.action.chat.open';
    await closeAll(a);
    s.cleanup();
  });

  it('registers every query tool with its schema, and answers through vscode.lm.invokeTool on the open store', async () => {
    const listed = vscode.lm.tools.filter((t) => t.name.startsWith(TOOL_PREFIX));
    assert.deepEqual(
      listed.map((t) => t.name),
      QUERY_TOOLS.map((t) => `${TOOL_PREFIX}${t.name}`),
    );
    const readTurns = listed.find((t) => t.name === `${TOOL_PREFIX}read_turns`);
    assert.deepEqual((readTurns?.inputSchema as { required?: string[] }).required, ['session']);
    assert.match(readTurns?.description ?? '', /Reads turns of a session's branch as Markdown/);

    const stores = await invoke('list_stores', {});
    assert.match(stores, /1 store:/);
    assert.ok(stores.includes(JSON.stringify(path)), stores);
    const sessions = await invoke('list_sessions', {});
    assert.match(sessions, /^Source: store "trips" /);
    assert.match(sessions, /"trip"/);
    const tree = await invoke('branch_tree', { session: 'trip' });
    assert.match(tree, /retry/);
    const turn = await invoke('read_turns', { session: 'trip', turn: 2 });
    assert.match(turn, /Source: store "trips" \(".*trips\.db"\), session "trip", branch "main", turn 2/);
    assert.match(turn, /get_weather/);
    assert.match(turn, /An error occurred while running the tool/);
    const compared = await invoke('compare_branches', { session: 'trip', branch: 'main', otherBranch: 'retry' });
    assert.match(compared, /today/);
  });

  it('keeps answers bounded, with the arguments that continue them', async () => {
    const first = await invoke('read_turns', { session: 'trip', maxTurns: 1 });
    assert.match(first, /turn 1\b/);
    assert.match(first, /afterTurn=1/);
    const next = await invoke('read_turns', { session: 'trip', afterTurn: 1, maxTurns: 1 });
    assert.match(next, /What is the weather in Oslo\?/);
    const cut = await invoke('read_turns', { session: 'trip', turn: 2, maxChars: 200 });
    assert.match(cut, /charOffset=/);
  });

  it('searches a file in the search worker', async () => {
    const a = await api();
    const requests = a.registry.store.requestsSent;
    const failed = await invoke('search_sessions', { query: 'is:failed' });
    assert.match(failed, /session "trip", branch "main", turn 2, function_call_output.*\(failed: tool error\)/);
    const one = await invoke('search_sessions', { query: 'weather', maxHits: 1 });
    assert.match(one, /afterHit=1/);
    // The scan ran in dist/searchWorker.js: the store worker only answered the session list.
    assert.ok(a.registry.store.requestsSent - requests < 10);
  });

  it('answers a bad argument with what was wrong and a call that works, and stops a cancelled call', async () => {
    const unknown = await rejection(invoke('read_turns', { session: 'nope' }));
    assert.match(unknown.message, /no session "nope"\. Sessions there: "trip"/);
    assert.match(unknown.message, /Example: read_turns/);
    const badBranch = await rejection(invoke('read_turns', { session: 'trip', branch: 'nope' }));
    assert.match(badBranch.message, /"main", "retry"/);
    const badQuery = await rejection(invoke('search_sessions', { query: 'is:nonsense' }));
    assert.match(badQuery.message, /The syntax:/);
    const source = new vscode.CancellationTokenSource();
    source.cancel();
    const cancelled = await rejection(invoke('list_sessions', {}, source.token));
    assert.ok(cancelled instanceof vscode.CancellationError || /cancel/i.test(cancelled.message), cancelled.message);
  });

  it('reads the trace store for turn_timeline', async () => {
    const timeline = await invoke('turn_timeline', { session: 'trip', turn: 2 });
    assert.match(timeline, /No spans in the trace store .*traces\.db for turn 2/);
  });

  it('answers turn_context from the open store: reconstructed with no recorded input, and labelled so', async () => {
    const context = await invoke('turn_context', { session: 'trip', turn: 2 });
    // Turn 2 called a tool: a request before the call and one after its output.
    assert.match(context, /Turn 2 of branch "main": 2 model requests, RECONSTRUCTED from the stored items \(not what was recorded\)/);
    assert.match(context, /Items of request 2, in the order sent:/);
    assert.match(context, /\[tool-output\] [^\n]*: \d+ tokens \(stored #\d+\)/);
    const first = await invoke('turn_context', { session: 'trip', turn: 2, request: 1, limit: 1 });
    assert.match(
      first,
      /Outside the window: 1 stored item:\n {2}- #\d+ \[user\] [^\n]*older than the window \(session limit\) — Hello there/,
    );
  });

  it('asks before reading a file that is not open, then reads it read-only', async () => {
    const a = await api();
    // A name holding Markdown: the agent chooses the path, and the question must show it as it is.
    const other = join(s.dir, 'other [x](y).db');
    const o = new AdvancedSQLiteSession({ sessionId: 'elsewhere', dbPath: other, createTables: true });
    await o.addItems([{ role: 'user', content: 'Hi' }] as never);
    o.close();
    const tool = a.codingAgents.tools.get(`${TOOL_PREFIX}list_sessions`)!;
    const token = new vscode.CancellationTokenSource().token;
    const prepared = await tool.prepareInvocation!({ input: { store: other } }, token);
    assert.ok(prepared?.confirmationMessages, 'a confirmation for a file the user did not open');
    // The path as text: Markdown's punctuation escaped (a path holding `[x](y)` must not become a link) and its spaces
    // written as `&nbsp;` (VS Code's `appendText`, 1.103 and 1.139 alike).
    const asked = String((prepared.confirmationMessages.message as vscode.MarkdownString).value);
    assert.ok(
      asked
        .replace(/&nbsp;/g, ' ')
        .replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, '$1')
        .includes(other),
      asked,
    );
    assert.ok(!asked.includes('[x](y)'), `no link: ${asked}`);
    const openStore = await tool.prepareInvocation!({ input: { store: 'trips' } }, token);
    assert.equal(openStore?.confirmationMessages, undefined, 'no confirmation for an open store');
    const result = await tool.invoke({ input: { store: other }, toolInvocationToken: undefined }, token);
    assert.match(textOf(result!), /"elsewhere"/);
    assert.equal((await tool.prepareInvocation!({ input: { store: other } }, token))?.confirmationMessages, undefined, 'asked once');
    assert.ok(!a.registry.get(other), 'not opened in the view');
  });

  it('offers agent-sessions mcp for the open files, and the server it starts lists the tools', async () => {
    const a = await api();
    const mcp = a.codingAgents.mcp;
    assert.ok(mcp, 'the MCP provider is registered (VS Code 1.101+)');
    const [files] = (await mcp.provideMcpServerDefinitions()) ?? [];
    assert.ok(files);
    assert.equal(files.command, process.execPath);
    assert.ok(existsSync(files.args[0]!), `${files.args[0]} exists`);
    // Exactly the open stores (issue 46): the one open file, and --only-stores so that a call can name no other.
    assert.deepEqual(files.args.slice(1, 5), ['mcp', '--only-stores', '--store', path]);
    assert.deepEqual(
      files.args.filter((_, i) => files.args[i - 1] === '--store'),
      a.registry.list().map((e) => e.path),
    );

    // Started as VS Code starts it: an MCP client's initialize, then tools/list and one call.
    const child = spawn(files.command, files.args, { env: { ...process.env, ...(files.env as Record<string, string>) }, stdio: 'pipe' });
    try {
      const lines = createInterface({ input: child.stdout });
      const replies = new Map<number, (v: unknown) => void>();
      lines.on('line', (line) => {
        const m = JSON.parse(line) as { id?: number };
        if (m.id !== undefined) replies.get(m.id)?.(m);
      });
      let id = 0;
      const request = (method: string, params: object): Promise<{ result?: Record<string, unknown> }> =>
        new Promise((resolve) => {
          replies.set(++id, resolve as (v: unknown) => void);
          child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
        });
      await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      const tools = (await request('tools/list', {})).result?.tools as { name: string }[];
      assert.deepEqual(
        tools.map((t) => t.name),
        QUERY_TOOLS.map((t) => t.name),
      );
      const called = (await request('tools/call', { name: 'list_sessions', arguments: {} })).result?.content as { text: string }[];
      assert.match(called[0]!.text, /"trip"/);
      // A file not open in VS Code is refused: opening it there is the user's confirmation (docs/mcp.md).
      const elsewhere = join(s.dir, 'not-open.db');
      await writeTrip(elsewhere);
      const refused = (await request('tools/call', { name: 'list_sessions', arguments: { store: elsewhere } })).result as {
        isError?: boolean;
        content: { text: string }[];
      };
      assert.equal(refused.isError, true);
      assert.match(refused.content[0]!.text, /--only-stores.*open the session file in VS Code's Sessions view first/);
    } finally {
      child.stdin.end();
      child.kill();
    }

    // Closing the file changes what is offered, and VS Code is told.
    let fired = 0;
    const sub = mcp.onDidChangeMcpServerDefinitions(() => fired++);
    try {
      await a.registry.close(path);
      assert.ok(fired > 0, 'onDidChangeMcpServerDefinitions fired');
      const [none] = (await mcp.provideMcpServerDefinitions()) ?? [];
      assert.ok(!none?.args.includes(path));
      assert.ok(none?.args.includes('--only-stores'));
      // A new version, which is what makes VS Code restart a running server with the new arguments.
      assert.notEqual(none?.version, files.version);
    } finally {
      sub.dispose();
      await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    }
  });

  it('hands a turn, a comparison and a failed call over to the chat, or to the clipboard without one', async () => {
    const a = await api();
    const opened: unknown[] = [];
    const fake = vscode.commands.registerCommand('agentSessionsTest.openChat', (options: unknown) => void opened.push(options));
    a.codingAgents.handOver.chatCommand = 'agentSessionsTest.openChat';
    // A stand-in chat with a model behind it (code-server has neither).
    const hadModel = a.codingAgents.handOver.hasChatModel;
    a.codingAgents.handOver.hasChatModel = async () => true;
    try {
      const turn = { kind: 'turn', dbPath: path, sessionId: 'trip', branchId: 'main', turn: 2, branchTurnNumber: 2 };
      const asked = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.askAboutTurn', turn);
      assert.equal(asked.opened, true);
      // Where the turn is goes in the data block (unit-tested in handOverPrompts.test.ts), the question is the user's.
      assert.match(asked.prompt, /^Use #readTurns to read the turn named in the session data below, then answer my question\./);
      assert.ok(
        asked.prompt.includes(`store: ${JSON.stringify(path)}\nsession: "trip"\nbranch: "main"\nturn: 2\n</session-data-`),
        asked.prompt,
      );
      assert.match(asked.prompt, /My question: $/);
      assert.deepEqual(opened.pop(), { query: asked.prompt, isPartialQuery: true, mode: 'agent' });

      const compared = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.askAboutComparison', [
        { dbPath: path, sessionId: 'trip', branchId: 'main' },
        { dbPath: path, sessionId: 'trip', branchId: 'retry' },
      ]);
      assert.match(compared.prompt, /^Use #compareBranches to compare the branches named in the session data below/);
      assert.match(compared.prompt, /\nsession: "trip"\nbaseline branch: "main"\nother branches: "retry"\n/);

      // A turn: its one failed call. An item: the call whose output failed counts too.
      const explained = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.explainFailure', turn);
      assert.match(explained.prompt, /\nfailed call: item \d+\ntool: "get_weather"\nwhy it counts as failed: "tool error"\n/);
      assert.match(explained.prompt, /#turnTimeline/);
      // Left in the chat's input for the user to send, like the others: agent mode acts on what it is sent.
      assert.deepEqual(opened.pop(), { query: explained.prompt, isPartialQuery: true, mode: 'agent' });
      const items = await a.registry.require(path).db!.getTurnItems('trip', 'main', 2);
      const call = items.find((e) => e.type === 'function_call')!;
      const fromCall = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.explainFailure', {
        kind: 'item',
        dbPath: path,
        sessionId: 'trip',
        branchId: 'main',
        turn: 2,
        sequenceNumber: call.sequenceNumber,
      });
      // The same prompt but for the fence's tag, which is new in every prompt.
      const untagged = (prompt: string): string => prompt.replace(/session-data-[0-9a-f]{16}/g, 'session-data-…');
      assert.equal(untagged(fromCall.prompt), untagged(explained.prompt));
      opened.pop();
      const none = await vscode.commands.executeCommand('agentSessions.explainFailure', { ...turn, turn: 1 });
      assert.equal(none, undefined);
      assert.match(a.failures.pop()?.message ?? '', /Turn 1 has no failed tool call/);

      // No chat: the prompt is on the clipboard and a message says how to get one.
      a.codingAgents.handOver.chatCommand = 'agentSessionsTest.noSuchChat';
      const fallback = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.askAboutTurn', turn);
      assert.equal(fallback.opened, false);
      assert.equal(await vscode.env.clipboard.readText(), fallback.prompt);
      assert.equal(opened.length, 1, 'only the comparison is left: nothing else was opened');
      // A chat command with no model behind it (VS Code's own chat view before Copilot): the same fallback.
      a.codingAgents.handOver.chatCommand = 'agentSessionsTest.openChat';
      a.codingAgents.handOver.hasChatModel = hadModel;
      const noModel = await vscode.commands.executeCommand<HandOverOutcome>('agentSessions.askAboutTurn', turn);
      assert.equal(noModel.opened, (await vscode.lm.selectChatModels()).length > 0);
    } finally {
      a.codingAgents.handOver.hasChatModel = hadModel;
      a.codingAgents.handOver.chatCommand = 'workbench.action.chat.open';
      fake.dispose();
    }
  });
});
