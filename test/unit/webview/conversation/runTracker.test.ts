/**
 * Run tracking in the conversation view: which runs are running, which fork the view moves to when a retry starts,
 * and what it does when a run ends. First the tracker's decisions alone, then the model carrying them out against a
 * small in-memory host (a branch → turn count map), so a fork that appears is really shown and a written turn selected.
 */
import { strict as assert } from 'node:assert';
import type { RequestMethod } from '../../../../src/shared/protocol/conversation';
import type { BranchView, SessionView, TurnView } from '../../../../src/shared/protocol/conversationViews';
import { failedBeforeWriting, type RunEvent, type RunStartedEvent } from '../../../../src/shared/protocol/runEvents';
import { ConversationModel, type RequestFn } from '../../../../webview/conversation/logic/conversationModel';
import { RunTracker } from '../../../../webview/conversation/logic/runTracker';

function started(runId: string, branchId: string, forkedFrom?: RunStartedEvent['forkedFrom']): RunEvent {
  return {
    kind: 'run/started',
    runId,
    sessionId: 's',
    branchId,
    input: 'again',
    agentName: 'Agent',
    warnings: [],
    ...(forkedFrom ? { forkedFrom } : {}),
  };
}

function completed(runId: string): RunEvent {
  const usage = { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0 };
  const written = { summary: 'stored', kept: [], removed: [], notSaved: [], turn: 1, usageStored: true };
  return { kind: 'run/completed', runId, finalOutput: 'done', usage, written };
}

const failed = (runId: string): RunEvent => failedBeforeWriting(runId, 'http', 'HTTP 500', 'Nothing was written.', 500);
const delta = (runId: string): RunEvent => ({ kind: 'text/delta', runId, delta: 'he' });

describe('run tracker', () => {
  it('tracks a run on the shown branch from start to end without moving the view', () => {
    const runs = new RunTracker();
    assert.deepEqual(runs.next(started('r1', 'main'), 'main'), { kind: 'none' });
    assert.deepEqual([...runs.running], ['r1']);
    assert.deepEqual(runs.next(delta('r1'), 'main'), { kind: 'none' }, 'an event in the middle of a run changes nothing');
    assert.deepEqual(runs.next(completed('r1'), 'main'), { kind: 'ended', showFork: undefined });
    assert.deepEqual([...runs.running], []);
  });

  it('shows the first fork of a retry, not the others started beside it', () => {
    const runs = new RunTracker();
    const from = { branchId: 'main', turn: 2 };
    assert.deepEqual(runs.next(started('a', 'retry-a', from), 'main'), { kind: 'show', branchId: 'retry-a' });
    assert.deepEqual(runs.shownFork, { runId: 'a', branchId: 'retry-a', from: 'main', turn: undefined });
    assert.deepEqual(runs.next(started('b', 'retry-b', from), 'retry-a'), { kind: 'none' }, 'the second fork stays in the branch map');
    assert.deepEqual([...runs.running], ['a', 'b']);

    // The shown fork ends while the view shows it: read its turns again, nothing to move to.
    assert.deepEqual(runs.next(completed('a'), 'retry-a'), { kind: 'ended', showFork: undefined });
    assert.equal(runs.shownFork, undefined);
    // Another fork is still running: a fork started now is not shown either.
    assert.deepEqual(runs.next(started('c', 'retry-c', from), 'retry-a'), { kind: 'none' });
    runs.next(failed('b'), 'retry-a');
    runs.next(completed('c'), 'retry-a');
    // No fork runs any more: the next retry's fork is shown again.
    assert.deepEqual(runs.next(started('d', 'retry-d', from), 'retry-a'), { kind: 'show', branchId: 'retry-d' });
  });

  it('shows a fork from turn 1 when its run completes and the view fell back to where it came from', () => {
    const runs = new RunTracker();
    runs.next(started('a', 'retry', { branchId: 'main', turn: 1 }), 'main');
    assert.deepEqual(runs.next(completed('a'), 'main'), { kind: 'ended', showFork: 'retry' });
  });

  it('shows a fork from turn 1 whose agent paused the run, waiting for input: its turn is kept', () => {
    const runs = new RunTracker();
    runs.next(started('a', 'retry', { branchId: 'main', turn: 1 }), 'main', 1);
    const paused: RunEvent = {
      ...failedBeforeWriting('a', 'paused', 'The agent paused the run.', "Kept your message as turn 1 on branch 'retry'."),
      interrupts: [{ text: 'Send the email?', toolCallId: 'call_send' }],
      written: { summary: 'kept', kept: ['user: "again"'], removed: [], notSaved: [], turn: 1, usageStored: false },
    };
    assert.deepEqual(runs.next(paused, 'main'), { kind: 'ended', showFork: 'retry' });
  });

  it('does not move to a fork whose run failed, or when the user went elsewhere', () => {
    const runs = new RunTracker();
    runs.next(started('a', 'retry', { branchId: 'main', turn: 1 }), 'main', 1);
    assert.deepEqual(
      runs.next(failed('a'), 'main'),
      { kind: 'ended', showFork: undefined, keepSelection: true, back: { branchId: 'main', turn: 1 } },
      'a failed fork wrote nothing: back to where it was started',
    );
    runs.next(started('b', 'retry-2', { branchId: 'main', turn: 1 }), 'main');
    assert.deepEqual(runs.next(completed('b'), 'other'), { kind: 'ended', showFork: undefined }, 'the user moved to another branch');
  });

  it('a failed fork returns to the branch and turn it was started from; a user who went elsewhere stays', () => {
    const runs = new RunTracker();
    runs.next(started('a', 'retry-x-1', { branchId: 'main', turn: 2 }), 'main', 2);
    assert.deepEqual(runs.next(failed('a'), 'retry-x-1'), {
      kind: 'ended',
      showFork: undefined,
      keepSelection: true,
      back: { branchId: 'main', turn: 2 },
    });
    runs.next(started('b', 'retry-x-2', { branchId: 'main', turn: 2 }), 'main', 2);
    assert.deepEqual(runs.next(failed('b'), 'other'), { kind: 'ended', showFork: undefined, keepSelection: true });
    assert.deepEqual(runs.next(failed('never-started'), 'main'), { kind: 'ended', showFork: undefined, keepSelection: true });
  });

  it('reads the turns again when a run it never saw start ends (a stale run from before the page was recreated)', () => {
    const runs = new RunTracker();
    runs.next(started('new', 'main'), 'main');
    assert.deepEqual(runs.next(completed('old'), 'main'), { kind: 'ended', showFork: undefined });
    assert.deepEqual([...runs.running], ['new'], 'the running run is still tracked');
    assert.deepEqual(runs.next(delta('old'), 'main'), { kind: 'none' });
    assert.deepEqual([...runs.running], ['new'], 'a late event of an ended run does not bring it back');
  });
});

