/**
 * What-if runs in the real extension host: Retry from Here, Edit and Resend and Retry with Several Models on a turn
 * node, through the real commands, the conversation view's run path and @openai/agents against a loopback Responses
 * server (never a real API). Each new branch is read back from the file: shared turns, the turn sent again, the
 * usage row, and the model each request named.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession } from '../../src/store';
import type { WhatIfResult } from '../../src/extension/runs/whatIf';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { api, closeAll, scratch, type Scratch } from './helpers';

const KEY = 'sk-test-whatif-never-leaks-77c1';
const SESSION = 'trio';
const QUESTIONS = ['First question', 'Second question', 'Third question'];
const COMPARE = 'agentSessions.compareBranches';

async function setAgent(settings: Record<string, unknown>): Promise<void> {
  const c = vscode.workspace.getConfiguration('agentSessions.agent');
  for (const [k, v] of Object.entries(settings)) await c.update(k, v, vscode.ConfigurationTarget.Global);
}

/** A branch as stored: per turn, the item types and the user message; the turns with a usage row. */
async function branch(path: string, branchId: string): Promise<{ turns: Record<string, [string[], unknown]>; usage: number[] }> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, readonly: true });
  try {
    const turns: Record<string, [string[], unknown]> = {};
    for (const [t, items] of await s.getConversationByTurns(branchId)) turns[String(t)] = [items.map((i) => i.type), undefined];
    const stored = (await s.getStoredItems(undefined, branchId)) as Record<string, unknown>[];
    let turn = 0;
    for (const item of stored) if (item.role === 'user') (turns[String(++turn)] as [string[], unknown])[1] = item.content;
    return { turns, usage: (await s.getTurnUsage(undefined, branchId)).map((u) => u.userTurnNumber) };
  } finally {
    s.close();
  }
}

async function branchIds(path: string): Promise<string[]> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, readonly: true });
  try {
    return (await s.listBranches()).map((b) => b.branchId).sort();
  } finally {
    s.close();
  }
}

