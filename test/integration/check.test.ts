/**
 * *Check Agent Against Reviews…* in the real extension host (docs/check.md, "In VS Code"): a session file with
 * reviewed turns (in the extension's review store), the check run through the real command with a real agent command
 * (test/fixtures/agent-commands/python_turn.py, standard library only, answering "Answer from default: <message>"),
 * graded by the real graders; the failures filter, Re-run Failed Cases, an experiment saved and compared, a query
 * with a text filter (the search worker), and Open as Comparison, the one step that writes: a kept branch. Until
 * then the session file is byte-identical.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession } from '../../src/store';
import { contentKey } from '../../src/store/reviews/contentKey';
import type { CheckSummary } from '../../src/extension/check/checkCommands';
import { api, closeAll, fixtures, scratch, type Scratch } from './helpers';

const SESSION = 'check-qa';
const hasPython = spawnSync('python3', ['--version']).status === 0;
const AGENT = 'command:py-check';
const OPTIONS = { query: '', agent: AGENT, graders: ['trajectory', 'answer:normalized'], tools: 'replay' };

/** The file's bytes and modification time: what "the check wrote nothing" means. */
function fingerprint(path: string): string {
  return `${createHash('sha256').update(readFileSync(path)).digest('hex')} ${statSync(path).mtimeMs}`;
}

