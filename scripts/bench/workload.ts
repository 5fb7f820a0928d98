/**
 * The benchmark workload W(T): one session, T user turns of four items each (user message, function call, its
 * output, assistant message) and one usage record per turn. Deterministic, so every run writes the same text.
 */
import type { AgentInputItem } from '@openai/agents';
import type { RunUsageSource } from '../../src/store';

/** The rare term the content search looks for; about 1% of user messages contain it. */
export const RARE_TERM = 'needle';

/** Filler vocabulary; no word contains the rare term, so only the planted occurrences match. */
const VOCABULARY = [
  'agent',
  'session',
  'branch',
  'weather',
  'forecast',
  'tomorrow',
  'paris',
  'berlin',
  'temperature',
  'degrees',
  'please',
  'summarise',
  'report',
  'latest',
  'numbers',
  'quarter',
  'revenue',
  'compare',
  'with',
  'last',
  'year',
  'and',
  'the',
  'of',
  'for',
  'a',
  'to',
  'in',
  'is',
  'what',
  'how',
  'why',
  'could',
  'you',
  'check',
  'table',
  'rows',
  'query',
  'index',
  'result',
  'error',
  'retry',
  'timeout',
  'window',
  'cache',
  'token',
  'model',
  'reply',
  'tool',
];

const TOOLS = ['get_weather', 'search_docs', 'run_query'];

/** A small linear congruential generator: fast, seedable, good enough for filler text. */
function rng(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

/** Words from the vocabulary until the text is `length` characters long (cut at exactly `length`). */
function filler(length: number, next: () => number): string {
  let out = '';
  while (out.length < length) {
    const word = VOCABULARY[Math.floor(next() * VOCABULARY.length)] ?? 'word';
    out += out === '' ? word : ' ' + word;
  }
  return out.slice(0, length);
}

/** Whether turn `t` (1-based) carries the rare term: exactly one turn in every hundred. */
export function hasRareTerm(t: number): boolean {
  return t % 100 === 42;
}

export interface TurnInput {
  items: AgentInputItem[];
  /** What `storeRunUsage` receives: a run-result-shaped object with a Usage-shaped record. */
  runResult: RunUsageSource;
}

/** The four items and the usage of turn `t` (1-based). */
export function turnInput(t: number): TurnInput {
  const next = rng(t);
  let userText = filler(200, next);
  if (hasRareTerm(t)) userText = `Where is the ${RARE_TERM}? ` + userText.slice(0, 200 - RARE_TERM.length - 15);
  const tool = TOOLS[t % TOOLS.length] ?? 'get_weather';
  const callId = `call_${t.toString(36).padStart(6, '0')}`;
  // Python/Responses-shaped items (call_id, output): the shapes a Python agent stores and the inspector reads.
  const items = [
    { role: 'user', content: userText },
    { type: 'function_call', call_id: callId, name: tool, arguments: JSON.stringify({ q: filler(40, next), turn: t }) },
    { type: 'function_call_output', call_id: callId, output: filler(500, next) },
    {
      role: 'assistant',
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', text: filler(400, next), annotations: [] }],
    },
  ] as unknown as AgentInputItem[];
  const inputTokens = 800 + (t % 97) * 13;
  const outputTokens = 150 + (t % 31) * 7;
  const runResult: RunUsageSource = {
    state: {
      usage: {
        requests: 2,
        inputTokens,
        outputTokens,
        totalTokens: inputTokens + outputTokens,
        // One detail record per request, as the JS Usage keeps them (snake_case keys, as the API sends them).
        inputTokensDetails: [{ cached_tokens: 128 }, { cached_tokens: t % 64 }],
        outputTokensDetails: [{ reasoning_tokens: 32 }, { reasoning_tokens: t % 16 }],
      },
    },
  };
  return { items, runResult };
}

/** The workload of T turns, built before any timing starts. */
export function workload(turns: number): TurnInput[] {
  const out: TurnInput[] = [];
  for (let t = 1; t <= turns; t++) out.push(turnInput(t));
  return out;
}
