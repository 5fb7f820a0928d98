/**
 * Differential tests of the SDK's ownership-aware automatic compaction (issue 29, item 2) on our branch view.
 *
 * `@openai/agents` 0.18 gave `OpenAIResponsesCompactionSession` the `OpenAIResponsesCompactionOwnershipAwareSession`
 * capability: when `run()` is given the wrapper, the runner reads history through `getItemsWithCompactionOwnership()`
 * (which hands out a receipt), appends through `addItemsWithCompactionOwnership(items, receipt)`, and calls
 * `runCompaction(args, runContext, receipt, modelExchange)`. The wrapper compacts only if the receipt is still current
 * (no other write went through the wrapper since the read) and every stored item of the last `n + 1` is covered by the
 * last successful model exchange; it then sends those model-visible items to `responses.compact` and replaces history by
 * `clearSession()` + `addItems()` on the underlying session. The underlying session only needs the plain `Session`
 * methods, so `AdvancedSQLiteSession.currentBranchSession()` serves as it is.
 *
 * Each scenario runs once with the SDK's `MemorySession` under the wrapper and once with `currentBranchSession()` under
 * it (test/support/differentialHarness.ts): items after every run, how runs ended, model inputs, every `runCompaction`
 * call (which path, which receipt, what the exchange held, whether it compacted) and every `responses.compact` request
 * must be the same. On the SQLite side, branch `side` is compared row by row, as stored bytes, before and after.
 */
import { strict as assert } from 'node:assert';
import {
  MemorySession,
  OpenAIResponsesCompactionSession,
  run,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type Session,
} from '@openai/agents';
import type OpenAI from 'openai';
import { z } from 'zod';
import { describeDriverChoice, type AdvancedSQLiteSession } from '../../../../src/store';
import { assistantAgent } from '../../../support/differentialAgents';
import { SESSION_ID, checkCoherence, differential, storedShape, type Side } from '../../../support/differentialHarness';
import { DifferentialModel, callTools, compactThen, say } from '../../../support/differentialModel';
import { inspect } from '../../../support/tableDump';

type Json = Record<string, unknown>;
type RunCompactionParameters = Parameters<OpenAIResponsesCompactionSession['runCompaction']>;

const driver = describeDriverChoice().driver;
const SIDE_TEXTS = ['a side question', 'side answer'];

/** What one `runCompaction` call got and did; both sides must record the same. */
interface CompactionCall {
  label: string;
  /** `receipt`: the runner's ownership path; `null`: no receipt survived; `manual`: called without one. */
  path: 'receipt' | 'null' | 'manual';
  /** Whether the receipt is the one the wrapper handed out at its latest history read. */
  receiptFromLatestRead: boolean | null;
  exchange: Json[] | null;
  compacted: boolean;
}

/**
 * `OpenAIResponsesCompactionSession` that records its ownership-aware calls in `side.extra` and changes nothing else.
 * `label` names the step in progress.
 */
class RecordingCompactionSession extends OpenAIResponsesCompactionSession {
  label = '';
  readonly calls: CompactionCall[] = [];
  private latestReceipt: object | undefined;

  constructor(
    private readonly side: Side,
    underlyingSession: Session,
    threshold: number,
    /** Record what each history read returned (not where the reference gets a window from a callback instead). */
    private readonly recordReads = true,
  ) {
    super({
      client: fakeCompactionClient(side),
      underlyingSession,
      model: 'gpt-4.1',
      compactionMode: 'input',
      shouldTriggerCompaction: ({ compactionCandidateItems, sessionItems }) => {
        side.extra.push({ label: this.label, decision: { candidates: compactionCandidateItems.length, items: sessionItems.length } });
        return compactionCandidateItems.length >= threshold;
      },
    });
  }

  override async getItemsWithCompactionOwnership(
    ...args: Parameters<OpenAIResponsesCompactionSession['getItemsWithCompactionOwnership']>
  ): ReturnType<OpenAIResponsesCompactionSession['getItemsWithCompactionOwnership']> {
    const snapshot = await super.getItemsWithCompactionOwnership(...args);
    this.latestReceipt = snapshot.ownership;
    if (this.recordReads) this.side.extra.push({ label: this.label, ownershipRead: storedShape(snapshot.items) });
    return snapshot;
  }

