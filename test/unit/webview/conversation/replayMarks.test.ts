/**
 * The conversation model's replay marks: the selected turn's calls get the marks of the branch that ran the turn (a
 * shared turn's are its parent's), read again on a `replay` notice, and a marks store that cannot be read leaves the
 * cards unmarked instead of failing the view. The host is written here: branch `retry` forks `main` after turn 1, so
 * its turn 1 is shared from `main` and its turn 2 is its own.
 */
import { strict as assert } from 'node:assert';
import type { RequestMethod } from '../../../../src/shared/protocol/conversation';
import type { SessionView, TurnView } from '../../../../src/shared/protocol/conversationViews';
import type { ReplayMarksView, StoredReplayMark } from '../../../../src/shared/protocol/replay';
import { ConversationModel, type RequestFn, type ViewPart } from '../../../../webview/conversation/logic/conversationModel';

const mark = (callId: string, outcome: StoredReplayMark['outcome']): StoredReplayMark => ({
  callId,
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  outcome,
  recordedCallId: outcome === 'replayed' ? 'call_rec' : null,
  runId: 'r1',
  recordedBranchId: outcome === 'replayed' ? 'main' : null,
  recordedTurn: outcome === 'replayed' ? 1 : null,
});

class MarksHost {
  marks: Record<string, ReplayMarksView> = {
    main: { marks: [mark('call_main', 'live')], runs: [] },
    retry: { marks: [mark('call_new', 'replayed')], runs: [] },
  };
  failMarks = false;
  readonly asked: string[] = [];

  private turn(n: number, sharedFrom?: string): TurnView {
    return {
      turn: n,
      branchTurnNumber: n,
      preview: `q${n}`,
      error: null,
      createdAt: null,
      totalTokens: null,
      itemCount: 1,
      tools: [],
      ...(sharedFrom ? { sharedFrom } : {}),
    };
  }

  readonly request = (async (method: RequestMethod, params: unknown): Promise<unknown> => {
    const p = params as { branchId: string };
    switch (method) {
      case 'view/ready':
        return { branchId: 'retry', turn: 2 };
      case 'session/get': {
        const view: SessionView = {
          dbPath: '/t.db',
          dbName: 't.db',
          sessionId: 's',
          readonly: false,
          branches: [
            { branchId: 'main', parentBranchId: null, forkTurn: null, userTurns: 1, messageCount: 2, createdAt: null, isCurrent: true },
            { branchId: 'retry', parentBranchId: 'main', forkTurn: 2, userTurns: 2, messageCount: 4, createdAt: null, isCurrent: false },
          ],
          usedBranchIds: [],
          currentBranchId: 'main',
          problem: null,
        };
        return view;
      }
      case 'turns/get':
        return {
          branchId: p.branchId,
          turns: p.branchId === 'retry' ? [this.turn(1, 'main'), this.turn(2)] : [this.turn(1)],
          nextAfterTurn: null,
          previousBeforeTurn: null,
        };
      case 'turn/items':
        return [];
      case 'reviews/get':
        return { branchId: p.branchId, turns: [], orphaned: [], corrections: [], orphanedCorrections: 0, tags: [] };
      case 'branch/latency':
        return { branchId: p.branchId, turns: [], turnCount: 0, partial: false, p50Ms: null, p95Ms: null };
      case 'replay/marks':
        this.asked.push(p.branchId);
        if (this.failMarks) throw new Error('the replay marks store is locked');
        return this.marks[p.branchId] ?? { marks: [], runs: [] };
      default:
        throw new Error(`not in these tests: ${method}`);
    }
  }) as RequestFn;
}

describe('conversation model: replay marks', () => {
  async function started(): Promise<{ host: MarksHost; model: ConversationModel; parts: ViewPart[] }> {
    const host = new MarksHost();
    const parts: ViewPart[] = [];
    const model = new ConversationModel(host.request, (p) => parts.push(p));
    await model.start(null);
    return { host, model, parts };
  }

  it("badges the selected turn's calls with the marks of the branch that ran it", async () => {
    const { host, model, parts } = await started();
    assert.equal(model.selectedTurn?.turn, 2);
    assert.deepEqual(host.asked, ['retry']);
    assert.ok(parts.includes('replay'));
    assert.deepEqual(model.replay?.badges.get('call_new')?.recorded, { callId: 'call_rec', branchId: 'main', turn: 1 });

    // Turn 1 of the fork was run by main: its calls carry main's marks.
    await model.selectTurn(1);
    assert.deepEqual(host.asked, ['retry', 'main']);
    assert.equal(model.replay?.branchId, 'main');
    assert.equal(model.replay?.badges.get('call_main')?.outcome, 'live');
    assert.equal(model.replay?.badges.has('call_new'), false);

    // Back to a turn of the same branch as the marks read: nothing asked again.
    await model.selectTurn(2);
    await model.selectTurn(2);
    assert.deepEqual(host.asked, ['retry', 'main', 'retry']);
  });

  it('reads the marks again on a replay notice, and leaves the cards unmarked when the store cannot be read', async () => {
    const { host, model } = await started();
    host.marks.retry = { marks: [mark('call_new', 'replayed'), mark('call_other', 'unmatched')], runs: [] };
    await model.noticeReceived({ seq: 1, what: ['replay'] });
    assert.deepEqual(host.asked, ['retry', 'retry']);
    assert.equal(model.replay?.badges.get('call_other')?.outcome, 'unmatched');

    host.failMarks = true;
    await model.noticeReceived({ seq: 2, what: ['replay'] });
    assert.equal(model.replay?.badges.size, 0);
    assert.equal(model.error, undefined, 'no banner: the turn still shows');
  });
});
