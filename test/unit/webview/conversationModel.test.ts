/**
 * The view's data flow against the host's real request handling over a real file: on a notice the view
 * re-requests only what it shows, and a reply to a request issued before a newer notice never overwrites newer
 * data. Only the transport is simulated, so replies can be held back and delivered late, as a busy host would.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { itemView, sessionView, tables, turnPage } from '../../../src/extension/conversationData';
import { handleRequest, type RequestHandlers } from '../../../src/extension/webviewRequests';
import { ROW_CHANGES, type RequestMethod } from '../../../src/shared/protocol';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../src/store';
import { ConversationModel, chooseBranch, refreshPlan, type RequestFn } from '../../../webview/logic/conversationModel';
import { tempDir } from '../../support/tempFiles';

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

/**
 * The host's side as the panel answers: the real builders and parameter checks over a read-only connection. Each
 * answer is read when the request arrives; while `holding`, its delivery waits for `release()`.
 */
class TestHost {
  readonly methods: RequestMethod[] = [];
  holding = false;
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
        branchTree: () => this.db.getBranchTree(SESSION),
        problem: undefined,
      }),
    'turns/get': (p) => turnPage(this.db, SESSION, p.branchId, p.afterTurn, p.limit),
    'turn/items': (p) => this.db.getTurnItems(SESSION, p.branchId, p.turn).map(itemView),
    'tables/get': (p) => tables(this.db, SESSION, p.branchId, this.db.getBranchTree(SESSION)),
    'branch/create': () => assert.fail('not in these tests'),
    'branch/switch': () => assert.fail('not in these tests'),
    'branch/delete': () => assert.fail('not in these tests'),
    'run/start': () => assert.fail('not in these tests'),
    'run/stop': () => assert.fail('not in these tests'),
  };

  readonly request = ((method: RequestMethod, params: unknown) => {
    this.methods.push(method);
    const answer = handleRequest(this.handlers, method, params);
    if (!this.holding) return answer;
    return new Promise<unknown>((resolve) => this.held.push(() => resolve(answer)));
  }) as RequestFn;

  /** Delivers the held answers, oldest first, and waits until the view has handled them. */
  async release(): Promise<void> {
    this.holding = false;
    for (const deliver of this.held.splice(0)) deliver();
    await settle();
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
    assert.deepEqual(host.take(), ['view/ready', 'session/get', 'turns/get', 'turn/items']);
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
    assert.deepEqual(host.take(), ['session/get', 'turns/get', 'turn/items', 'tables/get']);
    assert.equal(model.turns.length, 4);
    assert.equal(model.session?.branches[0]?.userTurns, 4);
    assert.equal(model.selectedTurn?.turn, 1, 'the selection stays');

    await model.noticeReceived({ seq: 4, what: ['database'] });
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
    assert.deepEqual(refreshPlan(['current-branch'], true), { session: true, turns: false, items: false, tables: false });
    assert.deepEqual(refreshPlan(['usage'], false), { session: false, turns: false, items: false, tables: false });
    assert.deepEqual(refreshPlan(['database'], true), { session: true, turns: true, items: true, tables: true });
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
});
