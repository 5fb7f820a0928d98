/**
 * Search Sessions… in the real extension host: one search over two open files streams its hits into the Search
 * Results view (grouped by file and session, the match highlighted), runs in the worker (dist/searchWorker.js), and
 * opening a hit opens that turn of that branch in the conversation view.
 */
import { strict as assert } from 'node:assert';
import { renameSync } from 'node:fs';
import * as vscode from 'vscode';
import type { SearchOutcome } from '../../src/extension/search/sessionSearch';
import { AdvancedSQLiteSession } from '../../src/store';
import type { WorkerSessionDatabase } from '../../src/store/worker/storeClient';
import type { HostMessage } from '../../src/shared/protocol/conversation';
import { api, askPanel, freshScratchPerTest, waitFor, type Scratch } from './helpers';
import { openDescriptors } from '../support/openDescriptors';

async function write(path: string, sessionId: string, city: string, failed: boolean): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, createTables: true });
  try {
    await s.addItems([
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Hi!' }] },
    ] as never);
    await s.addItems([
      { role: 'user', content: `What is the WEATHER in ${city}?` },
      { type: 'function_call', call_id: `c-${sessionId}`, name: 'get_weather', arguments: JSON.stringify({ city }) },
      {
        type: 'function_call_output',
        call_id: `c-${sessionId}`,
        output: failed ? 'An error occurred while running the tool. Please try again. Error: timeout' : '22°C',
      },
    ] as never);
    await s.createBranchFromTurn(2, 'retry');
    await s.addItems([{ role: 'user', content: `Weather in ${city} tomorrow?` }] as never);
  } finally {
    s.close();
  }
}

/** one.db (Lisbon, its call succeeded) and two.db (Oslo, its call failed), both opened. */
async function openTrips(dir: string): Promise<{ one: string; two: string }> {
  const one = `${dir}/one.db`;
  const two = `${dir}/two.db`;
  await write(one, 'lisbon-trip', 'Lisbon', false);
  await write(two, 'oslo-trip', 'Oslo', true);
  await vscode.commands.executeCommand('agentSessions.openDatabase', one);
  await vscode.commands.executeCommand('agentSessions.openDatabase', two);
  return { one, two };
}

const labelOf = (item: vscode.TreeItem): string => (typeof item.label === 'string' ? item.label : (item.label?.label ?? ''));