  override async runCompaction(...args: RunCompactionParameters): ReturnType<OpenAIResponsesCompactionSession['runCompaction']> {
    const [, , ownership, exchange] = args;
    const result = await super.runCompaction(...args);
    const call: CompactionCall = {
      label: this.label,
      path: ownership === undefined ? 'manual' : ownership === null ? 'null' : 'receipt',
      receiptFromLatestRead: ownership ? ownership === this.latestReceipt : null,
      exchange: exchange ? storedShape(exchange.items) : null,
      compacted: result !== null,
    };
    this.calls.push(call);
    this.side.extra.push({ runCompaction: call });
    return result;
  }
}

/** A stand-in for `client.responses.compact`, as in runnerScenarios.test.ts: the input's user messages and a compaction item. */
function fakeCompactionClient(side: Side): OpenAI {
  let calls = 0;
  const textOf = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p) => String((p as { text?: unknown }).text ?? '')).join('')
        : '';
  return {
    responses: {
      compact: async (request: { model: string; input?: Json[]; previous_response_id?: string }) => {
        calls++;
        side.extra.push({ compactRequest: calls, model: request.model, input: request.input ?? null });
        const users = (request.input ?? []).filter((i) => i.role === 'user');
        return {
          output: [
            ...users.map((u) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: textOf(u.content) }] })),
            { type: 'compaction', encrypted_content: `compacted-${calls}` },
          ],
          usage: { input_tokens: 100 * calls, output_tokens: 10, total_tokens: 100 * calls + 10 },
        };
      },
    },
  } as unknown as OpenAI;
}

/** `responses.compact` requests recorded on a side. */
function compactRequests(side: Side): Json[][] {
  return side.extra.filter((e): e is { input: Json[] } => typeof e === 'object' && e !== null && 'compactRequest' in e).map((e) => e.input);
}

/**
 * A branch of the SQLite file exactly as stored: its structure rows with the message text each points to, and its usage
 * rows, every column (timestamps and ids included), read over a separate read-only connection.
 */
function storedBranch(side: Side, branch: string): unknown {
  return inspect(side.dbPath, (db) => ({
    rows: db
      .prepare(
        `SELECT s.*, m.message_data, m.created_at AS message_created_at
         FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number`,
      )
      .all<Json>(SESSION_ID, branch)
      .map((r) => ({ ...r })),
    usage: db
      .prepare('SELECT * FROM turn_usage WHERE session_id = ? AND branch_id = ? ORDER BY id')
      .all<Json>(SESSION_ID, branch)
      .map((r) => ({ ...r })),
  }));
}

/** Creates branch `side` from turn `fromTurn` on the SQLite side, runs one turn on it, and switches back to main. */
async function makeSideBranch(side: Side, fromTurn: number): Promise<void> {
  const s = side.sqlite as AdvancedSQLiteSession;
  assert.equal(await s.createBranchFromTurn(fromTurn, 'side'), 'side');
  // A model of its own (not compared: MemorySession has no branches).
  const result = await run(assistantAgent(new DifferentialModel([say('side answer')], 'side')), 'a side question', { session: s });
  await side.storeUsage(result.state);
  await s.switchToBranch('main');
}

function assertNoSideBranchText(requests: Json[][]): void {
  for (const text of SIDE_TEXTS) {
    assert.ok(!JSON.stringify(requests).includes(text), `a responses.compact request carried '${text}' of branch side`);
  }
}

