import { strict as assert } from 'node:assert';
import type { TurnUsageView } from '../../../../src/shared/protocol/conversationViews';
import {
  compactCount,
  fitLabel,
  inTurnOrder,
  layoutChart,
  niceTicks,
  segmentsOf,
  slotFor,
} from '../../../../webview/conversation/logic/tokenChart';

const row = (
  turn: number,
  input: number,
  cached: number,
  output: number,
  reasoning: number,
  extra: Partial<TurnUsageView> = {},
): TurnUsageView => ({
  branchId: 'main',
  turn,
  requests: 1,
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  cachedTokens: cached,
  reasoningTokens: reasoning,
  ...extra,
});

describe('token chart geometry', () => {
  it('splits a row into uncached input, cached input, visible output and reasoning that add up to its total', () => {
    assert.deepEqual(segmentsOf(row(1, 1000, 400, 300, 100)), { input: 600, cached: 400, output: 200, reasoning: 100 });
    assert.deepEqual(segmentsOf({ inputTokens: null, outputTokens: 50, cachedTokens: null, reasoningTokens: null }), {
      input: 0,
      cached: 0,
      output: 50,
      reasoning: 0,
    });
    // A damaged row claiming more cached (reasoning) tokens than input (output) is capped, never negative.
    assert.deepEqual(segmentsOf(row(1, 10, 50, 5, 9)), { input: 0, cached: 10, output: 0, reasoning: 5 });
  });

  it('picks round ticks from 0 up to at least the largest bar', () => {
    assert.deepEqual(niceTicks(1000), [0, 250, 500, 750, 1000]);
    assert.deepEqual(niceTicks(1001), [0, 500, 1000, 1500]);
    assert.deepEqual(niceTicks(7), [0, 2, 4, 6, 8]);
    assert.deepEqual(niceTicks(0), [0, 1]);
    assert.deepEqual(niceTicks(0.3), [0, 0.1, 0.2, 0.3]);
    assert.equal(compactCount(950), '950');
    assert.equal(compactCount(1250), '1.25k');
    assert.equal(compactCount(3_400_000), '3.4M');
  });

  it('stacks the parts bottom up, scaled so the tallest bar reaches its tick, one bar per row in turn order', () => {
    const rows = [row(3, 1000, 0, 0, 0), row(1, 600, 400, 300, 100), row(2, 0, 0, 0, 0)];
    const c = layoutChart(rows, { height: 200, slot: 20 });
    assert.deepEqual(
      c.bars.map((b) => b.row.turn),
      [1, 2, 3],
    );
    const plotHeight = c.plot.bottom - c.plot.top;
    // Largest total 1000 → ticks 0…1000: turn 1 (600 + 300 = 900 tokens) is 90 % of the plot's height.
    const [b1, b2, b3] = c.bars;
    assert.equal(b1?.total, 900);
    const segs = b1?.segments ?? [];
    assert.deepEqual(
      segs.map((s) => s.key),
      ['input', 'cached', 'output', 'reasoning'],
    );
    assert.ok(Math.abs((segs[0]?.height ?? 0) - plotHeight * 0.2) < 1e-9);
    // Each part sits on the one below it, the first on the axis.
    assert.equal((segs[0]?.y ?? 0) + (segs[0]?.height ?? 0), c.plot.bottom);
    for (let i = 1; i < segs.length; i++) assert.ok(Math.abs((segs[i]?.y ?? 0) + (segs[i]?.height ?? 0) - (segs[i - 1]?.y ?? 0)) < 1e-9);
    assert.ok(Math.abs((segs[3]?.y ?? 0) - (c.plot.bottom - plotHeight * 0.9)) < 1e-9);
    assert.deepEqual(b2?.segments, [], 'an empty row has a slot but no parts');
    assert.equal(b3?.segments[0]?.height, plotHeight);
    // Bars are spaced one slot apart from the left edge of the plot and do not overlap.
    assert.equal((b2?.x ?? 0) - (b1?.x ?? 0), 20);
    assert.ok((b1?.width ?? 0) < 20);
    assert.deepEqual(
      c.ticks.map((t) => t.label),
      ['0', '250', '500', '750', '1k'],
    );
    assert.equal(c.ticks[0]?.y, c.plot.bottom);
    assert.equal(c.ticks[4]?.y, c.plot.top);
    assert.equal(c.caption, 'turns 1–3');
  });

  it('titles each bar with its counts and cost, and names the branch in the session scope', () => {
    const c = layoutChart([row(4, 1200, 800, 300, 100, { branchId: 'alt', cost: 0.0123 })], { session: true });
    assert.equal(c.bars[0]?.title, 'Turn 4 of alt: 1,200 input (800 cached), 300 output (100 reasoning); cost $0.0123');
    assert.equal(c.caption, 'turn 4');
    const shared = layoutChart([row(2, 10, 0, 5, 0, { branchId: 'alt', sharedFrom: 'main', cost: null })]);
    assert.equal(shared.bars[0]?.title, 'Turn 2 of main: 10 input (0 cached), 5 output (0 reasoning); cost –');
    const session = layoutChart([row(1, 1, 0, 1, 0), row(1, 1, 0, 1, 0, { branchId: 'b' }), row(9, 1, 0, 1, 0)], { session: true });
    assert.equal(session.caption, 'turns 1–9 of 2 branches');
    // The session's bars stand by branch (in the table's order), each run under its name, its first turn labelled:
    // turn numbers repeat across branches.
    assert.deepEqual(
      session.bars.map((b) => [b.row.branchId, b.label]),
      [
        ['b', '1'],
        ['main', '1'],
        ['main', '9'],
      ],
    );
    assert.deepEqual(
      session.groups.map((g) => [g.branchId, g.label, g.x2 - g.x1]),
      [
        ['b', 'b', 18],
        ['main', 'main', 36],
      ],
    );
    assert.deepEqual(layoutChart([row(1, 1, 0, 1, 0)]).groups, [], 'one branch: no group labels');
    assert.equal(fitLabel('branch_from_turn_2_1700000000', 60), 'branch_fr…');
    assert.equal(fitLabel('main', 12), '');
    assert.equal(layoutChart([]).caption, '');
  });

  it('sizes bars to fill the width a page has, between 4 and 28 px', () => {
    assert.equal(slotFor(200, 1352), 6, 'a 200-row page fits a 1400 px editor');
    assert.equal(slotFor(3, 1352), 28);
    assert.equal(slotFor(200, 452), 4, 'a narrow editor scrolls the chart instead of drawing nothing');
    const c = layoutChart(
      Array.from({ length: 200 }, (_, i) => row(i + 1, 10, 0, 10, 0)),
      { slot: slotFor(200, 1352) },
    );
    assert.ok(c.width <= 1352, `${c.width} px`);
  });

  it('labels only every few bars when they are narrow, and grows wider with the rows', () => {
    const rows = Array.from({ length: 200 }, (_, i) => row(i + 1, 10, 0, 10, 0));
    const c = layoutChart(rows, { slot: 8 });
    assert.equal(c.bars.length, 200);
    const labelled = c.bars.filter((b) => b.label !== '');
    assert.ok(labelled.length <= 200 / 3 + 1, `${labelled.length} labels`);
    assert.equal(labelled[0]?.label, '1');
    assert.ok(c.width >= 200 * 8);
    assert.deepEqual(
      inTurnOrder([row(2, 0, 0, 0, 0, { branchId: 'b' }), row(2, 0, 0, 0, 0, { branchId: 'a' })]).map((r) => r.branchId),
      ['a', 'b'],
    );
  });
});