/** The host as the model sees it: branches with their turn counts, turns numbered from 1; runs only recorded. */
class RunHost {
  /** The branches the session's branch list shows (a fork from turn 1 has no rows, so it is listed once it has). */
  branches: Record<string, number> = { main: 3 };
  readonly requests: [RequestMethod, unknown][] = [];

  private branchView(branchId: string, userTurns: number): BranchView {
    const fork = branchId !== 'main';
    return {
      branchId,
      parentBranchId: fork ? 'main' : null,
      forkTurn: fork ? 1 : null,
      userTurns,
      messageCount: userTurns,
      createdAt: null,
      isCurrent: !fork,
    };
  }

  private turn(n: number): TurnView {
    return {
      turn: n,
      branchTurnNumber: n,
      preview: `question ${n}`,
      error: null,
      createdAt: null,
      totalTokens: null,
      itemCount: 1,
      tools: [],
    };
  }

  readonly request = (async (method: RequestMethod, params: unknown): Promise<unknown> => {
    this.requests.push([method, params]);
    switch (method) {
      case 'view/ready':
        return null;
      case 'session/get': {
        const branches = Object.entries(this.branches).map(([id, n]) => this.branchView(id, n));
        const view: SessionView = {
          dbPath: '/t.db',
          dbName: 't.db',
          sessionId: 's',
          readonly: false,
          branches,
          usedBranchIds: [],
          currentBranchId: 'main',
          problem: null,
        };
        return view;
      }
      case 'turns/get': {
        const p = params as { branchId: string; afterTurn: number | null };
        const after = p.afterTurn ?? 0;
        const count = this.branches[p.branchId] ?? 0;
        const turns = Array.from({ length: Math.max(0, count - after) }, (_, i) => this.turn(after + i + 1));
        return { branchId: p.branchId, turns, nextAfterTurn: null, previousBeforeTurn: null };
      }
      case 'turn/items':
        return [];
      case 'reviews/get':
        return {
          branchId: (params as { branchId: string }).branchId,
          turns: [],
          orphaned: [],
          corrections: [],
          orphanedCorrections: 0,
          tags: [],
        };
      case 'branch/latency':
        return { branchId: (params as { branchId: string }).branchId, turns: [], turnCount: 0, partial: false, p50Ms: null, p95Ms: null };
      case 'replay/marks':
        return { marks: [], runs: [] };
      case 'run/start':
        return { runId: 'composer' };
      case 'run/stop':
        return { stopped: true };
      default:
        throw new Error(`not in these tests: ${method}`);
    }
  }) as RequestFn;

