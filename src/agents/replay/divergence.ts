/**
 * Where a run left the recorded sequence of calls: the first step at which the tool, its arguments (as JSON values),
 * or the number of calls differ. Replay matching itself does not need the order (a model may call the same tools in
 * another order and still get the recorded outputs); people comparing two runs do.
 */
import type { ReplayDivergence, ReplayTable } from '../../shared/protocol/replay';
import { argumentDiff, argumentsKey, parseArguments } from '../../shared/compare/toolArguments';

export function findDivergence(
  table: ReplayTable,
  calls: readonly { name: string; arguments: string }[],
  nameOnly: readonly string[] = [],
): ReplayDivergence | null {
  const recorded = table.calls;
  const steps = Math.max(recorded.length, calls.length);
  for (let i = 0; i < steps; i++) {
    const r = recorded[i];
    const a = calls[i];
    const side = (c: { name: string; arguments: string } | undefined) => (c ? { name: c.name, arguments: c.arguments } : null);
    if (!r || !a || r.name !== a.name) return { step: i + 1, recorded: side(r), actual: side(a), diff: [] };
    // A namespaced tool is named in `nameOnly` with or without its namespace (`billing.refund`, `refund`).
    if (nameOnly.includes(a.name) || nameOnly.includes(a.name.slice(a.name.indexOf('.') + 1))) continue;
    const rp = parseArguments(r.arguments);
    const ap = parseArguments(a.arguments);
    if (argumentsKey(rp) !== argumentsKey(ap)) return { step: i + 1, recorded: side(r), actual: side(a), diff: argumentDiff(rp, ap) };
  }
  return null;
}