describe('Search Sessions', () => {
  const scratchOf = freshScratchPerTest();
  let s: Scratch;
  beforeEach(() => (s = scratchOf()));
  afterEach(async () => {
    await vscode.commands.executeCommand('agentSessions.clearSearchResults');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('searches two databases in the worker, shows the hits grouped and highlighted, and opens a hit at its turn', async () => {
    const a = await api();
    const { one, two } = await openTrips(s.dir);

    const outcome = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'weather');
    assert.ok(outcome, JSON.stringify(a.failures.map((f) => f.message)));
    assert.deepEqual([outcome.files, outcome.cancelled, outcome.errors], [2, false, []]);
    // Per file: main's turn 2 and retry's own turn 2 (the call's arguments do not say "weather").
    assert.equal(outcome.hits, 4);
    const roots = a.search.results.getChildren();
    assert.deepEqual(
      roots.map((n) => labelOf(a.search.results.getTreeItem(n))),
      ['one.db', 'two.db'],
    );
    const hits = a.search.results.hits();
    const lisbon = hits.find((h) => h.dbPath === one && h.hit.branchId === 'main' && h.hit.turn === 2)!;
    const item = a.search.results.getTreeItem(lisbon);
    const label = item.label as vscode.TreeItemLabel;
    assert.equal(label.label, 'What is the WEATHER in Lisbon?');
    assert.deepEqual(label.highlights, [[12, 19]]);
    assert.equal(item.description, 'main · turn 2 · user');
    assert.equal(a.search.view.message?.startsWith('4 hits for "weather" in 2 file(s) and store(s)'), true, a.search.view.message);

    // Turn 1 is shared by retry (it was forked at turn 2): one hit per file, under main, saying so.
    const hello = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'HELLO');
    assert.equal(hello.hits, 2);
    for (const h of a.search.results.hits()) {
      assert.deepEqual([h.hit.branchId, h.hit.turn, h.hit.sharedWith], ['main', 1, ['retry']]);
      assert.match(String(a.search.results.getTreeItem(h).description), /shared with retry$/);
    }

    // Failed calls: only the Oslo output, named by its call.
    const failed = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'is:failed tool:get_weather');
    assert.equal(failed.hits, 1);
    const [f] = a.search.results.hits();
    assert.deepEqual(
      [f!.dbPath, f!.hit.sessionId, f!.hit.itemType, f!.hit.toolName, f!.hit.failed],
      [two, 'oslo-trip', 'function_call_output', 'get_weather', 'tool error'],
    );

    // Opening the hit opens its session at the turn, on the branch that ran it.
    const retryHit = hits.find((h) => h.dbPath === two && h.hit.branchId === 'retry')!;
    await vscode.commands.executeCommand('agentSessions.openSearchHit', retryHit);
    assert.deepEqual(a.failures, []);
    const panel = a.panels.get(two, 'oslo-trip');
    assert.ok(panel, 'the conversation view of oslo-trip is open');
    assert.deepEqual([panel.target.branchId, panel.target.turn], ['retry', 2]);

    // The view's search box: the whole session, each item once; the shown branch's hits first (its shared turn 1
    // included, under retry and retry's own sequence number: branching renumbers the copies, and the view marks that
    // one), then the other branches', under the branch that ran them.
    const db = a.registry.get(two)!.db as WorkerSessionDatabase;
    const retryCopy = (await db.getTurnItems('oslo-trip', 'retry', 1))[0]!.sequenceNumber;
    assert.notEqual(retryCopy, 1);
    const answer = await askPanel(panel, 'search/session', { query: 'HELLO', branchId: 'retry' });
    assert.deepEqual(answer, {
      kind: 'response',
      id: answer.kind === 'response' ? answer.id : 0,
      ok: true,
      result: {
        hits: [
          { branchId: 'retry', turn: 1, sequenceNumber: retryCopy, itemType: 'user', snippet: { text: 'Hello there', ranges: [[0, 5]] } },
        ],
        truncated: false,
      },
    });
    const weatherOnRetry = await askPanel(panel, 'search/session', { query: 'weather', branchId: 'retry' });
    assert.deepEqual(
      weatherOnRetry.kind === 'response' &&
        weatherOnRetry.ok &&
        (weatherOnRetry.result as { hits: { branchId: string; turn: number; snippet: { text: string } }[] }).hits.map((h) => [
          h.branchId,
          h.turn,
          h.snippet.text,
        ]),
      [
        ['retry', 2, 'Weather in Oslo tomorrow?'],
        ['main', 2, 'What is the WEATHER in Oslo?'],
      ],
    );
    // From main, the shared turn is main's own (its sequence number 1), and nothing is elsewhere.
    const helloOnMain = await askPanel(panel, 'search/session', { query: 'HELLO', branchId: 'main' });
    assert.deepEqual(
      helloOnMain.kind === 'response' &&
        helloOnMain.ok &&
        (helloOnMain.result as { hits: { branchId: string; turn: number; sequenceNumber: number }[] }).hits.map((h) => [
          h.branchId,
          h.turn,
          h.sequenceNumber,
        ]),
      [['main', 1, 1]],
    );
    // A new query supersedes the running one: its worker is stopped and its answer says so (the view drops it).
    const webview = panel.panel.webview;
    const post = webview.postMessage.bind(webview);
    const answers = new Map<number, HostMessage>();
    webview.postMessage = (m: HostMessage) => {
      if (m.kind === 'response') answers.set(m.id, m);
      return post(m);
    };
    try {
      const receive = (id: number, query: string) =>
        (panel as unknown as { receive(m: unknown): Promise<void> }).receive({
          kind: 'request',
          id,
          method: 'search/session',
          params: { query, branchId: 'retry' },
        });
      await Promise.all([receive(800_001, 'weather'), receive(800_002, 'hello')]);
      await waitFor(() => answers.has(800_001) && answers.has(800_002), 10_000, 'both answers');
      const [older, newer] = [answers.get(800_001)!, answers.get(800_002)!];
      assert.match(older.kind === 'response' && !older.ok ? older.error : 'answered', /A newer search replaced this one/);
      assert.equal(newer.kind === 'response' && newer.ok && (newer.result as { hits: unknown[] }).hits.length, 1);
    } finally {
      webview.postMessage = post;
    }
    const bad = await askPanel(panel, 'search/session', { query: 'role:robot', branchId: 'retry' });
    assert.match(bad.kind === 'response' && !bad.ok ? bad.error : '', /Unknown role "robot"/);
  });

  it('says when it stopped at the hit limit, lists the files it did not search, and offers more', async () => {
    const a = await api();
    const { two } = await openTrips(s.dir);
    const capped = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'weather', 2);
    assert.deepEqual([capped.hits, capped.capped, capped.notSearched], [2, true, [two]], JSON.stringify(a.failures));
    assert.match(
      a.search.view.message ?? '',
      /^2 hits for "weather" — stopped at the limit of 2; more may exist, and 1 file\(s\) were not searched/,
    );
    const roots = a.search.results.getChildren().map((n) => a.search.results.getTreeItem(n));
    assert.deepEqual(
      roots.map((i) => [labelOf(i), i.description ?? null]),
      [
        ['one.db', '2 hits'],
        ['two.db', 'not searched: the hit limit was reached first'],
        ['More hits not shown: search for up to 10', null],
      ],
    );
    // The last row runs the same search with the higher limit.
    const more = roots[2]!.command!;
    const again = await vscode.commands.executeCommand<SearchOutcome>(more.command, ...(more.arguments ?? []));
    assert.deepEqual([again.hits, again.capped, again.notSearched], [4, false, []]);
    assert.match(a.search.view.message ?? '', /^4 hits for "weather" in 2 file\(s\)/);
  });

  it('a new search replaces the running one: only its hits are shown', async () => {
    const a = await api();
    await write(`${s.dir}/four.db`, 'y', 'Paris', false);
    await vscode.commands.executeCommand('agentSessions.openDatabase', `${s.dir}/four.db`);
    const first = vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'hello');
    const second = await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'paris');
    await first;
    assert.deepEqual(a.failures, []);
    assert.equal(second.hits, 3);
    assert.deepEqual(
      a.search.results.hits().map((h) => h.hit.snippet.text.includes('Paris')),
      [true, true, true],
    );
    assert.match(a.search.view.message ?? '', /^3 hits for "paris"/);
  });

  it('says what is wrong with a query instead of searching', async () => {
    const a = await api();
    await write(`${s.dir}/three.db`, 'x', 'Rome', false);
    await vscode.commands.executeCommand('agentSessions.openDatabase', `${s.dir}/three.db`);
    const r = await vscode.commands.executeCommand('agentSessions.searchSessions', 'is:broken');
    assert.equal(r, undefined);
    assert.match(a.failures.at(-1)?.message ?? '', /Unknown filter "is:broken"/);
  });

  it("closes the search worker's kept connection to a database when the database is closed", async () => {
    // The search worker keeps its connections for the next search (searchWorker.ts); the registry's close must reach
    // it. While the store worker holds the file, SQLite parks a closed connection's descriptor instead of closing it
    // (POSIX locks are the process's), so only the count once everything is closed tells a kept connection apart.
    const a = await api();
    const path = `${s.dir}/five.db`;
    await write(path, 'z', 'Madrid', false);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    assert.ok(openDescriptors(path).length > 0, 'the store worker holds the file');
    assert.equal((await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'madrid')).hits, 3);
    assert.deepEqual(a.failures, []);
    await vscode.commands.executeCommand('agentSessions.closeDatabase', { kind: 'database', dbPath: path });
    await waitFor(() => openDescriptors(path).length === 0, 10_000, 'every connection to the closed file closed');
  });

  it("closes the search worker's kept connection to a file another file was moved over", async () => {
    // A connection left open on the replaced file keeps that file's -shm in use beside the new one (SQLite shares it by
    // name): the registry drops its own connection when it sees the replacement, and the search worker's must go too.
    const a = await api();
    const path = `${s.dir}/six.db`;
    await write(path, 'z', 'Madrid', false);
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    assert.equal((await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'madrid')).hits, 3);
    await write(`${s.dir}/other.db`, 'y', 'Paris', false);
    renameSync(`${s.dir}/other.db`, path);
    await waitFor(() => openDescriptors(`${path} (deleted)`).length === 0, 10_000, 'no connection left on the replaced file');
    await waitFor(() => a.registry.get(path)?.db !== undefined, 10_000, 'the registry to open the new file');
    assert.equal((await vscode.commands.executeCommand<SearchOutcome>('agentSessions.searchSessions', 'paris')).hits, 3);
    assert.deepEqual(a.failures, []);
  });
});
