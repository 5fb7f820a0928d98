/** Cases and runs for the graders' tests: the weather turn, as a case and as a run of it, each field overridable. */
import type { CaseRun, CheckCase } from '../../../../src/agents/check/checkTypes';

/** A signal that never aborts. */
export const never: AbortSignal = new AbortController().signal;

/** Turn 2 of session `sess-1`, reviewed good: one get_weather call, a sunny answer. */
export function weatherCase(overrides: Partial<CheckCase> = {}): CheckCase {
  return {
    id: 'sess-1/main/2',
    sessionId: 'sess-1',
    branchId: 'main',
    turn: 2,
    contentKey: '0123456789abcdef0123456789abcdef',
    verdict: 'good',
    input: 'What is the weather in Paris?',
    expected: { answer: 'Sunny, 22 °C.', trajectory: [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }] },
    note: null,
    tags: [],
    ...overrides,
  };
}

/** A run of the weather case that did what was recorded: the same call (its arguments spelt otherwise), a sunny answer. */
export function weatherRun(overrides: Partial<CaseRun> = {}): CaseRun {
  return {
    answer: 'It is sunny, 22 °C.',
    trajectory: [{ name: 'get_weather', arguments: '{ "unit": "c", "city": "Paris" }', output: 'Paris: 22 °C, sunny' }],
    usage: null,
    ms: 1200,
    replay: null,
    branchId: null,
    ...overrides,
  };
}
