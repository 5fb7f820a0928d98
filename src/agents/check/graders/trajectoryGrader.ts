/**
 * `trajectory` and `trajectory:args`: did the new run call the recorded turn's tools in the recorded order? By name
 * only, or (`:args`) with the same arguments as JSON values (key order, spacing and number spelling do not matter:
 * src/agents/replay/toolArguments.ts). The reason names the first step where the runs part, as the replay summary
 * does (`divergenceSentence`), so a check's line and a what-if's summary say it in the same words.
 *
 * They judge only a case with an expected trajectory: a bad turn's case has none (its recorded calls were part of the
 * answer its reviewer rejected), and gets no result from them, neither a pass that would mean nothing nor a fail of
 * the fixed agent's other calls. What judges such a case is its answer: the check's `not-rejected` rule and the
 * answer graders (checkRun.ts).
 */
import { divergenceSentence } from '../../../shared/protocol/replay';
import { findDivergence } from '../../replay/divergence';
import { argumentsKey, parseArguments } from '../../../shared/compare/toolArguments';
import type { CaseRun, CheckCase, Grader, GraderResult } from '../checkTypes';
import { graderResult } from './graderResult';

type Step = { name: string; arguments: string };

function names(steps: readonly Step[]): string {
  const shown = steps.slice(0, 6).map((s) => s.name);
  return steps.length > 6 ? `${shown.join(', ')}, … (${steps.length})` : shown.join(', ');
}

/**
 * The share of steps that agree position by position, over the longer sequence (1 when both made no call): three of
 * four recorded calls made as recorded, then one more, scores 0.75 rather than 0.
 */
export function trajectoryScore(expected: readonly Step[], actual: readonly Step[], withArguments: boolean): number {
  const steps = Math.max(expected.length, actual.length);
  if (steps === 0) return 1;
  let same = 0;
  for (let i = 0; i < Math.min(expected.length, actual.length); i++) {
    const e = expected[i]!;
    const a = actual[i]!;
    if (e.name !== a.name) continue;
    if (withArguments && argumentsKey(parseArguments(e.arguments)) !== argumentsKey(parseArguments(a.arguments))) continue;
    same++;
  }
  return same / steps;
}

export class TrajectoryGrader implements Grader {
  readonly name: string;
  constructor(private readonly withArguments: boolean) {
    this.name = withArguments ? 'trajectory:args' : 'trajectory';
  }

  grade(c: CheckCase, run: CaseRun, _signal?: AbortSignal): Promise<GraderResult | null> {
    const expected = c.expected.trajectory;
    if (expected === null) return Promise.resolve(null);
    const actual = run.trajectory.map((t) => ({ name: t.name, arguments: t.arguments }));
    // Name-only: every tool the run called is compared by its name alone.
    const nameOnly = this.withArguments ? [] : [...new Set([...expected, ...actual].map((s) => s.name))];
    const table = {
      branchId: c.branchId,
      turn: c.turn,
      calls: expected.map((s, i) => ({
        ...s,
        callId: `expected_${i}`,
        output: null,
        hasOutput: false,
        branchId: c.branchId,
        turn: c.turn,
      })),
      hosted: [],
    };
    const divergence = findDivergence(table, actual, nameOnly);
    const score = trajectoryScore(expected, actual, this.withArguments);
    if (divergence === null) {
      const what =
        expected.length === 0
          ? 'no tool calls, as recorded'
          : `${expected.length} tool call${expected.length === 1 ? '' : 's'} as recorded (${names(expected)})`;
      return Promise.resolve(
        graderResult(this.name, true, 1, this.withArguments && expected.length > 0 ? `${what}, same arguments` : what),
      );
    }
    const counts =
      expected.length === actual.length
        ? ''
        : ` (recorded ${expected.length} call${expected.length === 1 ? '' : 's'}, this run ${actual.length})`;
    return Promise.resolve(graderResult(this.name, false, score, `${divergenceSentence(divergence)}${counts}`));
  }
}
