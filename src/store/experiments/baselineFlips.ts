/**
 * The flips between a baseline experiment and a new check (docs/check.md, "Baselines"): what passed and now does not
 * (regressions) first, since that is what a pull request must not merge; then what now passes (fixes); then cases
 * only one side has. Pure, so the CLI, the extension and the tests apply one rule.
 */
import type { ExperimentCaseStatus, ExperimentFlip, FlipKind } from './experimentTypes';

/** A case on one side of the comparison. */
export interface FlipSide {
  caseId: string;
  sessionId: string;
  branchId: string;
  turn: number;
  contentKey: string;
  status: ExperimentCaseStatus;
  /** Why it did not pass ('' when it passed). */
  reason: string;
}

const ORDER: Record<FlipKind, number> = { regression: 0, fix: 1, new: 2, missing: 3 };

/** By code unit, not by locale: the same order on every machine. */
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The same case on both sides: its place and the message there. */
const keyOf = (s: FlipSide) => `${s.caseId}\u0000${s.contentKey}`;

/** Flips from `before` to `after`, in the documented order, and how many cases in both kept their pass or no-pass. */
export function baselineFlips(before: readonly FlipSide[], after: readonly FlipSide[]): { flips: ExperimentFlip[]; unchanged: number } {
  const old = new Map(before.map((s) => [keyOf(s), s]));
  const now = new Set(after.map(keyOf));
  const flips: (ExperimentFlip & { side: FlipSide })[] = [];
  let unchanged = 0;
  for (const a of after) {
    const b = old.get(keyOf(a));
    if (!b) {
      flips.push({ kind: 'new', caseId: a.caseId, before: null, after: a.status, reason: a.reason, side: a });
      continue;
    }
    // Orphaned is neither: the case did not run on that side, so nothing about the agent changed.
    const ran = (s: FlipSide) => s.status !== 'orphaned';
    if (ran(a) && ran(b) && b.status === 'pass' && a.status !== 'pass')
      flips.push({ kind: 'regression', caseId: a.caseId, before: b.status, after: a.status, reason: a.reason, side: a });
    else if (ran(a) && ran(b) && b.status !== 'pass' && a.status === 'pass')
      flips.push({ kind: 'fix', caseId: a.caseId, before: b.status, after: a.status, reason: b.reason, side: a });
    else unchanged++;
  }
  for (const b of before)
    if (!now.has(keyOf(b))) flips.push({ kind: 'missing', caseId: b.caseId, before: b.status, after: null, reason: b.reason, side: b });
  flips.sort(
    (x, y) =>
      ORDER[x.kind] - ORDER[y.kind] ||
      compareText(x.side.sessionId, y.side.sessionId) ||
      compareText(x.side.branchId, y.side.branchId) ||
      x.side.turn - y.side.turn,
  );
  return { flips: flips.map(({ side: _side, ...flip }) => flip), unchanged };
}
