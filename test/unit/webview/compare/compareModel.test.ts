/**
 * The compare view's model against a host written here: a comparison of `rowCount` rows (some of which differ), its
 * verdicts kept in memory. Checks what the model asks the host for and what it keeps: pages read once and in order,
 * the next difference found across pages not read yet, a reload keeping what was shown, an older load's late answer
 * dropped, verdicts set and taken back, and failures said without losing the rows.
 */
import { strict as assert } from 'node:assert';
import type { CompareMethod, CompareRequests } from '../../../../src/shared/protocol/compare';
import type { CompareRowView, CompareVerdictView, CompareVerdictsView } from '../../../../src/shared/protocol/compareViews';
import { COMPARE_PAGE, CompareModel, type ComparePart, type CompareRequest } from '../../../../webview/compare/logic/compareModel';

const SHARED_TURNS = 2;

interface Call {
  method: CompareMethod;
  params: unknown;
}

/** A comparison in memory, answering as the compare panel does. */
class Host {
  readonly calls: Call[] = [];
  verdicts: CompareVerdictView[] = [];
  /** Methods that fail (with this message) until cleared. */
  readonly failing = new Map<CompareMethod, string>();
  /** When set, `compare/get` waits for this before it answers. */
  gate: Promise<void> | undefined;
  /** The turns every column shares: the rows start after them, so a change shifts every row's turn. */
  sharedTurns = SHARED_TURNS;

  constructor(
    public rowCount: number,
    public differing: Set<number>,
  ) {}

  row(index: number): CompareRowView {
    return { index, turn: this.sharedTurns + 1 + index, sides: [], differs: this.differing.has(index) };
  }

  verdictsView(): CompareVerdictsView {
    return { available: true, reason: null, verdicts: [...this.verdicts], tallies: [] };
  }

  readonly request = (async (method: CompareMethod, params: unknown) => {
    this.calls.push({ method, params });
    const failure = this.failing.get(method);
    if (failure) throw new Error(failure);
    switch (method) {
      case 'compare/get': {
        const rowCount = this.rowCount;
        await this.gate;
        return { columns: [], sharedTurns: this.sharedTurns, sharedBy: 'fork', rowCount };
      }
      case 'compare/rows': {
        const { offset, limit } = params as CompareRequests['compare/rows']['params'];
        const end = Math.min(this.rowCount, offset + limit);
        return { rows: Array.from({ length: Math.max(0, end - offset) }, (_, i) => this.row(offset + i)) };
      }
      case 'compare/summary':
        return { columns: [null] };
      case 'compare/verdicts':
        return this.verdictsView();
      case 'compare/verdict': {
        const { column, turn, outcome, reason } = params as CompareRequests['compare/verdict']['params'];
        this.verdicts = this.verdicts.filter((v) => v.column !== column || v.turn !== turn);
        if (outcome) this.verdicts.push({ column, turn, outcome, reason });
        return this.verdictsView();
      }
      default:
        throw new Error(`the model should not ask for ${method}`);
    }
  }) as CompareRequest;

  /** The `compare/rows` requests made since the last call, as `offset+limit`. */
  takeRowRequests(): string[] {
    const rows = this.calls
      .filter((c) => c.method === 'compare/rows')
      .map((c) => c.params as { offset: number; limit: number })
      .map((p) => `${p.offset}+${p.limit}`);
    this.calls.length = 0;
    return rows;
  }
}

function modelOf(host: Host): { model: CompareModel; drawn: ComparePart[] } {
  const drawn: ComparePart[] = [];
  return { model: new CompareModel(host.request, (part) => drawn.push(part)), drawn };
}

