/**
 * The user's own agent through an agent command, in the real extension host: the setting, the composer's request
 * (`run/start` with an agent), *Retry from Here* and *Retry with Several Models* with two models, each through the
 * real commands and a real Python child process (test/fixtures/agent-commands/python_turn.py, standard library
 * only), which writes its turn in the Python SDK's format and answers "Answer from <model>: <message>"; and, in every
 * host, with or without Python, a program that is not found, the Node example and an agent URL. What is checked is
 * read back from the file and from the agents view the conversation view is given.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession } from '../../src/store';
import type { WhatIfResult } from '../../src/extension/runs/whatIf';
import type { AgentChoicesView } from '../../src/shared/agentChoices';
import type { RunOutcome } from '../../src/shared/protocol/runEvents';
import { api, askPanel, closeAll, fixtures, scratch, waitFor, type Scratch } from './helpers';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { installNodeExample, startAgUiServer } from '../unit/agents/command/commandKit';

const ROOT = join(fixtures, '..', '..');
const KEY = 'sk-test-agent-command-key-31f9';

const SESSION = 'trio';
const QUESTIONS = ['First question', 'Second question', 'Third question'];
const AGENT = 'command:py-agent';
const hasPython = spawnSync('python3', ['--version']).status === 0;

async function setAgent(settings: Record<string, unknown>): Promise<void> {
  const c = vscode.workspace.getConfiguration('agentSessions.agent');
  for (const [k, v] of Object.entries(settings)) await c.update(k, v, vscode.ConfigurationTarget.Global);
}

/** The branch's turns (item types) and its last item's text. */
async function branch(path: string, branchId: string): Promise<{ turns: string[]; last: string; usage: number[] }> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, readonly: true });
  try {
    const turns = [...(await s.getConversationByTurns(branchId)).keys()].map(String);
    const items = (await s.getStoredItems(undefined, branchId)) as { content?: unknown }[];
    const content = items.at(-1)?.content;
    const last = Array.isArray(content) ? String((content[0] as { text?: string }).text) : String(content);
    return { turns, last, usage: (await s.getTurnUsage(undefined, branchId)).map((u) => u.userTurnNumber) };
  } finally {
    s.close();
  }
}