  /** The requests since the last call, each as its method and the branch or run it names. */
  take(): string[] {
    return this.requests.splice(0).map(([method, params]) => {
      const p = params as { branchId?: string; runId?: string };
      return [method, p.branchId ?? p.runId].filter((s) => s !== undefined).join(' ');
    });
  }
}

describe('conversation model: runs', () => {
  async function startedModel(): Promise<{ host: RunHost; model: ConversationModel }> {
    const host = new RunHost();
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    host.take();
    return { host, model };
  }

  it('selects the turn a run wrote once it completes', async () => {
    const { host, model } = await startedModel();
    assert.equal(model.selectedTurn?.turn, 1);
    await model.runEvent(started('r1', 'main'));
    assert.deepEqual(host.take(), [], 'a run starting on the shown branch reads nothing');
    host.branches.main = 4;
    await model.runEvent(completed('r1'));
    assert.deepEqual(host.take(), ['turns/get main', 'branch/latency main', 'reviews/get main', 'turn/items main']);
    assert.equal(model.selectedTurn?.turn, 4, 'the new last turn is selected');
  });

  it('reads the turns again after a failed run too, keeping the selection when it wrote no turn', async () => {
    const { host, model } = await startedModel();
    await model.selectTurn(2);
    host.take();
    await model.runEvent(started('r1', 'main'));
    await model.runEvent(failed('r1'));
    assert.deepEqual(host.take(), ['turns/get main', 'branch/latency main', 'reviews/get main', 'turn/items main']);
    assert.equal(model.selectedTurn?.turn, 2, 'the selection stays where the user put it');
  });

  it('returns from a failed retry’s fork to the turn it was started from', async () => {
    const { host, model } = await startedModel();
    await model.selectTurn(2);
    host.branches['retry-x-1'] = 1;
    await model.runEvent(started('a', 'retry-x-1', { branchId: 'main', turn: 2 }));
    assert.equal(model.branchId, 'retry-x-1');
    // The run fails and its fork is deleted again.
    delete host.branches['retry-x-1'];
    await model.runEvent(failed('a'));
    assert.deepEqual([model.branchId, model.selectedTurn?.turn], ['main', 2]);
  });

  it('moves to a retry’s fork when it starts and stays there when it ends', async () => {
    const { host, model } = await startedModel();
    host.branches.retry = 2;
    await model.runEvent(started('a', 'retry', { branchId: 'main', turn: 2 }));
    assert.equal(model.branchId, 'retry');
    assert.deepEqual(host.take(), [
      'turns/get retry',
      'branch/latency retry',
      'reviews/get retry',
      'replay/marks retry',
      'turn/items retry',
    ]);
    await model.runEvent(started('b', 'retry-2', { branchId: 'main', turn: 2 }));
    assert.equal(model.branchId, 'retry', 'a second fork does not take the view away');
    assert.deepEqual(host.take(), []);
    host.branches.retry = 3;
    await model.runEvent(completed('a'));
    assert.equal(model.branchId, 'retry');
    assert.equal(model.selectedTurn?.turn, 3);
  });

  it('shows a fork from turn 1 once its run completes, after the view fell back to where it came from', async () => {
    const { host, model } = await startedModel();
    await model.runEvent(started('a', 'retry', { branchId: 'main', turn: 1 }));
    assert.equal(model.branchId, 'retry');
    // The branch list does not have the fork yet (no rows): the view falls back to the current branch.
    await model.noticeReceived({ seq: 1, what: ['branches'] });
    assert.equal(model.branchId, 'main');
    host.branches.retry = 1;
    host.take();
    await model.runEvent(completed('a'));
    assert.equal(model.branchId, 'retry');
    assert.equal(model.selectedTurn?.turn, 1);
    assert.deepEqual(host.take(), [
      'turns/get retry',
      'branch/latency retry',
      'reviews/get retry',
      'replay/marks retry',
      'turn/items retry',
      'turns/get retry',
      'branch/latency retry',
      'reviews/get retry',
      'turn/items retry',
    ]);
  });

  it('stops the composer’s run and every run still running, not those that ended', async () => {
    const { host, model } = await startedModel();
    await model.startRun('hello');
    await model.runEvent(started('composer', 'main'));
    await model.runEvent(started('a', 'retry-a', { branchId: 'main', turn: 2 }));
    await model.runEvent(started('b', 'retry-b', { branchId: 'main', turn: 2 }));
    await model.runEvent(failed('a'));
    host.take();
    await model.stopRuns();
    // The composer's run is asked to stop twice (as the composer's, then as a running one), as before the run state
    // moved into the model; the host's second answer is `stopped: false`.
    assert.deepEqual(host.take(), ['run/stop composer', 'run/stop composer', 'run/stop b']);
  });
});
