/**
 * The view's data flow against the host's real request handling over a real file: on a notice the view
 * re-requests only what it shows, and a reply to a request issued before a newer notice never overwrites newer
 * data. Only the transport is simulated, so replies can be held back and delivered late, as a busy host would.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { itemView, sessionView, tables, toolsView, turnPage } from '../../../../src/extension/conversation/conversationData';
import { handleRequest, type RequestHandlers } from '../../../../src/extension/conversation/requestChecks';
import type { RequestMethod } from '../../../../src/shared/protocol/conversation';
import { ROW_CHANGES } from '../../../../src/shared/protocol/envelope';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { ConversationModel, chooseBranch, refreshPlan, type RequestFn } from '../../../../webview/conversation/logic/conversationModel';
import { tempDir } from '../../../support/tempFiles';

const SESSION = 's';

async function addTurns(path: string, from: number, count: number): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
  try {
    for (let t = from; t < from + count; t++) {
      await s.addItems([
        { role: 'user', content: `question ${t}` },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `answer ${t}` }] },
      ] as never);
    }
  } finally {
    s.close();
  }
}

/** Adds turns with a usage row each: total tokens `(37 × turn) mod 1000 + 1`, so an order by total is not by turn. */
async function addTurnsWithUsage(path: string, from: number, count: number): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
  try {
    for (let t = from; t < from + count; t++) {
      await s.addItems([{ role: 'user', content: `question ${t}` }]);
      const total = ((37 * t) % 1000) + 1;
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: total - 1, outputTokens: 1, totalTokens: total } } });
    }
  } finally {
    s.close();
  }
}

/**
 * The host's side as the panel answers: the real builders and parameter checks over a read-only connection. Each
 * answer is read when the request arrives; while `holding`, its delivery waits for `release()`.
 */
class TestHost {
  readonly methods: RequestMethod[] = [];
  /** Every request with its parameters, as sent. */
  readonly requests: [RequestMethod, unknown][] = [];
  holding = false;
  /** While `holding`, only these methods wait (all when unset). */
  holdOnly: ReadonlySet<RequestMethod> | undefined;
  private readonly held: (() => void)[] = [];

  constructor(private readonly db: SessionDatabase) {}

  private readonly handlers: RequestHandlers = {
    'view/ready': () => null,
    'session/get': () =>
      sessionView({
        db: this.db,
        dbPath: '/test.db',
        sessionId: SESSION,
        readonly: true,
        currentBranch: 'main',
        branchTree: async () => this.db.getBranchTree(SESSION),
        problem: undefined,
      }),
    'turns/get': (p) => turnPage(this.db, SESSION, p),
    'turn/items': (p) => this.db.getTurnItems(SESSION, p.branchId, p.turn).map(itemView),
    'turn/timeline': () => ({ state: 'off', spans: [], omitted: 0, traces: 0, totalMs: 0, requests: 0 }),
    'turn/context': () => {
      throw new Error('not asked for in these tests');
    },
    // No trace store in these tests: every branch reads as untraced.
    'branch/latency': (p) => ({ branchId: p.branchId, turns: [], turnCount: 0, partial: false, p50Ms: null, p95Ms: null }),
    'trace/link': () => assert.fail('not in these tests'),
    // No review store in these tests: every branch reads as unreviewed.
    'reviews/get': (p) => ({ branchId: p.branchId, turns: [], orphaned: [], corrections: [], orphanedCorrections: 0, tags: [] }),
    'review/set': () => assert.fail('not in these tests'),
    'correction/set': () => assert.fail('not in these tests'),
    'correction/branch': () => assert.fail('not in these tests'),
    'turn/askCopilot': () => assert.fail('not in these tests'),
    'tables/get': (p) => tables(this.db, SESSION, p.branchId, this.db.getBranchTree(SESSION), p.usage),
    'tools/get': (p) => toolsView(this.db, SESSION, p.branchId),
    'pricing/choose': () => assert.fail('not in these tests'),
    'branch/create': () => assert.fail('not in these tests'),
    'branch/switch': () => assert.fail('not in these tests'),
    'branch/delete': () => assert.fail('not in these tests'),
    'run/start': () => assert.fail('not in these tests'),
    'run/stop': () => assert.fail('not in these tests'),
    'content/copy': () => assert.fail('not in these tests'),
    'content/openJson': () => assert.fail('not in these tests'),
    'branch/export': () => assert.fail('not in these tests'),
    'search/session': () => assert.fail('not in these tests'),
    'whatIf/models': () => assert.fail('not in these tests'),
    'whatIf/start': () => assert.fail('not in these tests'),
    'branch/compare': () => assert.fail('not in these tests'),
    'apiKey/set': () => assert.fail('not in these tests'),
    'agents/get': () => assert.fail('not in these tests'),
    'agents/select': () => assert.fail('not in these tests'),
    'replay/table': () => assert.fail('not in these tests'),
    // No replay marks store in these tests: no call carries a mark.
    'replay/marks': () => ({ marks: [], runs: [] }),
    // The history guard's layers are the layer strip's (components/historyLayers.ts), not the model's.
    'layers/get': () => assert.fail('not in these tests'),
    'layer/items': () => assert.fail('not in these tests'),
    'layer/compare': () => assert.fail('not in these tests'),
    'layer/restore': () => assert.fail('not in these tests'),
  };

