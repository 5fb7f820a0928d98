/**
 * getBranchTree: parents and fork turns derived from shared message rows. Expectations come from the branching the
 * test performed (which branch, which turn) and from the model of copied prefixes.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase, type BranchNode } from '../../../../src/store';
import { branchTreeByRows } from '../../../support/branchTreeOracle';
import { copyFixture } from '../../../support/tempFiles';

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'conformance');
import { SessionModel, TempFolder, mk, writeBranchedFile } from './inspectorFixtures';

describe('SessionDatabase.getBranchTree', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  /** Compares the tree with the model and the branching performed: `origins` maps branch → [parent, fork turn]. */
  function assertTree(tree: BranchNode[], m: SessionModel, origins: Record<string, [string | null, number | null]>): void {
    assert.deepEqual(
      tree.map((b) => b.branchId),
      m.creationOrder,
      'branches in creation order',
    );
    for (const node of tree) {
      const origin = origins[node.branchId];
      assert.ok(origin, `an expectation for ${node.branchId}`);
      const [parent, fork] = origin;
      const parentItems = parent === null ? [] : m.branch(parent);
      // The copied prefix: the leading items of this branch that are the very same items as the parent's.
      const own = m.branch(node.branchId);
      let shared = 0;
      while (parent !== null && shared < own.length && parentItems[shared] === own[shared]) shared++;
      assert.deepEqual(
        { parentBranchId: node.parentBranchId, forkTurn: node.forkTurn, sharedItemCount: node.sharedItemCount },
        { parentBranchId: parent, forkTurn: fork, sharedItemCount: shared },
        node.branchId,
      );
      assert.equal(node.messageCount, own.length, `${node.branchId} messageCount`);
      assert.equal(node.userTurns, m.userTurns(node.branchId), `${node.branchId} userTurns`);
    }
  }

  it('derives main, a branch from turn 3, a branch of that branch, a branch from turn 1, and one from a copy', async () => {
    const m = await writeBranchedFile(folder);
    const tree = folder.inspect().getBranchTree('branched');
    assertTree(tree, m, {
      main: [null, null],
      alt: ['main', 3],
      sub: ['alt', 4],
      fresh: [null, 1], // branched from turn 1 with nothing before it: shares nothing
      late: ['main', 2], // from alt at 2, but its prefix is main's turn 1, which main (created first) holds
    });
    assert.equal(tree.find((b) => b.branchId === 'alt')?.sharedItemCount, 6, 'main turns 1-2: 2 + 4 items');
    assert.equal(tree.find((b) => b.branchId === 'sub')?.sharedItemCount, 8, "alt's turns 1-3");
  });

  it('counts and times agree with listBranches()', async () => {
    await writeBranchedFile(folder);
    const s = folder.track(new AdvancedSQLiteSession({ sessionId: 'branched', dbPath: folder.path() }));
    const expected = new Map((await s.listBranches()).map((b) => [b.branchId, b]));
    const tree = folder.inspect().getBranchTree('branched');
    assert.equal(tree.length, expected.size);
    for (const node of tree) {
      const b = expected.get(node.branchId);
      assert.ok(b);
      assert.deepEqual([node.messageCount, node.userTurns, node.createdAt], [b.messageCount, b.userTurns, b.createdAt]);
      assert.match(node.createdAt ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    }
  });

  it('a branch from turn 1 that copied turn-0 items has main as its parent, fork turn 1', async () => {
    const m = new SessionModel(folder.session({ sessionId: 'pre' }));
    await m.add(mk.system('be brief'), mk.call('setup', 'c0'), mk.output('c0'));
    await m.add(mk.user('first'), mk.assistant('one'));
    await m.add(mk.user('second'), mk.assistant('two'));
    const prefix = await m.branchFrom(1, 'restart');
    assert.equal(prefix.length, 3, 'the three turn-0 items are copied');
    await m.add(mk.user('first, again'));
    assertTree(folder.inspect().getBranchTree('pre'), m, { main: [null, null], restart: ['main', 1] });
  });

  it('after the parent is deleted, its child attaches to the surviving ancestor at the turn they still share', async () => {
    const m = new SessionModel(folder.session({ sessionId: 'del' }));
    for (let t = 1; t <= 4; t++) await m.add(mk.user(`main ${t}`), mk.assistant(`a${t}`));
    await m.branchFrom(3, 'alt');
    await m.add(mk.user('alt 3'), mk.assistant('x3'));
    await m.add(mk.user('alt 4'));
    await m.branchFrom(4, 'sub');
    await m.add(mk.user('sub 4'));
    await m.switchTo('main');
    await m.session.deleteBranch('alt');
    m.branches.delete('alt');
    m.creationOrder.splice(m.creationOrder.indexOf('alt'), 1);
    const tree = folder.inspect().getBranchTree('del');
    // sub still starts with main's turns 1-2 (4 items), then alt's turn 3, which only sub holds now.
    assertTree(tree, m, { main: [null, null], sub: ['main', 3] });
    assert.equal(tree.find((b) => b.branchId === 'sub')?.sharedItemCount, 4);
  });

  it('unknown session → []', async () => {
    await writeBranchedFile(folder);
    assert.deepEqual(folder.inspect().getBranchTree('nobody'), []);
  });

  describe('the same answers as the row-by-row derivation it replaced (test/support/branchTreeOracle.ts)', () => {
    function sameAsOracle(path: string, sessionId: string, what: string): BranchNode[] {
      const tree = folder.inspect(path).getBranchTree(sessionId);
      const raw = openDatabase(path, { readonly: true });
      try {
        assert.deepEqual(tree, branchTreeByRows(raw, sessionId), what);
      } finally {
        raw.close();
      }
      return tree;
    }

    it('on the Python-written fixtures', () => {
      for (const [name, sessions] of [
        ['ref-basic', ['basic_session']],
        ['ref-multisession', ['alice', 'bob']],
      ] as const) {
        const path = copyFixture(join(FIXTURES, `${name}.db`), folder.dir);
        for (const sid of sessions) sameAsOracle(path, sid, `${name} ${sid}`);
      }
    });

    it('on branches at turn 1, at the last turn, nested, from a copy, after deletions, and with corrupt rows', async () => {
      const path = folder.path('shapes.db');
      const s = folder.track(new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true }));
      await s.addItems([mk.system('turn 0 item')]);
      for (let t = 1; t <= 6; t++) await s.addItems([mk.user(`q${t}`), mk.call('f', `c${t}`), mk.output(`c${t}`), mk.assistant(`a${t}`)]);
      await s.createBranchFromTurn(1, 'at-one');
      await s.addItems([mk.user('fresh start')]);
      await s.switchToBranch('main');
      await s.createBranchFromTurn(6, 'at-last');
      await s.addItems([mk.user('last again'), mk.assistant('ok')]);
      await s.createBranchFromTurn(3, 'nested');
      await s.addItems([mk.user('nested q'), mk.assistant('nested a')]);
      await s.createBranchFromTurn(2, 'from-copy');
      await s.addItems([mk.user('copy q')]);
      await s.switchToBranch('main');
      await s.createBranchFromTurn(4, 'doomed');
      await s.addItems([mk.user('doomed q')]);
      await s.addItems([mk.user('doomed q2')]);
      await s.createBranchFromTurn(5, 'orphan');
      await s.addItems([mk.user('orphan q')]);
      await s.switchToBranch('main');
      await s.deleteBranch('doomed');
      await s.createBranchFromTurn(5, 'empty-fork');
      await s.switchToBranch('main');
      s.close();
      // A corrupt message and a structure row pointing nowhere: the tree reads structure rows only, as before.
      const raw = openDatabase(path);
      raw.exec("UPDATE agent_messages SET message_data = '{not json' WHERE id = 3");
      raw
        .prepare(
          "INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number) VALUES ('s', 99999, 'main', 'assistant', 100000, 6, 6)",
        )
        .run();
      raw.close();
      const tree = sameAsOracle(path, 's', 'generated shapes');
      assert.deepEqual(
        tree.map((b) => [b.branchId, b.parentBranchId, b.forkTurn]),
        [
          ['main', null, null],
          ['at-one', 'main', 1],
          ['at-last', 'main', 6],
          ['nested', 'main', 3],
          ['from-copy', 'main', 2],
          ['orphan', 'main', 4],
          ['empty-fork', 'main', 5],
        ],
      );
    });
  });
});
