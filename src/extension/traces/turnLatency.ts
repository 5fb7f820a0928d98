/**
 * Turns' latency from the trace store, for the views beside the Timeline: the turn list (latency and model per turn,
 * p50/p95 per branch), the Tokens table (latency and traced requests per row) and the compare view (latency per side
 * and its delta). A turn is asked for by the branch that ran it, as `turn/timeline` is, and its window is read from
 * that branch's turns in the session file, so a turn's latency covers exactly the traces its Timeline shows.
 */
import type { SessionReader } from '../../store/inspector/sessionReader';
import type { LatencyTurn, TurnLatency } from '../../store/traces/traceStore';
import { turnWindows } from '../../store/traces/turnWindows';
import type { BranchLatencyView, TurnLatencyView } from '../../shared/protocol/latencyViews';
import type { TablesView } from '../../shared/protocol/conversationViews';
import { turnOrigin, type ForkFacts } from '../../shared/turnOrigin';
import type { TraceService } from './traceService';

type TurnReader = Pick<SessionReader, 'getTurnsPage'>;

/** A turn as the branch that ran it numbers it. */
export interface RanTurn {
  branchId: string;
  turn: number;
}

/** Turns read per page when reading windows; turns further apart than `GAP` are read as separate ranges. */
const PAGE = 1000;
const GAP = 64;
/** A branch's p50/p95 reads at most this many turns (the newest are not left out: see `branchLatency`). */
export const MAX_LATENCY_TURNS = 20_000;

const keyOf = (branchId: string, turn: number): string => `${turn}\u0000${branchId}`;

/** Turn numbers → ranges of nearby turns, each read as one run of pages. */
function ranges(turns: readonly number[]): { from: number; to: number }[] {
  const sorted = [...new Set(turns)].sort((a, b) => a - b);
  const out: { from: number; to: number }[] = [];
  for (const t of sorted) {
    const last = out[out.length - 1];
    if (last && t - last.to <= GAP) last.to = t;
    else out.push({ from: t, to: t });
  }
  return out;
}

/**
 * The latency query for `turns`: each with its window, from its user message's time to the next turn's on the branch
 * that ran it. One read per range of nearby turns, each reading one turn past the range for the last window's end.
 */
export async function latencyQuery(reader: TurnReader, sessionId: string, turns: readonly RanTurn[]): Promise<LatencyTurn[]> {
  const byBranch = new Map<string, number[]>();
  for (const t of turns) {
    if (t.turn < 1) continue;
    const list = byBranch.get(t.branchId);
    if (list) list.push(t.turn);
    else byBranch.set(t.branchId, [t.turn]);
  }
  const windows = new Map<string, { startUs: number; endUs: number | null }>();
  for (const [branchId, numbers] of byBranch) {
    for (const r of ranges(numbers)) {
      let after: number | null = r.from > 1 ? r.from - 1 : null;
      const read: { turn: number; createdAt: string | null }[] = [];
      for (;;) {
        const page = await reader.getTurnsPage(sessionId, branchId, { afterTurn: after, limit: Math.min(PAGE, r.to - (after ?? 0) + 1) });
        read.push(...page.turns.map((t) => ({ turn: t.turn, createdAt: t.createdAt })));
        const last = page.turns[page.turns.length - 1];
        if (!last || page.nextAfterTurn === null || last.turn > r.to) break;
        after = last.turn;
      }
      for (const [turn, w] of turnWindows(read)) if (turn >= r.from && turn <= r.to) windows.set(keyOf(branchId, turn), w);
    }
  }
  return turns
    .filter((t) => t.turn >= 1)
    .map((t) => {
      const window = windows.get(keyOf(t.branchId, t.turn));
      return { branchId: t.branchId, turnNumber: t.turn, ...(window ? { window } : {}) };
    });
}

/** The store's figures → the views' form. */
export function latencyView(l: TurnLatency): TurnLatencyView {
  return {
    branchId: l.branchId,
    turn: l.turnNumber,
    ms: Math.round((l.endUs - l.startUs) / 100) / 10,
    requests: l.requests,
    models: l.models,
    errors: l.errors,
    traces: l.traces,
  };
}

/** The latency of the given turns (those with a trace; the rest are left out). */
export async function turnLatencies(
  reader: TurnReader,
  traces: TraceService,
  sessionId: string,
  turns: readonly RanTurn[],
): Promise<TurnLatencyView[]> {
  if (turns.length === 0) return [];
  const query = await latencyQuery(reader, sessionId, turns);
  const store = await traces.traces();
  return (await store.call('turnLatencies', sessionId, query)).map(latencyView);
}

/** The `q`-quantile (0…1) of sorted values, by the nearest rank; null for none. */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/**
 * Every turn's latency on a branch (its shared turns' from the branches that ran them) and the branch's p50/p95 over
 * its traced turns. A branch longer than `MAX_LATENCY_TURNS` is read from its last turns back, so the newest count.
 */
export async function branchLatency(
  reader: Pick<SessionReader, 'getTurnsPage' | 'getTurnsPageBefore'>,
  traces: TraceService,
  sessionId: string,
  branchId: string,
  branches: readonly ForkFacts[],
): Promise<BranchLatencyView> {
  const numbers: number[] = [];
  let before: number | null = null;
  let partial = false;
  for (;;) {
    const page = await reader.getTurnsPageBefore(sessionId, branchId, { beforeTurn: before, limit: PAGE });
    numbers.push(...page.turns.map((t) => t.turn));
    if (page.previousBeforeTurn === null || page.turns.length === 0) break;
    if (numbers.length >= MAX_LATENCY_TURNS) {
      partial = true;
      break;
    }
    before = page.previousBeforeTurn;
  }
  const turns = await turnLatencies(
    reader,
    traces,
    sessionId,
    numbers.map((turn) => ({ branchId: turnOrigin(branches, branchId, turn), turn })),
  );
  const sorted = turns.map((t) => t.ms).sort((a, b) => a - b);
  return {
    branchId,
    turns,
    turnCount: numbers.length,
    partial,
    p50Ms: quantile(sorted, 0.5),
    p95Ms: quantile(sorted, 0.95),
  };
}

/**
 * The Tokens table's rows with their turns' latency and traced requests (null: no trace). A trace store that cannot be
 * read leaves the table as it was: its figures are extra, never a reason to fail the table.
 */
export async function withLatency(view: TablesView, read: (turns: RanTurn[]) => Promise<TurnLatencyView[]>): Promise<TablesView> {
  const ranBy = (r: { branchId: string; sharedFrom?: string; turn: number }): string => keyOf(r.sharedFrom ?? r.branchId, r.turn);
  let figures: TurnLatencyView[];
  try {
    figures = await read(view.usage.rows.map((r) => ({ branchId: r.sharedFrom ?? r.branchId, turn: r.turn })));
  } catch {
    return view;
  }
  const byTurn = new Map(figures.map((f) => [keyOf(f.branchId, f.turn), f]));
  const rows = view.usage.rows.map((r) => {
    const f = byTurn.get(ranBy(r));
    return { ...r, latencyMs: f?.ms ?? null, tracedRequests: f?.requests ?? null };
  });
  return { ...view, usage: { ...view.usage, rows } };
}
