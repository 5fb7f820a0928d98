/**
 * Agent commands written in Python: test/fixtures/agent-commands/python_turn.py (standard library only) writes its
 * turn and usage row exactly as the Python SDK does and streams AG-UI events; here it runs as a real child process
 * through the run module, for a what-if on two models, a fork it makes itself, and each way a command can go wrong.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { eventLog, readBranch, seedSession } from '../agentTestKit';
import { PYTHON_TURN, completed, failed, snapshot } from './commandKit';

const PYTHON = 'python3';
const hasPython = spawnSync(PYTHON, ['--version']).status === 0;

describe('agent commands in Python (python_turn.py, real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;

  before(function () {
    if (!hasPython) {
      console.log('    (skipped: python3 is not installed on this machine, so no Python command can run)');
      this.skip();
    }
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-pycommand-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [
      ['What is the weather in Paris?', 'Mild.'],
      ['And tomorrow?', 'Rain.'],
    ]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(mode: string, options: Partial<CommandRunOptions> = {}) {
    const log = eventLog();
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      agent: { kind: 'command', name: 'support-bot', command: `${PYTHON} "${PYTHON_TURN}"` },
      input: 'And the day after?',
      env: { PATH: process.env.PATH ?? '', AGENT_FIXTURE_MODE: mode },
      graceMs: 300,
      onEvent: log.onEvent,
      ...options,
    });
    return { log, outcome };
  }

  it('Retry with Several Models: two commands at once, each on its branch with the model it was given', async () => {
    const a = run('ok', { fork: { fromTurn: 2, name: 'retry-gpt-4.1-1' }, model: 'gpt-4.1' });
    const b = run('ok', { fork: { fromTurn: 2, name: 'retry-gpt-4.1-mini-1' }, model: 'gpt-4.1-mini' });
    const [oa, ob] = [completed(await a.outcome), completed(await b.outcome)];
    assert.equal(a.log.text(), 'Answer from gpt-4.1: And the day after?');
    assert.equal(b.log.text(), 'Answer from gpt-4.1-mini: And the day after?');
    for (const [branch, outcome, model] of [
      ['retry-gpt-4.1-1', oa, 'gpt-4.1'],
      ['retry-gpt-4.1-mini-1', ob, 'gpt-4.1-mini'],
    ] as const) {
      const state = await readBranch(dbPath, branch);
      assert.deepEqual(state.turns, [1, 2]);
      assert.deepEqual(
        state.byTurns.get(2)?.map((i) => i.type),
        ['user', 'assistant'],
      );
      const answer = state.items[state.items.length - 1] as { content: { text: string }[] };
      assert.equal(answer.content[0]?.text, `Answer from ${model}: And the day after?`);
      // The usage row the script stored (as store_run_usage does) is the run's usage.
      assert.deepEqual(
        state.usage.map((u) => [u.userTurnNumber, u.requests, u.inputTokens, u.outputTokens, u.totalTokens]),
        [[2, 1, 21, 7, 28]],
      );
      assert.deepEqual(outcome.usage && [outcome.usage.totalTokens, outcome.usage.cachedTokens, outcome.usage.reasoningTokens], [28, 5, 2]);
      assert.equal(outcome.written.usageStored, true);
      assert.equal(outcome.finalOutput, `Answer from ${model}: And the day after?`);
    }
    assert.deepEqual((await readBranch(dbPath, 'main')).turns, [1, 2]);
  });

  it('a fork at turn 1 is made by the command (nothing to copy, nothing to switch to)', async () => {
    const { log, outcome } = run('ok', { fork: { fromTurn: 1, name: 'first-retry' } });
    const done = completed(await outcome);
    const started = log.events[0];
    assert.deepEqual(started?.kind === 'run/started' && [started.branchId, started.forkedFrom], [
      'first-retry',
      { branchId: 'main', turn: 1 },
    ]);
    const fork = await readBranch(dbPath, 'first-retry');
    assert.deepEqual(fork.turns, [1]);
    assert.equal(done.written.turn, 1);
    assert.equal(log.text(), 'Answer from default: And the day after?');
  });

  it('a command that prints nothing still works: the run ends with its exit code and the turn is settled', async () => {
    const { log, outcome } = run('silent');
    const done = completed(await outcome);
    assert.deepEqual(
      log.events.map((e) => e.kind),
      ['run/started', 'run/completed'],
    );
    assert.equal(done.written.turn, 3);
    assert.match(done.written.summary, /^Saved turn 3 on branch 'main': 2 item\(s\) and its usage\./);
  });

  it('writing to another branch fails the run, names where it wrote, leaves those rows, and deletes the unused fork', async () => {
    const { outcome } = run('other-branch', { fork: { fromTurn: 2, name: 'given' } });
    const o = failed(await outcome);
    assert.match(
      o.message,
      /^The agent command 'support-bot' wrote 2 item\(s\) to branch 'elsewhere' of session 's1', not to branch 'given' of session 's1' it was given; they were left there\./,
    );
    assert.deepEqual((await readBranch(dbPath, 'elsewhere')).turns, [1]);
    assert.equal(o.written.summary, "Nothing was written. The new branch 'given' made for this run was deleted again.");
    const branches = Object.keys((await snapshot(dbPath)) as object);
    assert.deepEqual(branches, ['elsewhere', 'main']);
  });

  it('an error after the user message was written, with no usage: the message is removed, the branch as it was', async () => {
    const before = await snapshot(dbPath);
    const o = failed(await run('error-after-write').outcome);
    assert.match(o.message, /^The agent command 'support-bot' reported an error: model unavailable/);
    assert.match(o.written.summary, /Nothing is stored: the SDK had saved your message before calling the model, and it was removed/);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('exits at once: the message, the stderr tail, and nothing written', async () => {
    const before = await snapshot(dbPath);
    const o = failed(await run('exit-at-once').outcome);
    assert.equal(
      o.message,
      "The agent command 'support-bot' exited with code 3 before sending any event.\nstderr (last lines):\nboom: no config",
    );
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('Stop on a command that ignores SIGINT: SIGTERM follows after the grace period, and the run is stopped', async () => {
    const controller = new AbortController();
    const { log, outcome } = run('ignore-sigint', { signal: controller.signal });
    // The script's text says its SIGINT handler is in place (`run/started` is ours, before the script has even
    // started: Python was still importing its modules 500 ms later on a starved machine, and SIGINT ended it there).
    while (!log.events.some((e) => e.kind === 'text/delta')) await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    controller.abort();
    const o = failed(await outcome);
    assert.equal(o.failure, 'cancelled');
    assert.match(o.message, /^The run was stopped\./);
    assert.match(o.message, /ignoring SIGINT/);
    assert.ok(Date.now() - t0 >= 250, 'SIGTERM came only after the grace period');
  });
});
