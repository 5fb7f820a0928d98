/**
 * A turn's timeline from the trace store (docs/traces.md): the spans of the traces linked to the turn (or, for a
 * trace that names only its session, starting in the turn's time window from the session file), as an indented
 * waterfall a model can read: when each span started after the first, how long it took, what it was (model request,
 * tool, agent, …), tokens and errors.
 */
import { turnOrigin } from '../../shared/turnOrigin';
import type { StoredSpan, TraceStore } from '../traces/traceStore';
import { turnWindows } from '../traces/turnWindows';
import { answer, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, requireTurn, turnArguments } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_SPANS, MAX_MAX_SPANS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

export interface TimelineArgs {
  session: string;
  branch?: string;
  turn: number;
  /** Spans to skip (the `next` of a cut answer). */
  afterSpan?: number;
  maxSpans?: number;
}

const ms = (us: number): string => `${(us / 1000).toFixed(1)} ms`;

function spanLine(s: StoredSpan, t0: number, depth: number): string {
  const facts = [
    s.kind,
    s.model ? `model ${s.model}` : '',
    s.toolName ? `tool ${s.toolName}` : '',
    s.agentName ? `agent ${s.agentName}` : '',
    s.inputTokens !== null || s.outputTokens !== null ? `tokens in ${s.inputTokens ?? '–'} out ${s.outputTokens ?? '–'}` : '',
    s.error ? `ERROR: ${s.error}` : s.status === 'error' ? 'ERROR' : '',
  ].filter(Boolean);
  return `${'  '.repeat(depth)}- +${ms(s.startUs - t0)} for ${ms(s.endUs - s.startUs)}: ${s.name} (${facts.join(', ')})\n`;
}

/** Spans in tree order (a parent before its children, siblings by start time), each with its depth. */
function treeOrder(spans: readonly StoredSpan[]): { span: StoredSpan; depth: number }[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | null, StoredSpan[]>();
  for (const s of spans) {
    // A parent the turn does not hold (another trace's, or never received) would leave the span unreachable.
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const out: { span: StoredSpan; depth: number }[] = [];
  const walk = (parent: string | null, depth: number): void => {
    for (const s of (children.get(parent) ?? []).sort((a, b) => a.startUs - b.startUs)) {
      out.push({ span: s, depth });
      if (depth < 64) walk(s.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

/**
 * What a timeline reads of a trace store: the CLI's in-process `TraceStore`, or the extension's in its store worker
 * (whose answers are awaited).
 */
export interface TurnSpanSource {
  readonly path: string;
  spansOfTurn(query: Parameters<TraceStore['spansOfTurn']>[0]): StoredSpan[] | Promise<StoredSpan[]>;
}

export async function turnTimeline(
  store: QueryStore,
  traces: TurnSpanSource | undefined,
  args: TimelineArgs,
  signal?: AbortSignal,
): Promise<QueryAnswer> {
  checkCancelled(signal);
  // Before the arguments: without a trace store no call of this tool works, so their errors could show none that does.
  if (!traces)
    throw new QueryError(
      'no-trace-store',
      'No trace store is open, so there are no timelines: start the server with --traces <traces.db> (the file `agent-sessions otlp --store` or the extension writes). read_turns shows the turn itself.',
    );
  const at = turnArguments(args, 'the turn whose timeline to show');
  const { sessionId, turn } = at;
  const afterSpan = intArgument('afterSpan', args.afterSpan, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const maxSpans = intArgument('maxSpans', args.maxSpans, { min: 1, max: MAX_MAX_SPANS, fallback: DEFAULT_MAX_SPANS });
  checkCancelled(signal);
  const { tree, branch } = await requireTurn(store, at);
  // Traces are linked to the branch that ran the turn (a shared turn's ancestor).
  const ran = turnOrigin(tree, branch.branchId, turn);
  const page = await store.reader.getTurnsPage(sessionId, ran, { afterTurn: turn > 1 ? turn - 1 : null, limit: 2 });
  const window = turnWindows(page.turns).get(turn);
  checkCancelled(signal);
  const spans = await traces.spansOfTurn({ sessionId, branchId: ran, turnNumber: turn, ...(window ? { window } : {}) });
  checkCancelled(signal);
  const source = { ...sourceOf(store, sessionId, branch.branchId), turns: { from: turn, to: turn } };
  const ranNote = ran !== branch.branchId ? ` (a shared turn: branch ${JSON.stringify(ran)} ran it)` : '';
  if (spans.length === 0)
    return answer(
      source,
      `No spans in the trace store ${traces.path} for turn ${turn}${ranNote}: no trace was linked to it or started in its time window.`,
      null,
    );
  const ordered = treeOrder(spans);
  const t0 = Math.min(...spans.map((s) => s.startUs));
  const t1 = Math.max(...spans.map((s) => s.endUs));
  const budget = new TextBudget(DEFAULT_MAX_CHARS);
  let shown = 0;
  for (const { span, depth } of ordered.slice(afterSpan, afterSpan + maxSpans)) {
    if (!budget.add(spanLine(span, t0, depth))) break;
    shown++;
  }
  const traceCount = new Set(spans.map((s) => s.traceId)).size;
  const requests = spans.filter((s) => s.kind === 'model').length;
  const errors = spans.filter((s) => s.error !== null || s.status === 'error').length;
  const end = afterSpan + shown;
  // An afterSpan past the last span shows none: said so, rather than a range that ends before it starts.
  const range =
    shown > 0
      ? `Spans ${afterSpan + 1}–${end}, times after the first span's start:`
      : `No spans after span ${afterSpan} (the turn has ${counted(ordered.length, 'span')}).`;
  const head = `Turn ${turn}${ranNote}: ${counted(spans.length, 'span')} in ${counted(traceCount, 'trace')} (trace store ${traces.path}), ${ms(t1 - t0)} from the first span's start to the last one's end, ${counted(requests, 'model request')}, ${counted(errors, 'error')}. ${range}`;
  const more = end < ordered.length;
  return answer(
    source,
    `${head}\n${budget.text()}`,
    more ? { afterSpan: end } : null,
    more ? `… truncated: ${counted(ordered.length - end, 'more span')} — call turn_timeline again with afterSpan=${end}.` : undefined,
  );
}