describe('Check Agent Against Reviews (the check engine through the command, in the host)', function () {
  this.timeout(120_000);
  let s: Scratch;
  let path: string;

  before(async function () {
    if (!hasPython) {
      console.log('    (skipped: python3 is not installed in this host, so the Python agent command cannot run)');
      this.skip();
    }
    s = scratch();
    await closeAll(await api());
    path = join(s.dir, 'checked.db');
    // Turn 1 was answered as the agent answers now; turn 2's recorded answer is another (its review says good, so the
    // agent now fails it); turn 3 was bad, and its correction is what the agent now says (its case expects no calls:
    // trajectory gives it no result, and it passes on not-rejected and answer:normalized).
    const w = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
    await w.addItems([
      { role: 'user', content: 'First question' },
      { role: 'assistant', content: 'Answer from default: First question' },
    ] as never);
    await w.addItems([
      { role: 'user', content: 'Second question' },
      { role: 'assistant', content: 'Something else entirely' },
    ] as never);
    await w.addItems([
      { role: 'user', content: 'Third question' },
      { role: 'assistant', content: 'wrong' },
    ] as never);
    const answer3 = (await w.getTurnStoredItems(3)).find((i) => (i as { role?: string }).role === 'assistant');
    w.close();
    await vscode.workspace
      .getConfiguration('agentSessions.agent')
      .update(
        'command',
        { 'py-check': `python3 "${join(fixtures, 'agent-commands', 'python_turn.py')}"` },
        vscode.ConfigurationTarget.Global,
      );
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    const store = await (await api()).reviews.storeFor(path, false);
    const ref = (turn: number, text: string) => ({
      sessionId: SESSION,
      branchId: 'main',
      turn,
      turnKey: contentKey({ role: 'user', content: text }),
    });
    await store.call('setTurnReview', ref(1, 'First question'), { verdict: 'good' });
    await store.call('setTurnReview', ref(2, 'Second question'), { verdict: 'good' });
    await store.call('setTurnReview', ref(3, 'Third question'), { verdict: 'bad' });
    await store.call('setCorrection', {
      ...ref(3, 'Third question'),
      itemKey: contentKey(answer3),
      text: 'Answer from default: Third question',
    });
  });

  after(async () => {
    if (!hasPython) return;
    const store = await (await api()).reviews.storeFor(path, false);
    for (const [turn, text] of [
      [1, 'First question'],
      [2, 'Second question'],
      [3, 'Third question'],
    ] as const)
      await store.call(
        'setTurnReview',
        { sessionId: SESSION, branchId: 'main', turn, turnKey: contentKey({ role: 'user', content: text }) },
        { verdict: null },
      );
    await vscode.workspace.getConfiguration('agentSessions.agent').update('command', undefined, vscode.ConfigurationTarget.Global);
    await closeAll(await api());
    s.cleanup();
  });

  it('checks every good turn and the corrected bad one: 2 passed, 1 failed with the grader reason; the file untouched', async () => {
    const before = fingerprint(path);
    const result = await vscode.commands.executeCommand<CheckSummary>(
      'agentSessions.checkAgent',
      { kind: 'database', dbPath: path },
      OPTIONS,
    );
    assert.ok(result, 'the command resolved with the check');
    assert.deepEqual(
      result.cases.map((c) => [c.id, c.status]),
      [
        [`${SESSION}/main/1`, 'pass'],
        [`${SESSION}/main/2`, 'fail'],
        [`${SESSION}/main/3`, 'pass'],
      ],
      JSON.stringify(result.cases),
    );
    assert.deepEqual([result.totals.passed, result.totals.failed, result.totals.errors, result.totals.pending], [2, 1, 0, 0]);
    const reasons = result.cases[1]!.reasons.join('\n');
    assert.match(reasons, /^answer:normalized: /);
    assert.match(reasons, /something else entirely/i);
    assert.equal(fingerprint(path), before, 'the session file is byte-identical, its modification time unchanged');

    // The filter lists the failure only; Show All Cases brings the rest back.
    const failuresOnly = await vscode.commands.executeCommand<CheckSummary>('agentSessions.showCheckFailuresOnly');
    assert.deepEqual(failuresOnly.shown, [`${SESSION}/main/2`]);
    assert.equal((await vscode.commands.executeCommand<CheckSummary>('agentSessions.showAllCheckCases')).shown.length, 3);

    // Re-run Failed Cases runs the failed case again; the passes stay.
    const rerun = await vscode.commands.executeCommand<CheckSummary>('agentSessions.rerunFailedCases');
    assert.deepEqual([rerun.totals.passed, rerun.totals.failed, rerun.totals.cases], [2, 1, 3]);
    assert.equal(fingerprint(path), before, 'still byte-identical after the re-run');

    // Saved and compared with itself: no flip, three unchanged.
    const saved = await vscode.commands.executeCommand<CheckSummary & { saved: string; path: string }>(
      'agentSessions.saveCheckExperiment',
      `v1-${Date.now()}`,
      true,
    );
    assert.ok(saved.path.endsWith('.experiments.db'), saved.path);
    assert.ok(!saved.path.startsWith(s.dir), 'the experiment store is not beside the session file by default');
    const compared = await vscode.commands.executeCommand<CheckSummary>('agentSessions.compareCheckWithExperiment', saved.saved);
    assert.deepEqual(compared.flips, []);
    assert.equal(fingerprint(path), before, 'experiments never touch the session file');
  });

  it('narrows the cases with a query in the search syntax (its text filter runs in the search worker)', async () => {
    const result = await vscode.commands.executeCommand<CheckSummary>(
      'agentSessions.checkAgent',
      { kind: 'session', dbPath: path, sessionId: SESSION },
      { ...OPTIONS, query: 'is:good second' },
    );
    assert.deepEqual(
      result.cases.map((c) => [c.id, c.status]),
      [[`${SESSION}/main/2`, 'fail']],
    );
  });

  it('Open as Comparison runs the case again onto a kept branch (check-1) and opens the comparison', async () => {
    await vscode.commands.executeCommand<CheckSummary>('agentSessions.checkAgent', { kind: 'database', dbPath: path }, OPTIONS);
    const opened = await vscode.commands.executeCommand<CheckSummary>('agentSessions.openCheckCaseAsComparison', `${SESSION}/main/2`, true);
    const kept = opened.cases.find((c) => c.id === `${SESSION}/main/2`);
    assert.equal(kept?.keptBranch, 'check-1', JSON.stringify(opened.cases));
    const r = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, readonly: true });
    try {
      const items = (await r.getStoredItems(undefined, 'check-1')) as { content?: unknown }[];
      const last = items.at(-1)?.content;
      assert.equal(Array.isArray(last) ? (last[0] as { text?: string }).text : last, 'Answer from default: Second question');
    } finally {
      r.close();
    }
  });
});
