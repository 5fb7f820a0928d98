/**
 * Matching a run's tool calls against the replay table (docs/replay.md, "Matching"): same tool name and equal
 * arguments as JSON values; identical calls are consumed in recorded order; tools named in `nameOnly` match by name
 * alone (arguments that carry a timestamp or a random id). In `strict` an unmatched call is refused before its tool
 * runs; in `replay` it runs live; in `live` nothing is replayed. One matcher serves one run.
 */
import type { RecordedCall, ReplayMark, ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import { argumentDiff, argumentsKey, parseArguments, type ParsedArguments } from './toolArguments';

/** A strict run's call with no recorded match: the run fails before the tool runs, and nothing is written. */
export class StrictReplayError extends Error {
  override readonly name = 'StrictReplayError';
  constructor(
    message: string,
    readonly call: { name: string; arguments: string },
    readonly nearest: RecordedCall | null,
    readonly diff: string[],
  ) {
    super(message);
  }
}

export interface MatcherOptions {
  mode: ToolsMode;
  /** Tool names matched by name only. */
  nameOnly?: readonly string[];
}

/** What a call gets: the recorded output (replayed), or a live run (with the nearest recorded call, if any). */
export type CallDecision = { outcome: 'replayed'; recorded: RecordedCall } | { outcome: 'live'; nearest: RecordedCall | null };

export class ReplayMatcher {
  private readonly parsed: ParsedArguments[];
  private readonly used: boolean[];
  private readonly nameOnly: Set<string>;
  /** Marks of the calls decided so far, in call order. */
  readonly marks: ReplayMark[] = [];

  constructor(
    readonly table: ReplayTable,
    readonly options: MatcherOptions,
  ) {
    this.parsed = table.calls.map((c) => parseArguments(c.arguments));
    this.used = table.calls.map(() => false);
    this.nameOnly = new Set(options.nameOnly ?? []);
  }

  /** The first unused recorded call that matches, or -1. Recorded order decides between identical calls. */
  private find(name: string, args: ParsedArguments): number {
    const key = argumentsKey(args);
    for (let i = 0; i < this.table.calls.length; i++) {
      const c = this.table.calls[i]!;
      if (this.used[i] || c.name !== name || !c.hasOutput) continue;
      if (this.nameOnly.has(name) || argumentsKey(this.parsed[i]!) === key) return i;
    }
    return -1;
  }

  /**
   * Marks the recorded call at `index` used without deciding a call: for a check of calls already made, which decides
   * by itself (replay/writtenCalls.ts) and asks only `nearest`, which then prefers the unused calls.
   */
  consume(index: number): void {
    this.used[index] = true;
  }

  /**
   * The recorded call closest to a call that did not match, for messages: an unused one of the same name first (fewest
   * differing arguments), else the unused call whose name is closest.
   */
  nearest(name: string, args: ParsedArguments): { call: RecordedCall; diff: string[] } | null {
    let best: { call: RecordedCall; diff: string[]; score: number } | null = null;
    for (let i = 0; i < this.table.calls.length; i++) {
      const c = this.table.calls[i]!;
      const diff = argumentDiff(this.parsed[i]!, args);
      const score = (c.name === name ? 0 : 1000 + nameDistance(c.name, name)) + diff.length + (this.used[i] ? 500 : 0);
      if (!best || score < best.score) best = { call: c, diff: c.name === name ? diff : [], score };
    }
    return best ? { call: best.call, diff: best.diff } : null;
  }

  /**
   * Decides one call before its tool would run and marks it. Throws `StrictReplayError` in `strict` mode for a call
   * with no recorded match.
   */
  decide(callId: string, name: string, argumentsText: string): CallDecision {
    const args = parseArguments(argumentsText);
    if (this.options.mode !== 'live') {
      const at = this.find(name, args);
      if (at >= 0) {
        this.used[at] = true;
        const recorded = this.table.calls[at]!;
        this.marks.push({ callId, name, arguments: argumentsText, outcome: 'replayed', recordedCallId: recorded.callId });
        return { outcome: 'replayed', recorded };
      }
    }
    const near = this.options.mode === 'live' ? null : this.nearest(name, args);
    if (this.options.mode === 'strict') {
      this.marks.push({ callId, name, arguments: argumentsText, outcome: 'unmatched', recordedCallId: near?.call.callId ?? null });
      throw new StrictReplayError(
        strictMessage(name, argumentsText, args, near),
        { name, arguments: argumentsText },
        near?.call ?? null,
        near?.diff ?? [],
      );
    }
    this.marks.push({ callId, name, arguments: argumentsText, outcome: 'live', recordedCallId: near?.call.callId ?? null });
    return { outcome: 'live', nearest: near?.call ?? null };
  }
}

function strictMessage(name: string, text: string, args: ParsedArguments, near: { call: RecordedCall; diff: string[] } | null): string {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  let message = `Strict replay: the call ${name}(${shown}) matches no recorded call, so it was not run and nothing was written.`;
  if (!args.json) message += ' Its arguments are not valid JSON, so they were compared as text.';
  if (!near) return `${message} The recorded turn has no function calls.`;
  if (near.call.name !== name) return `${message} Nearest recorded call: ${near.call.name} (${near.call.callId}), another tool.`;
  const diff = near.diff.length > 0 ? `: ${near.diff.join('; ')}` : ' (its output was already used by an identical call)';
  return `${message} Nearest recorded call: ${near.call.name} (${near.call.callId})${diff}.`;
}

/** Edit distance between two names (short strings: a plain table is enough). */
function nameDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j]!;
      row[j] = next;
    }
  }
  return row[b.length]!;
}
