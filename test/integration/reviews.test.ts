/**
 * Reviews in the extension host (docs/reviews.md, docs/datasets.md): the review store in the extension's storage by
 * default (never beside or inside the session file), beside the file when the setting says so, and *Export Dataset
 * from Reviews…* building a checked SFT file in the store worker from a session's verdicts.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../src/store';
import { checkJsonl } from '../../src/store/datasets/datasetChecks';
import { contentKey } from '../../src/store/reviews/contentKey';
import { api, askPanel, childRows, closeAll, scratch, type Scratch } from './helpers';
import type { ReviewQueueState } from '../../src/extension/reviews/reviewQueue';
import type { SearchOutcome } from '../../src/extension/search/sessionSearch';

describe('reviews in the extension host', function () {
  this.timeout(60_000);
  let s: Scratch;
  let path: string;
  before(async () => {
    s = scratch();
    path = join(s.dir, 'reviewed.db');
    const session = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
    await session.addItems([{ role: 'user', content: 'Weather in Oslo?' }, { role: 'assistant', content: 'Rain, 7 °C.' } as never]);
    await session.addItems([{ role: 'user', content: 'Umbrella?' }, { role: 'assistant', content: 'No.' } as never]);
    session.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('agentSessions').update('reviews.location', undefined, vscode.ConfigurationTarget.Global);
    await closeAll(await api());
    s.cleanup();
  });

  it("keeps reviews in the extension's storage by default and beside the file when asked; exports a checked dataset", async () => {
    const a = await api();
    const where = a.reviews.pathFor(path, false);
    assert.ok(!where.startsWith(dirname(path)), 'not beside the session file by default');
    const store = await a.reviews.storeFor(path, false);
    const db = openSessionDatabase(path, { readonly: true });
    const [user] = db.getTurnItems('trip', 'main', 1);
    db.close();
    assert.ok(user && !user.corrupt);
    await store.call(
      'setTurnReview',
      { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: contentKey(user.item) },
      { verdict: 'good' },
    );
    const out = join(s.dir, 'trip-sft.jsonl');
    const written = await vscode.commands.executeCommand<string>(
      'agentSessions.exportDataset',
      { dbPath: path, sessionId: 'trip' },
      { format: 'sft', redact: false, uri: out, confirm: true },
    );
    assert.equal(written, out);
    const checked = checkJsonl('sft', readFileSync(out, 'utf8'));
    assert.deepEqual([checked.records, checked.problems], [1, []]);
    await store.call('setTurnReview', { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: contentKey(user.item) }, { verdict: null });

    await vscode.workspace.getConfiguration('agentSessions').update('reviews.location', 'beside-file', vscode.ConfigurationTarget.Global);
    assert.equal(a.reviews.pathFor(path, false), `${path}.reviews.db`);
    // Reading never writes (issue 46): listing, expanding and viewing create no review store beside the file.
    const beside = await a.reviews.storeFor(path, false);
    const fileRow = (await childRows(a)).find((r) => r.node.kind === 'database' && r.node.dbPath === path);
    assert.ok(fileRow, 'the file is in the tree');
    const [sessionRow] = await childRows(a, fileRow.node);
    const [branchRow] = await childRows(a, sessionRow!.node);
    assert.equal((await childRows(a, branchRow!.node)).length, 2, 'the two turns, with their review marks read');
    const panel = a.panels.open({ dbPath: path, sessionId: 'trip' });
    const reviewsOfMain = await askPanel(panel, 'reviews/get', { branchId: 'main' });
    assert.ok(!('error' in reviewsOfMain && reviewsOfMain.error), JSON.stringify(reviewsOfMain));
    assert.deepEqual(await beside.call('turnReviews', 'trip'), []);
    assert.ok(!existsSync(`${path}.reviews.db`), 'no review store was created by reading');
    // The first verdict creates it.
    const ref = { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: contentKey(user.item) };
    await beside.call('setTurnReview', ref, { verdict: 'good' });
    assert.ok(existsSync(`${path}.reviews.db`));
    assert.equal((await beside.call('turnReviews', 'trip'))[0]?.verdict, 'good');
    await beside.call('setTurnReview', ref, { verdict: null });
    // A server store's reviews stay in the extension's storage whatever the setting says.
    assert.equal(a.reviews.pathFor('postgresql://me@db.example:5432/agents', true), where);
  });

  it('Export Dataset from Reviews takes filters: a verdict, and how many earlier turns go into the context', async () => {
    const a = await api();
    const store = await a.reviews.storeFor(path);
    const db = openSessionDatabase(path, { readonly: true });
    const user2 = db.getTurnItems('trip', 'main', 2)[0];
    db.close();
    assert.ok(user2 && !user2.corrupt);
    const ref = { sessionId: 'trip', branchId: 'main', turn: 2, turnKey: contentKey(user2.item) };
    await store.call('setTurnReview', ref, { verdict: 'good' });
    const exportEval = async (name: string, filters: object): Promise<{ input: { role: string }[] }[]> => {
      const out = join(s.dir, name);
      const written = await vscode.commands.executeCommand<string | undefined>(
        'agentSessions.exportDataset',
        { dbPath: path, sessionId: 'trip' },
        { format: 'eval', redact: false, uri: out, confirm: true, filters },
      );
      if (written === undefined) return [];
      return readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { input: { role: string }[] });
    };
    try {
      const all = await exportEval('eval-all.jsonl', {});
      assert.deepEqual(
        all.map((r) => r.input.map((m) => m.role)),
        [['user', 'assistant', 'user']],
      );
      const bare = await exportEval('eval-bare.jsonl', { contextTurns: 0 });
      assert.deepEqual(
        bare.map((r) => r.input.map((m) => m.role)),
        [['user']],
      );
      assert.deepEqual(await exportEval('eval-bad.jsonl', { verdict: 'bad' }), [], 'no bad turn: nothing written');
    } finally {
      await store.call('setTurnReview', ref, { verdict: null });
    }
  });

  it('Review Next walks the turns a query matches: a verdict in the view goes on to the next, search finds it', async () => {
    const a = await api();
    await vscode.workspace.getConfiguration('agentSessions').update('reviews.location', undefined, vscode.ConfigurationTarget.Global);
    const first = await vscode.commands.executeCommand<ReviewQueueState>('agentSessions.reviewNext', 'reviewed:no');
    assert.deepEqual([first.position, first.total, first.current?.turn, first.current?.branchId], [1, 2, 1, 'main']);
    const panel = a.panels.open({ dbPath: path, sessionId: 'trip' });
    // G in the view on the queued turn: the verdict is kept and the queue shows turn 2.
    const answer = await askPanel(panel, 'review/set', { branchId: 'main', turn: 1, change: { verdict: 'good' } });
    assert.equal(answer.kind, 'response');
    assert.ok(!('error' in answer && answer.error), JSON.stringify(answer));
    assert.deepEqual([a.reviewQueue.state.position, a.reviewQueue.state.current?.turn], [2, 2], 'the verdict moved the queue on');
    const second = await vscode.commands.executeCommand<ReviewQueueState>('agentSessions.reviewNext');
    // Review Next without a query skips: from turn 2 (shown after the verdict) to the end.
    assert.deepEqual([second.position, second.current], [0, null], 'the queue went on by itself, then Review Next ended it');
    const bad = await askPanel(panel, 'review/set', { branchId: 'main', turn: 2, change: { verdict: 'bad', addTags: ['too-slow'] } });
    assert.equal(bad.kind, 'response');
    // The sessions tree marks the reviewed turns, with their tags.
    const session = { kind: 'session' as const, dbPath: path, sessionId: 'trip' };
    const main = (await childRows(a, session)).find((r) => r.label.startsWith('main'));
    assert.ok(main, 'the main branch row');
    const turns = (await childRows(a, main.node)).map((r) => `${r.label} | ${r.description}`);
    assert.ok(
      turns.some((r) => /^Turn 1 ✓ \|/.test(r)),
      turns.join('\n'),
    );
    assert.ok(
      turns.some((r) => /^Turn 2 ✗ \| .*#too-slow/.test(r)),
      turns.join('\n'),
    );
    const found = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'is:bad tag:too-slow');
    assert.equal(found.hits, 1);
    assert.deepEqual(
      a.search.results.hits().map((h) => [h.hit.branchId, h.hit.turn, h.hit.itemType]),
      [['main', 2, 'user']],
    );
    const none = await vscode.commands.executeCommand<ReviewQueueState>('agentSessions.reviewNext', 'reviewed:no');
    assert.deepEqual([none.total, none.current], [0, null], 'every turn is reviewed now');
  });

  it('a correction becomes a branch when asked: the turn again, ending with the corrected answer', async () => {
    const a = await api();
    const panel = a.panels.open({ dbPath: path, sessionId: 'trip' });
    const kept = await askPanel(panel, 'correction/set', { branchId: 'main', turn: 2, itemIndex: 1, text: 'Yes: rain all day.' });
    assert.ok(kept.kind === 'response' && !('error' in kept && kept.error), JSON.stringify(kept));
    const made = await askPanel(panel, 'correction/branch', {
      fromBranchId: 'main',
      branchTurnNumber: 2,
      ranOn: 'main',
      turn: 2,
      itemIndex: 1,
      name: 'umbrella-fixed',
    });
    assert.ok(made.kind === 'response' && !('error' in made && made.error), JSON.stringify(made));
    const db = openSessionDatabase(path, { readonly: true });
    try {
      const tree = db.getBranchTree('trip');
      assert.deepEqual(
        tree.map((b) => [b.branchId, b.parentBranchId, b.forkTurn]),
        [
          ['main', null, null],
          ['umbrella-fixed', 'main', 2],
        ],
      );
      const turn2 = db.getTurnItems('trip', 'umbrella-fixed', 2).map((i) => (i.corrupt ? null : i.item));
      assert.deepEqual(turn2, [
        { role: 'user', content: 'Umbrella?' },
        { role: 'assistant', content: 'Yes: rain all day.' },
      ]);
      // The original answer stays where it was: the history is not rewritten.
      const main2 = db.getTurnItems('trip', 'main', 2).map((i) => (i.corrupt ? null : i.item));
      assert.deepEqual(main2[1], { role: 'assistant', content: 'No.' });
    } finally {
      db.close();
    }
    // No correction, no branch: the request says why.
    const none = await askPanel(panel, 'correction/branch', {
      fromBranchId: 'main',
      branchTurnNumber: 1,
      ranOn: 'main',
      turn: 1,
      itemIndex: 1,
      name: 'nothing-here',
    });
    assert.match(JSON.stringify(none), /has no correction to continue from/);
  });
});