  readonly request = ((method: RequestMethod, params: unknown) => {
    this.methods.push(method);
    this.requests.push([method, params]);
    const answer = handleRequest(this.handlers, method, params);
    if (!this.holding || (this.holdOnly !== undefined && !this.holdOnly.has(method))) return answer;
    return new Promise<unknown>((resolve) => this.held.push(() => resolve(answer)));
  }) as RequestFn;

  /** How many answers are held. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Delivers the held answers, oldest first (or newest first), and waits until the view has handled them. */
  async release(order: 'oldest first' | 'newest first' = 'oldest first'): Promise<void> {
    this.holding = false;
    this.holdOnly = undefined;
    const held = this.held.splice(0);
    for (const deliver of order === 'oldest first' ? held : held.reverse()) {
      deliver();
      await settle();
    }
  }

  /** The methods requested since the last call. */
  take(): RequestMethod[] {
    return this.methods.splice(0);
  }
}

/** Lets every pending promise chain run (the model's loads are a few awaits deep). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

describe('conversation view data flow', () => {
  let tmp: ReturnType<typeof tempDir>;
  let path: string;
  let db: SessionDatabase;
  beforeEach(async () => {
    tmp = tempDir();
    path = join(tmp.dir, 'view.db');
    await addTurns(path, 1, 3);
    db = openSessionDatabase(path, { readonly: true });
  });
  afterEach(() => {
    db.close();
    tmp.cleanup();
  });

  it('loads on request and, on a notice, re-requests only the windows it shows that the notice touches', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    assert.deepEqual(host.take(), [
      'view/ready',
      'session/get',
      'turns/get',
      'branch/latency',
      'reviews/get',
      'replay/marks',
      'turn/items',
    ]);
    assert.deepEqual(
      model.turns.map((t) => t.preview),
      ['question 1', 'question 2', 'question 3'],
    );
    assert.equal(model.selectedTurn?.turn, 1);

    await model.noticeReceived({ seq: 1, what: ['current-branch'] });
    assert.deepEqual(host.take(), ['session/get'], 'the current branch shows in the branch list only');
    await model.noticeReceived({ seq: 2, what: ['usage'] });
    assert.deepEqual(host.take(), [], 'no table is open');
    await model.setTables(true);
    assert.deepEqual(host.take(), ['tables/get']);
    await model.noticeReceived({ seq: 3, what: ['usage'] });
    assert.deepEqual(host.take(), ['tables/get']);

    await addTurns(path, 4, 1);
    await model.noticeReceived({ seq: 4, what: [...ROW_CHANGES] });
    assert.deepEqual(host.take(), ['session/get', 'turns/get', 'branch/latency', 'reviews/get', 'turn/items', 'tables/get']);
    await model.noticeReceived({ seq: 5, what: ['traces'] });
    assert.deepEqual(host.take(), ['branch/latency', 'tables/get'], "the trace store's change: latency and the table's latency column");
    await model.noticeReceived({ seq: 6, what: ['reviews'] });
    assert.deepEqual(host.take(), ['reviews/get'], 'a review changed: the verdicts only');
    await model.noticeReceived({ seq: 7, what: ['replay'] });
    assert.deepEqual(host.take(), ['replay/marks'], "a run recorded replay marks: the selected turn's branch's marks only");
    assert.equal(model.turns.length, 4);
    assert.equal(model.session?.branches[0]?.userTurns, 4);
    assert.equal(model.selectedTurn?.turn, 1, 'the selection stays');

    await model.noticeReceived({ seq: 7, what: ['database'] });
    await model.noticeReceived({ seq: 2, what: ['database'] });
    assert.deepEqual(host.take(), [], 'a notice not newer than the last one seen is ignored');
  });

  it('drops a slow reply to a request issued before a newer notice', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);

    // Notice 1: its branch list is read now (4 turns) but arrives late.
    await addTurns(path, 4, 1);
    host.holding = true;
    const first = model.noticeReceived({ seq: 1, what: [...ROW_CHANGES] });
    await settle();
    // Notice 2 after another write is answered at once (5 turns).
    host.holding = false;
    await addTurns(path, 5, 1);
    await model.noticeReceived({ seq: 2, what: [...ROW_CHANGES] });
    assert.equal(model.session?.branches[0]?.userTurns, 5);
    assert.equal(model.turns.length, 5);
    host.take();

    await host.release();
    await first;
    assert.equal(model.session?.branches[0]?.userTurns, 5, 'the stale branch list (4 turns) was dropped');
    assert.equal(model.turns.length, 5);
    assert.deepEqual(host.take(), [], 'the overtaken refresh asked for nothing more');
  });

  it('still reads what an overtaken notice touched when the newer notice touches less', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    await addTurns(path, 4, 1);
    host.holding = true;
    const first = model.noticeReceived({ seq: 1, what: [...ROW_CHANGES] });
    await settle();
    host.holding = false;
    // Only the current branch moved this time, but the turns of notice 1 are still owed.
    await model.noticeReceived({ seq: 2, what: ['current-branch'] });
    assert.equal(model.turns.length, 4);
    await host.release();
    await first;
    assert.equal(model.turns.length, 4);
    host.take();
    await model.noticeReceived({ seq: 3, what: ['current-branch'] });
    assert.deepEqual(host.take(), ['session/get'], 'once read, nothing more is owed');
  });

  it('finishes a navigation that a notice overtook', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    host.holding = true;
    const selecting = model.selectTurn(3);
    await settle();
    host.holding = false;
    await model.noticeReceived({ seq: 1, what: ['current-branch'] });
    await host.release();
    await selecting;
    assert.equal(model.selectedTurn?.turn, 3);
    assert.ok(Array.isArray(model.items), 'the items of turn 3 arrived');
    assert.match(JSON.stringify(model.items), /question 3/);
  });

  it('drops a page requested before a notice, so no turn is listed twice', async () => {
    await addTurns(path, 4, 147); // 150 turns: a first page of 100 and more to load
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    assert.equal(model.turns.length, 100);
    assert.ok(model.hasMore);

    host.holding = true;
    const more = model.loadMore();
    await settle();
    host.holding = false;
    await model.noticeReceived({ seq: 1, what: ['turns'] });
    await host.release();
    await more;
    const turns = model.turns.map((t) => t.turn);
    assert.equal(new Set(turns).size, turns.length, 'no duplicates');
    await model.loadMore();
    assert.deepEqual(
      model.turns.map((t) => t.turn),
      Array.from({ length: 150 }, (_, i) => i + 1),
    );
  });

  // A run's turn is written in several commits, each with its notice: a notice's read of the turns may be answered
  // after the run's end, holding the turns as they were before the run's last write. Neither order of the two answers
  // may leave the view on an older turn than the one the run wrote (seen in the UI suite: the new branch's turn 2
  // listed but turn 1 selected).
  for (const order of ['oldest first', 'newest first'] as const) {
    it(`selects the turn a run wrote when a read issued before its last write answers after it ended (${order})`, async () => {
      const host = new TestHost(db);
      const model = new ConversationModel(host.request, () => undefined);
      await model.start(null);
      host.holding = true;
      host.holdOnly = new Set(['turns/get']);
      const notice = model.noticeReceived({ seq: 1, what: [...ROW_CHANGES] });
      await settle();
      assert.equal(host.heldCount, 1, "the notice's turns, read before the run's turn was stored");
      await addTurns(path, 4, 1);
      const usage = { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0 };
      const written = { summary: 'stored', kept: [], removed: [], notSaved: [], turn: 4, usageStored: false };
      const ended = model.runEvent({ kind: 'run/completed', runId: 'r1', finalOutput: 'done', usage, written });
      await settle();
      assert.equal(host.heldCount, 2, "the run's own read of the turns");
      await host.release(order);
      await Promise.all([notice, ended]);
      assert.deepEqual(
        model.turns.map((t) => t.turn),
        [1, 2, 3, 4],
      );
      assert.equal(model.selectedTurn?.turn, 4, 'the turn the run wrote');
      assert.match(JSON.stringify(model.items), /question 4/);
    });
  }

  it('still loads everything when a notice arrives before the handshake is answered', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    host.holding = true;
    const started = model.start({ branchId: 'main', turn: 3 });
    await settle();
    await model.noticeReceived({ seq: 1, what: ['current-branch'] });
    await host.release();
    await started;
    assert.equal(model.turns.length, 3);
    assert.equal(model.selectedTurn?.turn, 3, 'the saved selection');
    assert.ok(Array.isArray(model.items) && model.items.length === 2);
  });

  it('plans refreshes and falls back to an existing branch', () => {
    assert.deepEqual(refreshPlan(['current-branch'], true), {
      session: true,
      turns: false,
      items: false,
      tables: false,
      latency: false,
      reviews: false,
      replay: false,
    });
    assert.deepEqual(refreshPlan(['usage'], false), {
      session: false,
      turns: false,
      items: false,
      tables: false,
      latency: false,
      reviews: false,
      replay: false,
    });
    assert.deepEqual(refreshPlan(['database'], true), {
      session: true,
      turns: true,
      items: true,
      tables: true,
      latency: true,
      reviews: true,
      replay: true,
    });
    // The trace store changed: latency (and the Tokens table's latency column), nothing of the file.
    assert.deepEqual(refreshPlan(['traces'], true), {
      session: false,
      turns: false,
      items: false,
      tables: true,
      latency: true,
      reviews: false,
      replay: false,
    });
    assert.deepEqual(refreshPlan(['traces'], false), {
      session: false,
      turns: false,
      items: false,
      tables: false,
      latency: true,
      reviews: false,
      replay: false,
    });
    // Reviews changed: only the verdicts.
    assert.deepEqual(refreshPlan(['reviews'], true), {
      session: false,
      turns: false,
      items: false,
      tables: false,
      latency: false,
      reviews: true,
      replay: false,
    });
    // A run recorded replay marks (kept apart from the file): only the marks of the selected turn's calls.
    assert.deepEqual(refreshPlan(['replay'], true), {
      session: false,
      turns: false,
      items: false,
      tables: false,
      latency: false,
      reviews: false,
      replay: true,
    });
    const session = {
      dbPath: '/x.db',
      dbName: 'x.db',
      sessionId: 's',
      readonly: false,
      usedBranchIds: [],
      problem: null,
      currentBranchId: 'alt',
      branches: ['main', 'alt'].map((branchId) => ({
        branchId,
        parentBranchId: null,
        forkTurn: null,
        userTurns: 1,
        messageCount: 2,
        createdAt: null,
        isCurrent: branchId === 'alt',
      })),
    };
    assert.equal(chooseBranch(session, 'main'), 'main');
    assert.equal(chooseBranch(session, 'deleted'), 'alt', 'the current branch');
    assert.equal(chooseBranch({ ...session, currentBranchId: 'gone' }, undefined), 'main', 'the first branch');
    assert.equal(chooseBranch({ ...session, branches: [] }, 'kept'), 'kept', 'nothing to check against');
  });

  it('jumps to the end with one request for the last page, loads earlier pages above it, and goes home', async () => {
    await addTurns(path, 4, 347); // 350 turns
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    assert.equal(model.turns.length, 100);
    host.requests.splice(0);
    host.take();

    await model.loadToEnd();
    assert.deepEqual(host.take(), ['turns/get', 'turn/items'], 'one page, not the three in between');
    assert.deepEqual(host.requests[0], ['turns/get', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 100 }]);
    assert.deepEqual(
      model.turns.map((t) => t.turn),
      Array.from({ length: 100 }, (_, i) => 251 + i),
    );
    assert.equal(model.selectedTurn?.turn, 350);
    assert.ok(model.scrollToSelection);
    assert.match(JSON.stringify(model.items), /question 350/);
    assert.ok(!model.hasMore);
    assert.ok(model.hasEarlier);

    // A live update re-reads the same window, from where it starts, not from turn 1.
    await addTurns(path, 351, 1);
    host.requests.splice(0);
    await model.noticeReceived({ seq: 1, what: ['turns'] });
    assert.deepEqual(host.requests[0], ['turns/get', { branchId: 'main', afterTurn: 250, limit: 100 }]);
    assert.equal(model.turns[0]?.turn, 251);
    assert.equal(model.selectedTurn?.turn, 350, 'the selection stays');
    assert.ok(model.hasMore, 'turn 351 is after the window');

    // Scrolling up loads the pages before the window, in order, until the first turn.
    host.requests.splice(0);
    await model.loadEarlier();
    assert.deepEqual(host.requests[0], ['turns/get', { branchId: 'main', afterTurn: null, beforeTurn: 251, limit: 100 }]);
    assert.equal(model.turns[0]?.turn, 151);
    await model.loadEarlier();
    await model.loadEarlier();
    assert.deepEqual(
      model.turns.map((t) => t.turn),
      Array.from({ length: 350 }, (_, i) => i + 1),
    );
    assert.ok(!model.hasEarlier);
    host.take();
    await model.loadEarlier();
    assert.deepEqual(host.take(), [], 'nothing before the first turn');
    assert.equal(model.selectedTurn?.turn, 350);

    // After an End, Home places a window at the first turn again.
    await model.loadToEnd();
    assert.equal(model.turns[0]?.turn, 252);
    await model.loadToStart();
    assert.equal(model.turns[0]?.turn, 1);
    assert.equal(model.selectedTurn?.turn, 1);
    assert.ok(!model.hasEarlier);
    host.take();
    await model.loadToStart();
    assert.deepEqual(host.take(), ['turn/items'], 'the first turn is loaded: Home only selects it');
  });

  it('ends at once, without a request for turns, when the window already reaches the last turn', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    host.take();
    await model.loadToEnd();
    assert.deepEqual(host.take(), ['turn/items']);
    assert.equal(model.selectedTurn?.turn, 3);
  });

  it('pages and sorts the Tokens table on the host, and a notice re-reads the page shown', async () => {
    await addTurnsWithUsage(path, 4, 447); // 450 turns, 447 usage rows
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    host.requests.splice(0);
    const usageAsked = () => host.requests.filter(([m]) => m === 'tables/get').map(([, p]) => (p as { usage: unknown }).usage);

    await model.setTables(true);
    const first = model.tables?.usage;
    assert.ok(first);
    assert.equal(first.rowCount, 447);
    assert.deepEqual(
      first.rows.map((r) => r.turn),
      Array.from({ length: 200 }, (_, i) => i + 4),
    );
    assert.deepEqual(model.tables?.turnsWithoutUsage, [
      { branchId: 'main', turn: 1 },
      { branchId: 'main', turn: 2 },
      { branchId: 'main', turn: 3 },
    ]);
    assert.equal(model.tables?.turnsWithoutUsageCount, 3);
    const sumOfAll = Array.from({ length: 447 }, (_, i) => ((37 * (i + 4)) % 1000) + 1).reduce((a, b) => a + b, 0);
    assert.equal(first.totals.totalTokens, sumOfAll, 'totals of the scope, not of the page');

    await model.usagePage(1);
    await model.usagePage(1);
    assert.equal(model.tables?.usage.offset, 400);
    assert.deepEqual(
      model.tables?.usage.rows.map((r) => r.turn),
      Array.from({ length: 47 }, (_, i) => i + 404),
    );
    assert.equal(model.tables?.usage.totals.totalTokens, sumOfAll);
    host.requests.splice(0);
    await model.usagePage(1);
    assert.deepEqual(usageAsked(), [], 'no page after the last');

    await model.noticeReceived({ seq: 1, what: ['usage'] });
    assert.deepEqual(usageAsked(), [{ sort: 'turn', descending: false, offset: 400, limit: 200 }], 'the same window again');

    host.requests.splice(0);
    await model.sortUsage('totalTokens');
    await model.sortUsage('totalTokens');
    assert.deepEqual(usageAsked(), [
      { sort: 'totalTokens', descending: false, offset: 0, limit: 200 },
      { sort: 'totalTokens', descending: true, offset: 0, limit: 200 },
    ]);
    const totals = model.tables?.usage.rows.map((r) => r.totalTokens) ?? [];
    assert.equal(totals.length, 200);
    assert.deepEqual(
      totals,
      [...totals].sort((a, b) => (b ?? 0) - (a ?? 0)),
    );
    assert.equal(totals[0], 1000);
    await model.usagePage(1);
    assert.equal(model.tables?.usage.offset, 200);
    assert.ok((model.tables?.usage.rows[0]?.totalTokens ?? Infinity) <= (totals[199] ?? 0), 'the next page goes on in that order');

    host.requests.splice(0);
    await model.setTables(true, 'session');
    assert.deepEqual(
      usageAsked(),
      [{ sort: 'totalTokens', descending: true, offset: 0, limit: 200 }],
      'another scope starts at its first page',
    );
    assert.equal(model.tables?.branchId, null);
  });

  it('gives the Tools tab its own scope, apart from the Tokens tab, and re-reads costs on a pricing notice', async () => {
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    await model.setTables(true, 'session');
    host.requests.splice(0);
    host.take();
    // The Tools tab opens on this branch even though the Tokens tab last showed the whole session.
    await model.setTables(false);
    await model.setTools(true);
    assert.deepEqual(host.requests, [['tools/get', { branchId: 'main' }]]);
    assert.equal(model.tools?.branchId, 'main');
    await model.setTools(true, 'session');
    assert.equal(model.tools?.branchId, null);
    assert.equal(model.tablesScope, 'session');
    assert.equal(model.toolsScope, 'session');
    host.take();
    await model.noticeReceived({ seq: 1, what: ['pricing'] });
    assert.deepEqual(host.take(), ['tools/get'], 'only the open tab is read again');
    await model.setTools(false);
    await model.setTables(true);
    host.take();
    await model.noticeReceived({ seq: 2, what: ['pricing'] });
    assert.deepEqual(host.take(), ['tables/get'], 'another pricing model changes the Tokens tab');
  });

  it('shows the page asked for last when pages are asked for faster than they arrive', async () => {
    await addTurnsWithUsage(path, 4, 447);
    const host = new TestHost(db);
    const model = new ConversationModel(host.request, () => undefined);
    await model.start(null);
    await model.setTables(true);
    host.holding = true;
    const next = model.usagePage(1);
    await settle();
    host.holding = false;
    const nextAgain = model.usagePage(1);
    await nextAgain;
    assert.equal(model.tables?.usage.offset, 400);
    await host.release();
    await next;
    assert.equal(model.tables?.usage.offset, 400, 'the late reply for rows 201–400 was dropped');
    assert.equal(model.tables?.usage.rows[0]?.turn, 404);
  });

  it('shows a first count’s progress, and drops an overtaken Tools request’s answer even when it is the host’s cancel', async () => {
    const host = new TestHost(db);
    let cancelOlder: ((err: Error) => void) | undefined;
    let progressOfOlder: ((done: number, total: number) => void) | undefined;
    // The branch's count is slow (the host reports progress, then cancels it when the session's count is asked for).
    const request = ((method: RequestMethod, params: unknown, onProgress?: (done: number, total: number) => void) => {
      if (method === 'tools/get' && (params as { branchId: string | null }).branchId === 'main') {
        progressOfOlder = onProgress;
        return new Promise((_, reject) => (cancelOlder = reject));
      }
      return host.request(method as 'tools/get', params as never);
    }) as RequestFn;
    const parts: string[] = [];
    const model = new ConversationModel(request, (part) => parts.push(part));
    await model.start(null);
    const older = model.setTools(true, 'branch');
    await settle();
    progressOfOlder?.(4096, 0);
    assert.deepEqual(model.toolsProgress, { branchId: 'main', done: 4096 });
    assert.ok(parts.includes('tools'), 'the tab is redrawn with the progress');
    await model.setTools(true, 'session');
    assert.equal(model.tools?.branchId, null);
    cancelOlder?.(new Error('The request was cancelled.'));
    await older;
    assert.equal(model.error, undefined, 'the cancelled older request is no error to show');
    assert.equal(model.tools?.branchId, null, 'the session’s totals stay');
    assert.equal(model.toolsProgress, undefined);
  });
});
