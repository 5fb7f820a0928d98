/**
 * Each turn's time window, from the session file: from its user message's time to the next turn's. A trace that only
 * names its session (not the turn: an OTLP exporter's `gen_ai.conversation.id`) belongs to the turn whose window its
 * first span starts in.
 *
 * The files keep `created_at` as SQLite's `CURRENT_TIMESTAMP` (UTC, whole seconds), and a run may start its trace a
 * moment before it stores the user message, so each window opens `SLACK_US` early (and the previous one closes there).
 */
export const SLACK_US = 2_000_000;

export interface TurnWindow {
  startUs: number;
  /** Null for the branch's last turn: open-ended. */
  endUs: number | null;
}

/** `YYYY-MM-DD HH:MM:SS[.fff]` (UTC, SQLite's form) or ISO 8601 → microseconds; undefined when not a time. */
export function storedTimeToMicros(value: string | null): number | undefined {
  if (!value) return undefined;
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms * 1000 : undefined;
}

/** The windows of a branch's turns (in turn order); a turn without a readable time has none. */
export function turnWindows(turns: readonly { turn: number; createdAt: string | null }[]): Map<number, TurnWindow> {
  const sorted = [...turns].sort((a, b) => a.turn - b.turn);
  const out = new Map<number, TurnWindow>();
  for (let i = 0; i < sorted.length; i++) {
    const start = storedTimeToMicros(sorted[i]!.createdAt);
    if (start === undefined) continue;
    let end: number | null = null;
    for (let j = i + 1; j < sorted.length && end === null; j++) {
      const next = storedTimeToMicros(sorted[j]!.createdAt);
      if (next !== undefined) end = next - SLACK_US;
    }
    out.set(sorted[i]!.turn, { startUs: start - SLACK_US, endUs: end });
  }
  return out;
}