describe('compare model', () => {
  it("loads the comparison with its first page, then the verdicts, then the columns' totals", async () => {
    const host = new Host(55, new Set([3]));
    const { model, drawn } = modelOf(host);
    await model.load();
    assert.deepEqual(
      host.calls.map((c) => c.method),
      ['compare/get', 'compare/rows', 'compare/verdicts', 'compare/summary'],
    );
    assert.deepEqual(host.takeRowRequests(), [`0+${COMPARE_PAGE}`]);
    assert.deepEqual(drawn, ['summary', 'rows', 'verdicts', 'summary']);
    assert.equal(model.rows.length, COMPARE_PAGE);
    assert.deepEqual(model.summary, { columns: [null] });
    assert.equal(model.hasMore, true);
    assert.equal(model.error, undefined);
  });

  it('reads each further page once, even when asked twice at a time, and stops at the last row', async () => {
    const host = new Host(COMPARE_PAGE * 2 + 5, new Set());
    const { model } = modelOf(host);
    await model.load();
    host.takeRowRequests();
    await Promise.all([model.loadMore(), model.loadMore()]);
    assert.deepEqual(host.takeRowRequests(), [`${COMPARE_PAGE}+${COMPARE_PAGE}`]);
    await model.loadMore();
    assert.deepEqual(host.takeRowRequests(), [`${COMPARE_PAGE * 2}+${COMPARE_PAGE}`]);
    assert.equal(model.rows.length, COMPARE_PAGE * 2 + 5);
    assert.deepEqual(
      model.rows.map((r) => r.index),
      Array.from({ length: COMPARE_PAGE * 2 + 5 }, (_, i) => i),
    );
    assert.equal(model.hasMore, false);
    await model.loadMore();
    assert.deepEqual(host.takeRowRequests(), [], 'nothing left to read');
  });

  it('finds the next difference on a page not read yet, and the previous one without reading', async () => {
    const host = new Host(100, new Set([2, 45, 47]));
    const { model, drawn } = modelOf(host);
    await model.load();
    host.takeRowRequests();

    assert.equal(await model.nextDifference(1), true);
    assert.equal(model.focused, 2);
    assert.deepEqual(host.takeRowRequests(), [], 'row 2 was on the first page');

    assert.equal(await model.nextDifference(1), true);
    assert.equal(model.focused, 45);
    assert.deepEqual(host.takeRowRequests(), [`${COMPARE_PAGE}+${COMPARE_PAGE}`, `${COMPARE_PAGE * 2}+${COMPARE_PAGE}`]);
    assert.equal(drawn.at(-1), 'focus');

    assert.equal(await model.nextDifference(-1), true);
    assert.equal(model.focused, 2, 'back over the rows between');
    assert.equal(await model.nextDifference(-1), false, 'none before the first');
    assert.equal(model.focused, 2);

    model.focus(47);
    assert.equal(await model.nextDifference(1), false, 'none after the last: read to the end to know');
    assert.equal(model.focused, 47);
    assert.equal(model.rows.length, 100);
    assert.equal(model.hasMore, false);
  });

  it('reloads as many rows as were shown, and keeps the focus on a row that still exists', async () => {
    const host = new Host(100, new Set());
    const { model } = modelOf(host);
    await model.load();
    await model.loadMore();
    await model.loadMore();
    model.focus(55);
    host.takeRowRequests();

    await model.load();
    // Up to two pages with the comparison, then the rest of what was shown.
    assert.deepEqual(host.takeRowRequests(), [`0+${COMPARE_PAGE * 2}`, `${COMPARE_PAGE * 2}+${COMPARE_PAGE}`]);
    assert.equal(model.rows.length, COMPARE_PAGE * 3);
    assert.equal(model.focused, 55);

    // Fewer rows now (the longest column lost turns): the focus moves to the last one.
    host.rowCount = 30;
    await model.load();
    assert.equal(model.rows.length, 30);
    assert.equal(model.focused, 29);
    assert.equal(model.hasMore, false);
  });

  it('drops the answer of a load that a newer one overtook', async () => {
    const host = new Host(10, new Set());
    const { model } = modelOf(host);
    let open!: () => void;
    host.gate = new Promise((resolve) => (open = resolve));
    const older = model.load();
    // The newer load reads after the comparison changed; the older one's answer (10 rows) comes in last.
    host.gate = undefined;
    host.rowCount = 4;
    await model.load();
    assert.equal(model.view?.rowCount, 4);
    open();
    await older;
    assert.equal(model.view?.rowCount, 4, 'the older answer is not shown');
    assert.equal(model.rows.length, 4);
  });

  it('sets a verdict, takes it back when the same one is set again, and keeps the others', async () => {
    const host = new Host(5, new Set([0]));
    const { model } = modelOf(host);
    await model.load();
    await model.judge(1, 3, 'left');
    await model.judge(2, 3, 'tie');
    assert.equal(model.verdictOf(1, 3), 'left');
    assert.equal(model.verdictOf(2, 3), 'tie');
    await model.judge(1, 3, 'right');
    assert.equal(model.verdictOf(1, 3), 'right', 'another verdict replaces it');
    await model.judge(1, 3, 'right');
    assert.equal(model.verdictOf(1, 3), undefined, 'the same verdict again takes it back');
    assert.deepEqual(host.verdicts, [{ column: 2, turn: 3, outcome: 'tie', reason: '' }]);
    const sent = host.calls.filter((c) => c.method === 'compare/verdict').map((c) => (c.params as { outcome: unknown }).outcome);
    assert.deepEqual(sent, ['left', 'tie', 'right', null]);
  });

  it('says why a verdict was not kept, and shows the ones the host has', async () => {
    const host = new Host(5, new Set());
    const { model, drawn } = modelOf(host);
    await model.load();
    await model.judge(1, 3, 'left');
    host.failing.set('compare/verdict', 'the review store is read-only');
    drawn.length = 0;
    await model.judge(1, 3, 'tie');
    assert.equal(model.error, 'the review store is read-only');
    assert.equal(model.verdictOf(1, 3), 'left');
    assert.deepEqual(drawn, ['error', 'verdicts']);
  });

  it('reports a failed load and keeps the rows; verdicts that cannot be read say why', async () => {
    const host = new Host(5, new Set());
    const { model } = modelOf(host);
    await model.load();
    host.failing.set('compare/get', 'the database was closed');
    await model.load();
    assert.equal(model.error, 'the database was closed');
    assert.equal(model.rows.length, 5);

    host.failing.clear();
    host.failing.set('compare/verdicts', 'columns of different sessions');
    await model.load();
    assert.equal(model.error, undefined, 'a load that works clears the error');
    assert.deepEqual(model.verdicts, { available: false, reason: 'columns of different sessions', verdicts: [], tallies: [] });
    assert.deepEqual(model.summary, { columns: [null] }, 'the totals are read all the same');
  });

  it('focuses only a row it has read', async () => {
    const host = new Host(COMPARE_PAGE + 10, new Set());
    const { model, drawn } = modelOf(host);
    await model.load();
    drawn.length = 0;
    model.focus(COMPARE_PAGE);
    model.focus(-1);
    assert.equal(model.focused, -1);
    model.focus(COMPARE_PAGE - 1);
    assert.equal(model.focused, COMPARE_PAGE - 1);
    assert.deepEqual(drawn, ['focus']);
  });

  it('keeps the focus on its turn when a reload shifts the rows, and on the nearest row when the turn has none', async () => {
    const host = new Host(10, new Set());
    const { model } = modelOf(host);
    await model.load();
    model.focus(4);
    const turn = model.rows[4]!.turn;
    // Another process wrote: one more turn is shared, so every row starts a turn later.
    host.sharedTurns += 1;
    await model.load();
    assert.equal(model.rows[model.focused]?.turn, turn, 'the same turn, one row up');
    assert.equal(model.focused, 3);
    // The shared turns now reach past the focused one: the first row after it.
    host.sharedTurns = turn + 2;
    await model.load();
    assert.equal(model.focused, 0);
    model.focus(model.rows.length - 1);
    host.rowCount = 3;
    await model.load();
    assert.equal(model.focused, 2, 'the rows end before it: the last one');
    host.rowCount = 0;
    await model.load();
    assert.equal(model.focused, -1, 'no rows, no focus');
  });

  it('finds the row of a turn, or the nearest one read', async () => {
    const host = new Host(COMPARE_PAGE + 10, new Set());
    const { model } = modelOf(host);
    assert.equal(model.indexOfTurn(SHARED_TURNS + 1), -1, 'no rows read yet');
    await model.load();
    assert.equal(model.indexOfTurn(SHARED_TURNS + 1), 0);
    assert.equal(model.indexOfTurn(SHARED_TURNS + 8), 7);
    assert.equal(model.indexOfTurn(1), 0, 'a shared turn: the first row');
    assert.equal(model.indexOfTurn(SHARED_TURNS + COMPARE_PAGE + 5), COMPARE_PAGE - 1, 'not read yet: the last row read');
  });

  it('puts one row in the tab order: the focused one, else the first, none without rows', async () => {
    const host = new Host(5, new Set([3]));
    const { model } = modelOf(host);
    assert.equal(model.tabStop, -1);
    await model.load();
    assert.equal(model.focused, -1);
    assert.equal(model.tabStop, 0, 'Tab reaches the first row before any is focused');
    await model.nextDifference(1);
    assert.equal(model.tabStop, 3);
    model.focused = 9;
    assert.equal(model.tabStop, 0, 'a focus past the rows read is not a tab stop');
  });

  it('follows the page focus into a row without a redraw', async () => {
    const host = new Host(5, new Set());
    const { model, drawn } = modelOf(host);
    await model.load();
    drawn.length = 0;
    assert.equal(model.follow(2), true);
    assert.equal(model.focused, 2);
    assert.equal(model.tabStop, 2);
    assert.equal(model.follow(2), false, 'already there');
    assert.equal(model.follow(5), false, 'no such row');
    assert.equal(model.follow(-1), false);
    assert.equal(model.focused, 2);
    assert.deepEqual(drawn, [], 'nothing drawn: the row keeps the element that has the focus');
  });
});