describe(`differential: ownership-aware compaction (@openai/agents ≥ 0.18) on currentBranchSession() (${driver})`, function () {
  this.timeout(60_000);
  before(() => setTracingDisabled(true));

  for (const mode of ['run', 'stream'] as const) {
    it(`${mode}: automatic compaction takes the receipt path and replaces only the current branch`, async () => {
      let sideBefore: unknown;
      let mainUsageBefore: unknown[] = [];
      const { sqlite } = await differential(async (side) => {
        const agent = assistantAgent(
          side.model([
            say('A1.'),
            callTools(['get_weather', { city: 'Kyiv' }]),
            say('A2.'),
            callTools(['get_time', { city: 'Oslo' }]),
            say('A3.'),
            say('A4.'),
          ]),
        );
        await side.run('turn 1', agent, 'Q1');
        await side.run('turn 2', agent, 'Q2');
        if (side.sqlite) {
          await makeSideBranch(side, 2);
          sideBefore = storedBranch(side, 'side');
          mainUsageBefore = (storedBranch(side, 'main') as { usage: unknown[] }).usage;
        }
        // Four candidates stored so far (A1, call, output, A2); turn 3 adds three more.
        const wrapper = new RecordingCompactionSession(side, side.branchSession, 7);
        const through = async (label: string, input: string) => {
          wrapper.label = label;
          const outcome =
            mode === 'run'
              ? await side.run(label, agent, input, { session: wrapper })
              : await side.stream(label, agent, input, { session: wrapper });
          assert.equal(outcome.error, undefined, String(outcome.error));
        };
        await through('turn 3 through the wrapper', 'Q3');
        const compacting = wrapper.calls.filter((c) => c.compacted);
        assert.equal(compacting.length, 1, `expected one compaction in turn 3: ${JSON.stringify(wrapper.calls)}`);
        assert.deepStrictEqual(
          { path: compacting[0]!.path, receiptFromLatestRead: compacting[0]!.receiptFromLatestRead },
          { path: 'receipt', receiptFromLatestRead: true },
          'the runner did not compact through the ownership-aware path',
        );
        assert.ok(compacting[0]!.exchange && compacting[0]!.exchange.length > 0, 'runCompaction got no model exchange');
        const items = await side.base.getItems();
        assert.deepStrictEqual(
          storedShape(items).map((i) => i.type ?? i.role),
          ['message', 'message', 'message', 'compaction'],
          `main does not hold the compaction output: ${JSON.stringify(items)}`,
        );
        await through('turn 4 through the wrapper', 'Q4');
        assertNoSideBranchText(compactRequests(side));
        if (side.sqlite) {
          assert.deepStrictEqual(storedBranch(side, 'side'), sideBefore, 'the compaction changed the stored rows of branch side');
          const usageAfter = (storedBranch(side, 'main') as { usage: unknown[] }).usage;
          assert.deepStrictEqual(usageAfter.slice(0, mainUsageBefore.length), mainUsageBefore, "the compaction changed main's usage rows");
        }
      });
      assert.ok(compactRequests(sqlite).length === 1, 'the SQLite side never compacted');
      assert.ok(sideBefore && (sideBefore as { rows: unknown[] }).rows.length > 0, 'branch side was never built');
    });
  }

  it('a write through the wrapper during the run makes the receipt stale: no automatic compaction, then the next run compacts', async () => {
    let sideBefore: unknown;
    await differential(async (side) => {
      const made: { wrapper?: RecordingCompactionSession } = {};
      // Takes the last stored item off and puts it back through the wrapper: history ends as it was, but the wrapper
      // saw a write that was not the run's, so the run's receipt no longer owns the history.
      const touch = tool({
        name: 'touch_history',
        description: 'Rewrites the last stored item',
        parameters: z.object({}),
        execute: async () => {
          const last = await made.wrapper!.popItem();
          if (last) await made.wrapper!.addItems([last]);
          return last ? 'rewritten' : 'empty';
        },
      });
      const model = side.model([say('A1.'), say('A2.'), callTools(['touch_history', {}]), say('A3.'), say('A4.')]);
      const agent = assistantAgent(model, { tools: [touch] });
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        sideBefore = storedBranch(side, 'side');
      }
      const wrapper = (made.wrapper = new RecordingCompactionSession(side, side.branchSession, 3));
      wrapper.label = 'turn 3 (the tool writes through the wrapper)';
      await side.run(wrapper.label, agent, 'Q3', { session: wrapper });
      assert.ok(wrapper.calls.length > 0, 'the runner never called runCompaction');
      assert.deepStrictEqual(
        wrapper.calls.map((c) => c.compacted),
        wrapper.calls.map(() => false),
        `compacted with a stale receipt: ${JSON.stringify(wrapper.calls)}`,
      );
      assert.equal(compactRequests(side).length, 0);
      assert.ok(!(await side.base.getItems()).some((i) => i.type === 'compaction'));
      wrapper.label = 'turn 4 (a fresh receipt)';
      await side.run(wrapper.label, agent, 'Q4', { session: wrapper });
      assert.equal(wrapper.calls.at(-1)?.path, 'receipt');
      assert.equal(wrapper.calls.at(-1)?.compacted, true, `the next run did not compact: ${JSON.stringify(wrapper.calls)}`);
      assertNoSideBranchText(compactRequests(side));
      if (side.sqlite) assert.deepStrictEqual(storedBranch(side, 'side'), sideBefore, 'branch side changed');
    });
  });

  it('history the model did not see (sessionInputCallback) is not compacted automatically; manual compaction still replaces main only', async () => {
    let sideBefore: unknown;
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('A1.'), say('A2.'), say('A3.')]));
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        sideBefore = storedBranch(side, 'side');
      }
      const wrapper = new RecordingCompactionSession(side, side.branchSession, 1);
      wrapper.label = 'turn 3 with only the last item of history';
      await side.run(wrapper.label, agent, 'Q3', {
        session: wrapper,
        sessionInputCallback: (history, newItems) => [...history.slice(-1), ...newItems],
      });
      assert.deepStrictEqual(
        wrapper.calls.map((c) => [c.path, c.compacted]),
        [['receipt', false]],
        'history the model did not see was compacted',
      );
      assert.equal(compactRequests(side).length, 0);
      // Manual compaction (no receipt, no exchange) is the caller's decision: it compacts the whole current branch.
      wrapper.label = 'manual runCompaction({ force: true })';
      await wrapper.runCompaction({ force: true });
      assert.deepStrictEqual(wrapper.calls.at(-1), { ...wrapper.calls.at(-1), path: 'manual', compacted: true });
      await side.checkpoint(wrapper.label);
      assertNoSideBranchText(compactRequests(side));
      if (side.sqlite) assert.deepStrictEqual(storedBranch(side, 'side'), sideBefore, 'branch side changed');
    });
  });

  it('sessionSettings.limit: the model saw a window of the branch, so automatic compaction deletes nothing it did not see', async () => {
    // runCompaction reads the last n + 1 items with an explicit limit (n: the model exchange) so that a default window
    // is not mistaken for the whole history; an explicit limit must win over sessionSettings.limit, as in Python.
    const limit = 3;
    let sideBefore: unknown;
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('A1.'), say('A2.'), say('A3.'), say('A4.')]));
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      await side.run('turn 3', agent, 'Q3');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        sideBefore = storedBranch(side, 'side');
      }
      // The reference gets the same window from a callback (MemorySession has no settings).
      const windowed = side.sqlite ? side.openAnother({ sessionSettings: { limit } }).currentBranchSession() : side.branchSession;
      const wrapper = new RecordingCompactionSession(side, windowed, 1, false);
      wrapper.label = `turn 4 on a window of ${limit} items`;
      await side.run(wrapper.label, agent, 'Q4', {
        session: wrapper,
        ...(side.sqlite ? {} : { sessionInputCallback: (history, newItems) => [...history.slice(-limit), ...newItems] }),
      });
      const request = side.models[0]!.requests.at(-1)!;
      assert.equal(request.input.length, limit + 1, 'the model did not get the window');
      assert.deepStrictEqual(
        wrapper.calls.map((c) => [c.path, c.compacted]),
        [['receipt', false]],
        'history outside the window the model saw was compacted away',
      );
      assert.equal(compactRequests(side).length, 0);
      assert.equal((await side.base.getItems()).length, 8, 'the branch lost items');
      if (side.sqlite) assert.deepStrictEqual(storedBranch(side, 'side'), sideBefore, 'branch side changed');
    });
  });

  it("a compaction item in the model's own output, through the wrapper: the runner's clear-and-add fallback replaces main only", async () => {
    // The wrapper does not pass replaceHistoryWithCompaction through, so the runner clears and re-adds through it.
    let sideBefore: unknown;
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('A1.'), say('A2.'), compactThen(say('Compacted A3.')), say('A4.')]));
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        sideBefore = storedBranch(side, 'side');
      }
      const wrapper = new RecordingCompactionSession(side, side.branchSession, 1_000);
      wrapper.label = 'turn 3: the model compacts';
      await side.run(wrapper.label, agent, 'Q3', { session: wrapper });
      const items = await side.base.getItems();
      assert.equal(items[0]?.type, 'compaction', `history does not start with the compaction item: ${JSON.stringify(items)}`);
      wrapper.label = 'turn 4';
      await side.run(wrapper.label, agent, 'Q4', { session: wrapper });
      assert.equal(compactRequests(side).length, 0);
      if (side.sqlite) assert.deepStrictEqual(storedBranch(side, 'side'), sideBefore, 'branch side changed');
    });
  });

  it('one wrapper reused across switchToBranch: automatic compaction compacts the branch it runs on, from that branch alone', async () => {
    // The reference for a branching session is a view over one MemorySession per branch, following a pointer, as
    // currentBranchSession() follows the session's branch pointer.
    let mainBefore: unknown;
    await differential(async (side) => {
      const mainModel = side.model([say('A1.'), say('A2.'), say('A3.')]);
      const sideModel = side.model([say('side answer'), callTools(['get_weather', { city: 'Bern' }]), say('S2.')], 'side');
      const agent = assistantAgent(mainModel);
      const sideAgent = assistantAgent(sideModel);
      const view = side.sqlite ? side.sqlite.currentBranchSession() : new PointerSession(side.memory!);
      const sideMemory = new MemorySession({ sessionId: await side.base.getSessionId() });
      const switchTo = async (branch: 'main' | 'side') => {
        if (side.sqlite) await side.sqlite.switchToBranch(branch);
        else (view as PointerSession).current = branch === 'main' ? side.memory! : sideMemory;
      };
      const step = async (label: string, a: typeof agent, input: string, session: Session) => {
        const result = await run(a, input, { session });
        side.notes.push({ label, finalOutput: result.finalOutput ?? null });
        await side.storeUsage(result.state);
        const items = await view.getItems();
        side.snapshots.push({ label, items: storedShape(items) });
        if (side.sqlite) await checkCoherence(side, label, items);
      };
      await step('main turn 1', agent, 'Q1', view);
      await step('main turn 2', agent, 'Q2', view);
      if (side.sqlite) await side.sqlite.createBranchFromTurn(2, 'side');
      else await sideMemory.addItems((await side.memory!.getItems()).slice(0, 2));
      await switchTo('side');
      await step('side turn 2', sideAgent, 'a side question', view);
      await switchTo('main');

      // Five candidates: main has three after its turn 3 (A1, A2, A3), side five after its turn 3 (A1, its answer, a
      // tool call and output, S2). A decision or request made from main's history cached in the wrapper would differ.
      const wrapper = new RecordingCompactionSession(side, view, 5);
      wrapper.label = 'main turn 3 through the wrapper';
      await step(wrapper.label, agent, 'Q3', wrapper);
      assert.deepStrictEqual(
        wrapper.calls.map((c) => c.compacted),
        [false],
      );
      if (side.sqlite) mainBefore = storedBranch(side, 'main');

      await switchTo('side');
      wrapper.label = 'side turn 3 through the same wrapper';
      await step(wrapper.label, sideAgent, 'S?', wrapper);
      assert.deepStrictEqual(
        wrapper.calls.map((c) => [c.path, c.compacted]),
        [
          ['receipt', false],
          ['receipt', true],
        ],
        'main turn 3, then side turn 3',
      );
      const requests = compactRequests(side);
      assert.equal(requests.length, 1);
      const texts = JSON.stringify(requests[0]);
      for (const own of ['Q1', 'A1.', 'a side question', 'side answer', 'S?', 'S2.'])
        assert.ok(texts.includes(own), `request lacks '${own}'`);
      for (const other of ['Q2', 'A2.', 'Q3', 'A3.']) assert.ok(!texts.includes(other), `request carried '${other}' of main`);
      if (side.sqlite) {
        assert.deepStrictEqual(storedBranch(side, 'main'), mainBefore, 'compacting branch side changed the stored rows of main');
        await side.sqlite.switchToBranch('main');
      } else {
        (view as PointerSession).current = side.memory!;
      }
      side.snapshots.push({ label: 'main after compacting side', items: storedShape(await view.getItems()) });
    });
  });
});

/** A `Session` that forwards to whichever `MemorySession` `current` is: the reference for a branch view. */
class PointerSession implements Session {
  constructor(public current: MemorySession) {}
  getSessionId(): Promise<string> {
    return this.current.getSessionId();
  }
  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.current.getItems(limit);
  }
  addItems(items: AgentInputItem[]): Promise<void> {
    return this.current.addItems(items);
  }
  popItem(): Promise<AgentInputItem | undefined> {
    return this.current.popItem();
  }
  clearSession(): Promise<void> {
    return this.current.clearSession();
  }
}