describe('what-if runs', () => {
  let s: Scratch;
  let server: LoopbackOpenAI;
  let path: string;
  /** What `agentSessions.compareBranches` received, when this test had to stand in for it (it is the lead's). */
  const compared: unknown[] = [];
  let spy: vscode.Disposable | undefined;

  before(async () => {
    server = await startLoopbackOpenAI({
      script: (req) =>
        req.body.model === 'broken-model'
          ? { kind: 'error', status: 400, message: 'The model broken-model does not exist.' }
          : {
              kind: 'text',
              text: `${req.body.model} says: ${lastUserText(req.body)}`,
              chunks: [`${req.body.model} `, `says: ${lastUserText(req.body)}`],
            },
    });
    await api(); // activated: its commands are registered
    if (!(await vscode.commands.getCommands(true)).includes(COMPARE))
      spy = vscode.commands.registerCommand(COMPARE, (targets: unknown) => void compared.push(targets));
  });
  after(async () => {
    spy?.dispose();
    await server.close();
    await setAgent({ baseUrl: undefined, model: undefined, models: undefined, maxRetries: undefined });
    await vscode.commands.executeCommand('agentSessions.setApiKey', '');
  });
  beforeEach(async () => {
    s = scratch();
    await closeAll(await api());
    compared.length = 0;
    path = join(s.dir, 'trio.db');
    const w = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
    for (const q of QUESTIONS)
      await w.addItems([
        { role: 'user', content: q },
        { role: 'assistant', content: `Answer to ${q}` },
      ] as never);
    w.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await setAgent({ baseUrl: server.baseUrl, model: 'configured-model', models: ['model-b', 'model-c', 'broken-model'], maxRetries: 0 });
    await vscode.commands.executeCommand('agentSessions.setApiKey', KEY);
  });
  afterEach(async () => {
    await closeAll(await api());
    s.cleanup();
  });

  const turn = (n: number) => ({ kind: 'turn', dbPath: path, sessionId: SESSION, branchId: 'main', turn: n, branchTurnNumber: n });
  /** The models of the requests that asked `question`, in order. */
  const modelsAsked = (question: string, from: number) =>
    server.requests
      .slice(from)
      .filter((r) => lastUserText(r.body) === question)
      .map((r) => r.body.model);

  /** The comparison opened: through the real command (then nothing failed), or what the stand-in received. */
  async function assertCompared(result: WhatIfResult, expected: unknown[]): Promise<void> {
    assert.deepEqual(
      result.compareTargets?.map((t, i) => (i === 0 ? t : { ...t, runMs: typeof t.runMs })),
      expected.map((t, i) => (i === 0 ? t : { ...(t as object), runMs: 'number' })),
    );
    assert.equal(result.compared, true);
    if (spy) assert.deepEqual(compared, [result.compareTargets]);
    assert.deepEqual(
      (await api()).failures.map((f) => f.message),
      [],
    );
  }

  it('Retry from Here on turn 2: a new branch shares turn 1, sends turn 2 again on the picked model, stores its usage, opens the comparison', async () => {
    const from = server.requests.length;
    const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryFromHere', turn(2), 'model-b');
    assert.ok(result, 'the command returns the result');
    assert.deepEqual(
      result.runs.map((r) => [r.branchId, r.model, r.outcome.kind]),
      [['retry-model-b-1', 'model-b', 'run/completed']],
      JSON.stringify(result.runs),
    );
    const retry = await branch(path, 'retry-model-b-1');
    const main = await branch(path, 'main');
    assert.deepEqual(retry.turns['1'], main.turns['1'], 'turn 1 is shared');
    assert.deepEqual(retry.turns['2'], [['user', 'assistant'], QUESTIONS[1]], 'turn 2 is the same user message, answered again');
    assert.equal(Object.keys(retry.turns).length, 2);
    assert.deepEqual(retry.usage, [2], 'the retry stored its usage on its own turn');
    assert.deepEqual(modelsAsked(QUESTIONS[1] as string, from), ['model-b']);
    assert.deepEqual(main.turns['3']?.[1], QUESTIONS[2], 'main is untouched');
    await assertCompared(result, [
      { dbPath: path, sessionId: SESSION, branchId: 'main' },
      { dbPath: path, sessionId: SESSION, branchId: 'retry-model-b-1', label: 'model-b', model: 'model-b' },
    ]);
    // The name is used once: the same retry again gets the next number.
    const again = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryFromHere', turn(2), 'model-b');
    assert.equal(again.runs[0]?.branchId, 'retry-model-b-2');
  });

  it('Edit and Resend on turn 3: the edited message on a branch that shares turns 1 and 2', async () => {
    const from = server.requests.length;
    const result = await vscode.commands.executeCommand<WhatIfResult>(
      'agentSessions.editAndResend',
      turn(3),
      'Third question, asked differently',
      'configured-model',
    );
    assert.deepEqual(
      result.runs.map((r) => [r.branchId, r.outcome.kind]),
      [['edit-configured-model-1', 'run/completed']],
    );
    const edited = await branch(path, 'edit-configured-model-1');
    assert.deepEqual(Object.keys(edited.turns), ['1', '2', '3']);
    assert.deepEqual(edited.turns['3'], [['user', 'assistant'], 'Third question, asked differently']);
    assert.deepEqual(edited.usage, [3]);
    assert.deepEqual(modelsAsked('Third question, asked differently', from), ['configured-model']);
  });

  it('Retry with Several Models: one branch per model, run in parallel, each with its items, turns, usage and model', async () => {
    const from = server.requests.length;
    const models = ['configured-model', 'model-b', 'model-c'];
    const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryWithModels', turn(2), models);
    assert.deepEqual(
      result.runs.map((r) => [r.branchId, r.model, r.outcome.kind]),
      models.map((m) => [`retry-${m}-1`, m, 'run/completed']),
      JSON.stringify(result.runs),
    );
    for (const m of models) {
      const b = await branch(path, `retry-${m}-1`);
      assert.deepEqual(Object.keys(b.turns), ['1', '2'], m);
      assert.deepEqual(b.turns['2'], [['user', 'assistant'], QUESTIONS[1]], m);
      assert.deepEqual(b.usage, [2], m);
    }
    assert.deepEqual(modelsAsked(QUESTIONS[1] as string, from).sort(), [...models].sort(), 'each model was asked once');
    // Each branch holds the answer of its own model.
    const answers = await Promise.all(
      models.map(async (m) => {
        const r = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, readonly: true });
        try {
          return JSON.stringify((await r.getStoredItems(undefined, `retry-${m}-1`)).at(-1));
        } finally {
          r.close();
        }
      }),
    );
    models.forEach((m, i) => assert.match(answers[i] as string, new RegExp(`${m} says: ${QUESTIONS[1]}`)));
    await assertCompared(result, [
      { dbPath: path, sessionId: SESSION, branchId: 'main' },
      ...models.map((m) => ({ dbPath: path, sessionId: SESSION, branchId: `retry-${m}-1`, label: m, model: m })),
    ]);
  });

  it('a model that fails does not stop the others; the report names the branch, the model and why', async () => {
    const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryWithModels', turn(2), [
      'model-b',
      'broken-model',
      'model-c',
    ]);
    assert.deepEqual(
      result.runs.map((r) => [r.branchId, r.outcome.kind]),
      [
        ['retry-model-b-1', 'run/completed'],
        ['retry-broken-model-1', 'run/failed'],
        ['retry-model-c-1', 'run/completed'],
      ],
    );
    const failed = result.runs[1]?.outcome;
    assert.equal(failed?.kind === 'run/failed' && failed.failure, 'http');
    assert.match(result.report ?? '', /1 of 3 runs failed/);
    assert.match(result.report ?? '', /retry-broken-model-1 \(broken-model\): .*400/);
    assert.deepEqual(await branchIds(path), ['main', 'retry-model-b-1', 'retry-model-c-1'], 'the failed retry leaves no branch behind');
    assert.deepEqual((await branch(path, 'retry-model-c-1')).usage, [2]);
    await assertCompared(result, [
      { dbPath: path, sessionId: SESSION, branchId: 'main' },
      { dbPath: path, sessionId: SESSION, branchId: 'retry-model-b-1', label: 'model-b', model: 'model-b' },
      { dbPath: path, sessionId: SESSION, branchId: 'retry-model-c-1', label: 'model-c', model: 'model-c' },
    ]);
  });

  it('Retry from Here without a key is refused before the view opens: no branch, no panel, a Set API Key remedy', async () => {
    const a = await api();
    await vscode.commands.executeCommand('agentSessions.setApiKey', '');
    await setAgent({ baseUrl: 'https://models.example.invalid/v1' });
    const from = server.requests.length;
    assert.equal(await vscode.commands.executeCommand('agentSessions.retryFromHere', turn(2), 'model-b'), undefined);
    const failure = a.failures.at(-1);
    assert.match(failure?.message ?? '', /No API key is set/);
    assert.deepEqual((failure?.error as { remedy?: unknown } | undefined)?.remedy, {
      title: 'Set API Key',
      command: 'agentSessions.setApiKey',
    });
    assert.equal(a.panels.get(path, SESSION), undefined, 'no conversation view opened for a run that could not start');
    assert.deepEqual(await branchIds(path), ['main'], 'no branch was made');
    assert.equal(server.requests.length, from, 'no request was sent');
    // The same from an open view: the view stays on its branch, and the name is not used up.
    const panel = a.panels.open({ dbPath: path, sessionId: SESSION, branchId: 'main' });
    await a.panels.whenReady(panel);
    await assert.rejects(
      panel.startWhatIf(
        { dbPath: path, sessionId: SESSION, branchId: 'main', turn: 2, branchTurnNumber: 2 },
        { kind: 'retry', models: ['model-b'] },
        () => assert.fail('a what-if that cannot start opens no comparison'),
      ),
      /No API key is set/,
    );
    assert.deepEqual(await branchIds(path), ['main']);
    await vscode.commands.executeCommand('agentSessions.setApiKey', KEY);
    await setAgent({ baseUrl: server.baseUrl });
    const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryFromHere', turn(2), 'model-b');
    assert.equal(result.runs[0]?.branchId, 'retry-model-b-1', 'the first retry with a key gets the first name');
  });

  it('refuses more than 4 models, and a read-only database, before anything is written', async () => {
    const a = await api();
    const five = ['configured-model', 'model-b', 'model-c', 'broken-model', 'model-e'];
    assert.equal(await vscode.commands.executeCommand('agentSessions.retryWithModels', turn(2), five), undefined);
    assert.match(a.failures.at(-1)?.message ?? '', /at most 4 models/);
    await vscode.commands.executeCommand('agentSessions.toggleReadOnly', { kind: 'database', dbPath: path });
    assert.equal(await vscode.commands.executeCommand('agentSessions.retryFromHere', turn(2), 'model-b'), undefined);
    assert.match(a.failures.at(-1)?.message ?? '', /read-only/);
    assert.deepEqual(await branchIds(path), ['main']);
  });
});