describe('agent commands (the user own agent in a child process, or over AG-UI HTTP)', function () {
  let s: Scratch;
  let path: string;

  before(async () => {
    await api();
  });
  after(async () => {
    await setAgent({ command: undefined, url: undefined, model: undefined, models: undefined });
    await vscode.commands.executeCommand('agentSessions.setApiKey', '');
  });
  beforeEach(async () => {
    s = scratch();
    await closeAll(await api());
    path = join(s.dir, 'trio.db');
    const w = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
    for (const q of QUESTIONS)
      await w.addItems([
        { role: 'user', content: q },
        { role: 'assistant', content: `Answer to ${q}` },
      ] as never);
    w.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await setAgent({
      command: { 'py-agent': `python3 "${join(fixtures, 'agent-commands', 'python_turn.py')}"`, ghost: 'definitely-not-a-program-9c1' },
      model: 'configured-model',
      models: ['model-b', 'model-c'],
      // Mocha runs a suite's own tests before its nested suites: the URL test's setting must not reach the next test.
      url: undefined,
    });
  });
  afterEach(async () => {
    await closeAll(await api());
    s.cleanup();
  });

  const turn = (n: number) => ({ kind: 'turn', dbPath: path, sessionId: SESSION, branchId: 'main', turn: n, branchTurnNumber: n });

  // Mocha runs this suite's own tests before its nested suites: this one first, before any command has run here.
  it("loads AG-UI's event schemas a few seconds after a command is configured, before any run (not on the first run)", async function () {
    this.timeout(30_000);
    // The extension's copy of @ag-ui/core's schemas: required from dist/vendor/ when the runner first asks for them.
    const schemas = join(ROOT, 'dist', 'vendor', 'agUi.js');
    // An earlier suite that ran a command loaded them already: then this cannot show the preload.
    if (require.cache[schemas] !== undefined) this.skip();
    // beforeEach configured the commands; the runner preloads 2 s after it hears of them.
    await waitFor(() => require.cache[schemas] !== undefined, 15_000, 'the AG-UI schemas were not preloaded');
  });

  // Only these need Python: the Node runner, the missing program and the agent URL run in every host.
  describe('through a Python agent command (python_turn.py)', () => {
    before(function () {
      if (!hasPython) {
        console.log('    (skipped: python3 is not installed in this host, so the Python agent command cannot run)');
        this.skip();
      }
    });

    it('the composer sends to main through the chosen command; the agents view shows the command and its last run', async () => {
      const a = await api();
      const panel = a.panels.open({ dbPath: path, sessionId: SESSION, branchId: 'main' });
      await a.panels.whenReady(panel);
      const offered = await askPanel(panel, 'agents/get', {});
      const view = (offered as { result: AgentChoicesView }).result;
      assert.deepEqual(
        view.choices.map((c) => [c.id, c.kind]),
        [
          ['builtin', 'builtin'],
          [AGENT, 'command'],
          ['command:ghost', 'command'],
        ],
      );
      const started = await askPanel(panel, 'run/start', { branchId: 'main', input: 'Composer question', agent: AGENT });
      assert.equal(started.kind === 'response' && started.ok, true, JSON.stringify(started));
      const landed = (await waitFor(
        async () => ((await branch(path, 'main')).turns.length === 4 ? branch(path, 'main') : undefined),
        15_000,
      ))!;
      assert.equal(landed.last, 'Answer from default: Composer question');
      assert.deepEqual(landed.usage, [4], 'the usage row the command stored');
      const after = (await waitFor(() => a.runner.choices.view().choices.find((c) => c.id === AGENT)?.status ?? undefined, 10_000))!;
      assert.deepEqual([after.ok, after.summary, after.exitCode], [true, 'completed', 0]);
    });

    it('Retry from Here through the command: a new branch, the agent own model, the comparison opened', async () => {
      const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryFromHere', turn(2), 'configured-model', AGENT);
      // The configured model means the agent's own (the command is given none): the branch, the compare column and
      // its cost are not those of configured-model, which the command never used.
      assert.deepEqual(
        result.runs.map((r) => [r.branchId, r.label.label, r.outcome.kind]),
        [['retry-own-model-1', "agent's own model", 'run/completed']],
        JSON.stringify(result.runs),
      );
      const retry = await branch(path, 'retry-own-model-1');
      assert.deepEqual(retry.turns, ['1', '2']);
      assert.equal(retry.last, 'Answer from default: Second question');
      assert.deepEqual(retry.usage, [2]);
      assert.equal(result.compared, true);
      assert.deepEqual(result.compareTargets?.slice(1), [
        {
          dbPath: path,
          sessionId: result.source.sessionId,
          branchId: 'retry-own-model-1',
          label: "agent's own model",
          unpriced: true,
          runMs: result.runs[0]?.runMs,
        },
      ]);
    });

    it('Retry with Several Models through the command: each child got its model, on its own branch', async () => {
      const result = await vscode.commands.executeCommand<WhatIfResult>(
        'agentSessions.retryWithModels',
        turn(3),
        ['model-b', 'model-c'],
        AGENT,
      );
      assert.deepEqual(
        result.runs.map((r) => [r.branchId, r.model, r.outcome.kind]),
        [
          ['retry-model-b-1', 'model-b', 'run/completed'],
          ['retry-model-c-1', 'model-c', 'run/completed'],
        ],
        JSON.stringify(result.runs),
      );
      for (const m of ['model-b', 'model-c']) {
        const b = await branch(path, `retry-${m}-1`);
        assert.deepEqual(b.turns, ['1', '2', '3'], m);
        assert.equal(b.last, `Answer from ${m}: Third question`, m);
        assert.deepEqual(b.usage, [3], m);
      }
      assert.deepEqual(
        result.compareTargets?.map((t) => t.branchId),
        ['main', 'retry-model-b-1', 'retry-model-c-1'],
      );
    });
  });

  it('a command whose program is not found: the outcome says so, the file is as it was, the status shows exit code 127', async () => {
    const before = await branch(path, 'main');
    const outcome = await vscode.commands.executeCommand<RunOutcome | undefined>(
      'agentSessions.sendMessage',
      { kind: 'branch', dbPath: path, sessionId: SESSION, branchId: 'main' },
      'Anyone there?',
      'command:ghost',
    );
    assert.equal(outcome?.kind, 'run/failed');
    assert.match(
      outcome?.kind === 'run/failed' ? outcome.message : '',
      /^The agent command 'ghost' could not be started: its program was not found \(exit code 127\)\./,
    );
    assert.deepEqual(await branch(path, 'main'), before);
    const status = (await api()).runner.choices.view().choices.find((c) => c.id === 'command:ghost')?.status;
    assert.deepEqual([status?.ok, status?.summary], [false, 'exit code 127']);
  });

  describe('the Node example (the real @openai/agents runner against a loopback model server)', () => {
    let server: LoopbackOpenAI;
    const savedBaseUrl = process.env.OPENAI_BASE_URL;
    before(async () => {
      server = await startLoopbackOpenAI({
        script: (req) => ({ kind: 'text', text: `${req.body.model} says: ${lastUserText(req.body)}` }),
      });
      // The command inherits the extension host's environment: this is how its OpenAI client finds the server.
      process.env.OPENAI_BASE_URL = server.baseUrl;
    });
    after(async () => {
      if (savedBaseUrl === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = savedBaseUrl;
      await server.close();
      // The suites after this one run without a stored key, as they did when they ran first.
      await vscode.commands.executeCommand('agentSessions.setApiKey', '');
    });

    it('Retry with Several Models: each child asked the loopback server with its model and the stored key', async () => {
      await setAgent({ command: { 'node-agent': installNodeExample(join(s.dir, 'example'), ROOT) } });
      await vscode.commands.executeCommand('agentSessions.setApiKey', KEY);
      const from = server.requests.length;
      const result = await vscode.commands.executeCommand<WhatIfResult>(
        'agentSessions.retryWithModels',
        turn(2),
        ['model-b', 'model-c'],
        'command:node-agent',
      );
      assert.deepEqual(
        result.runs.map((r) => [r.branchId, r.outcome.kind]),
        [
          ['retry-model-b-1', 'run/completed'],
          ['retry-model-c-1', 'run/completed'],
        ],
        JSON.stringify(result.runs),
      );
      const asked = server.requests.slice(from);
      assert.deepEqual(asked.map((r) => r.body.model).sort(), ['model-b', 'model-c']);
      assert.deepEqual(new Set(asked.map((r) => r.authorization)), new Set([`Bearer ${KEY}`]));
      for (const m of ['model-b', 'model-c']) {
        const b = await branch(path, `retry-${m}-1`);
        assert.deepEqual(b.turns, ['1', '2'], m);
        assert.equal(b.last, `${m} says: Second question`, m);
        assert.deepEqual(b.usage, [2], m);
      }
    });
  });

  it('an agent served over AG-UI HTTP (agentSessions.agent.url): the composer streams it and the turn is settled', async () => {
    const agent = await startAgUiServer(async (input, send) => {
      const props = (input.forwardedProps as { agentSessions: { store: { path: string }; branchId: string } }).agentSessions;
      const w = new AdvancedSQLiteSession({ sessionId: String(input.threadId), dbPath: props.store.path });
      try {
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Served over HTTP.' });
        await w.addItems([
          { role: 'user', content: 'Via the URL' },
          { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Served over HTTP.' }] },
        ] as never);
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      } finally {
        w.close();
      }
    });
    try {
      await setAgent({ url: agent.url });
      const outcome = await vscode.commands.executeCommand<RunOutcome | undefined>(
        'agentSessions.sendMessage',
        { kind: 'branch', dbPath: path, sessionId: SESSION, branchId: 'main' },
        'Via the URL',
        'url',
      );
      assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
      assert.equal(agent.inputs.length, 1);
      const main = await branch(path, 'main');
      assert.deepEqual(main.turns, ['1', '2', '3', '4']);
      assert.equal(main.last, 'Served over HTTP.');
      assert.match(outcome?.written.summary ?? '', /no usage recorded/);
    } finally {
      await agent.close();
    }
  });
});
