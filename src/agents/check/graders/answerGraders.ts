/**
 * `answer:exact|normalized|contains|json` compare the new run's answer with the case's expected answer (a good turn's
 * recorded answer, or a bad turn's correction); `answer:regex=PATTERN` matches the answer against a pattern the spec
 * gives, since a recorded answer or a reviewer's correction is prose, not a pattern. The rules (docs/check.md):
 *
 * - exact: the same text, character for character.
 * - normalized: the same after `normalizeAnswer` (Unicode NFKC, lower case, each run of whitespace one space,
 *   whitespace and punctuation removed at both ends).
 * - contains: the normalized expected answer occurs in the normalized answer.
 * - json: both parse as JSON (after trimming) to equal values: key order, spacing and number spelling do not matter.
 * - regex: JavaScript syntax, searched anywhere in the answer (anchor with `^…$`), `u` flag always on.
 *
 * A case without an expected answer fails these graders (except regex) with a reason that says so: nothing was
 * compared, and a pass would claim otherwise.
 */
import { argumentDiff, parseArguments } from '../../../shared/compare/toolArguments';
import type { CaseRun, CheckCase, Grader, GraderResult } from '../checkTypes';
import { graderResult, quote } from './graderResult';

export type AnswerMode = 'exact' | 'normalized' | 'contains' | 'json';
export const ANSWER_MODES: readonly AnswerMode[] = ['exact', 'normalized', 'contains', 'json'];

/** The longest `answer:regex` pattern: 1,000 characters. */
export const MAX_PATTERN_CHARS = 1000;

/** What `normalized` and `contains` compare: NFKC, lower case, whitespace runs as one space, no punctuation or space at the ends. */
export function normalizeAnswer(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '');
}

/** Where two texts part, for a reason: `at character 12: expected "…", got "…"`. */
function firstDifference(expected: string, actual: string): string {
  let i = 0;
  while (i < expected.length && i < actual.length && expected[i] === actual[i]) i++;
  const from = Math.max(0, i - 10);
  return `differs at character ${i + 1}: expected ${quote(expected.slice(from, from + 50))}, got ${quote(actual.slice(from, from + 50))}`;
}

export class AnswerGrader implements Grader {
  readonly name: string;
  constructor(private readonly mode: AnswerMode) {
    this.name = `answer:${mode}`;
  }

  grade(c: CheckCase, run: CaseRun, _signal?: AbortSignal): Promise<GraderResult> {
    return Promise.resolve(this.judge(c.expected.answer, run.answer));
  }

  private judge(expected: string | null, actual: string): GraderResult {
    const result = (pass: boolean, reason: string, score = pass ? 1 : 0) => graderResult(this.name, pass, score, reason);
    if (expected === null) return result(false, 'the case has no expected answer to compare with');
    switch (this.mode) {
      case 'exact':
        return expected === actual
          ? result(true, 'the answer is the expected text exactly')
          : result(false, firstDifference(expected, actual));
      case 'normalized': {
        const e = normalizeAnswer(expected);
        const a = normalizeAnswer(actual);
        return e === a
          ? result(true, 'the answer is the expected text, normalized')
          : result(false, `normalized, ${firstDifference(e, a)}`);
      }
      case 'contains': {
        const e = normalizeAnswer(expected);
        if (e === '') return result(false, 'the expected answer is empty once normalized: nothing to look for');
        return normalizeAnswer(actual).includes(e)
          ? result(true, 'the answer contains the expected text')
          : result(false, `the answer does not contain ${quote(e)}; it begins ${quote(normalizeAnswer(actual))}`);
      }
      case 'json': {
        const e = parseArguments(expected.trim());
        if (!e.json) return result(false, `the expected answer is not JSON: ${quote(expected)}`);
        const a = parseArguments(actual.trim());
        if (!a.json) return result(false, `the answer is not JSON: ${quote(actual)}`);
        const diff = argumentDiff(e, a);
        return diff.length === 0
          ? result(true, 'the answer is the expected JSON value')
          : result(false, `JSON differs: ${diff.join('; ')}`);
      }
    }
  }
}

export class RegexAnswerGrader implements Grader {
  readonly name: string;
  constructor(private readonly pattern: RegExp) {
    const flags = pattern.flags.replace('u', '');
    this.name = `answer:regex${flags ? `:${flags}` : ''}=${pattern.source}`;
  }

  grade(_c: CheckCase, run: CaseRun, _signal?: AbortSignal): Promise<GraderResult> {
    const found = this.pattern.exec(run.answer);
    const shown = `/${this.pattern.source}/${this.pattern.flags}`;
    return Promise.resolve(
      found
        ? graderResult(this.name, true, 1, `matches ${shown} at character ${found.index + 1}`)
        : graderResult(this.name, false, 0, `does not match ${shown}; the answer begins ${quote(run.answer)}`),
    );
  }
}
