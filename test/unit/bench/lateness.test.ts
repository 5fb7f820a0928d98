/**
 * The bench's event-loop lateness (scripts/bench/lateness.ts, issue 43): a stall anywhere in an action's window counts,
 * short ones and one right at the end included, which a histogram read only when the answer arrived missed.
 */
import { strict as assert } from 'node:assert';
import { busyFloor, idleFloor, range, watchedWindow } from '../../../scripts/bench/lateness';

/** Blocks this thread for `ms`. */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning on purpose
  }
}

describe('bench: event-loop lateness over a whole window', () => {
  it('counts a short stall in the middle of the window', async () => {
    const w = await watchedWindow(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      block(15);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return 'done';
    });
    assert.equal(w.value, 'done');
    assert.ok(w.maxLateMs >= 12, `a 15 ms stall shows (got ${w.maxLateMs} ms)`);
  });

  it('counts a stall right before the answer, and one right after it (within the settle)', async () => {
    const before = await watchedWindow(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      block(40);
    });
    assert.ok(before.maxLateMs >= 35, `a stall at the end of the call shows (got ${before.maxLateMs} ms)`);
    const after = await watchedWindow(async () => {
      setTimeout(() => block(40), 2);
    });
    assert.ok(after.maxLateMs >= 35, `a stall just after the answer shows (got ${after.maxLateMs} ms)`);
  });

  it("reports the longest of this thread's collections that began in the window", async () => {
    const w = await watchedWindow(async () => {
      // Tens of MB of short-lived arrays: the young generation is collected several times.
      let kept = 0;
      for (let i = 0; i < 200; i++) kept += new Array(25_000).fill(i).length;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return kept;
    });
    assert.equal(w.value, 200 * 25_000);
    assert.ok(w.maxGcMs > 0, `the collections show (got ${w.maxGcMs} ms)`);
  });

  it('takes the floors in the same process, and ranges keep min, median and max', async () => {
    assert.ok((await idleFloor(30)) >= 0);
    assert.ok((await busyFloor(30)) >= 0);
    assert.deepEqual(range([5, 1, 3]), { min: 1, median: 3, max: 5, n: 3 });
  });
});
