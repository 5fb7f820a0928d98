/**
 * Matching a run's tool calls against the replay table (docs/replay.md, "Matching"): same tool name and equal
 * arguments as JSON values; identical calls are consumed in recorded order; tools named in `nameOnly` match by name
 * alone (arguments that carry a timestamp or a random id). In `strict` an unmatched call is refused before its tool
 * runs; in `replay` it runs live; in `live` nothing is replayed. One matcher serves one run.
 */
import type { RecordedCall, ReplayMark, ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import { argumentDiff, argumentsKey, parseArguments, type ParsedArguments } from '../../shared/compare/toolArguments';

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
  /** Tool names matched by name only (a namespaced tool by its name with or without its namespace). */
  nameOnly?: readonly string[];
  /** Whether the run re-runs a recorded turn (false: it continues past the recording, and nothing can match). */
  recorded?: boolean;
}

/** What a call gets: the recorded output (replayed), or a live run (with the nearest recorded call, if any). */
export type CallDecision = { outcome: 'replayed'; recorded: RecordedCall } | { outcome: 'live'; nearest: RecordedCall | null };

/** A call as the model wrote it: its id, the tool's name (with its namespace) and its arguments' text. */
export interface ModelCall {
  callId: string;
  name: string;
  arguments: string;
}

export class ReplayMatcher {
  private readonly parsed: ParsedArguments[];
  private readonly used: boolean[];
  private readonly nameOnly: Set<string>;
  /** Recorded calls given to calls before their tools were reached (`plan`), by the new call's id. */
  private readonly reserved = new Map<string, number | null>();
  /** Each call's place in the model's order (`plan`, else when it was decided): marks are read in that order. */
  private readonly order = new Map<string, number>();
  private readonly decided: ReplayMark[] = [];

  constructor(
    readonly table: ReplayTable,
    readonly options: MatcherOptions,
  ) {
    this.parsed = table.calls.map((c) => parseArguments(c.arguments));
    this.used = table.calls.map(() => false);
    this.nameOnly = new Set(options.nameOnly ?? []);
  }

  /** Marks of the calls decided so far, in the order the model made the calls. */
  get marks(): ReplayMark[] {
    const at = (m: ReplayMark) => this.order.get(m.callId) ?? Number.MAX_SAFE_INTEGER;
    return this.decided
      .map((m, i) => ({ m, i }))
      .sort((a, b) => at(a.m) - at(b.m) || a.i - b.i)
      .map(({ m }) => m);
  }

  private byNameOnly(name: string): boolean {
    return this.nameOnly.has(name) || this.nameOnly.has(name.slice(name.indexOf('.') + 1));
  }

  /** The first unused recorded call that matches, or -1. Recorded order decides between identical calls. */
  private find(name: string, args: ParsedArguments): number {
    const key = argumentsKey(args);
    for (let i = 0; i < this.table.calls.length; i++) {
      const c = this.table.calls[i]!;
      if (this.used[i] || c.name !== name || !c.hasOutput) continue;
      if (this.byNameOnly(name) || argumentsKey(this.parsed[i]!) === key) return i;
    }
    return -1;
  }

  /**
   * The calls of one model response, in the order the model wrote them, before any of their tools is reached: each
   * gets its recorded call now, so the model's order decides between identical calls, not the order in which the SDK
   * reaches their tools (parallel calls, an approval check that takes longer for one of them).
   */
  plan(calls: readonly ModelCall[]): void {
    for (const call of calls) {
      if (this.order.has(call.callId)) continue;
      this.order.set(call.callId, this.order.size);
      if (this.options.mode === 'live') continue;
      const at = this.find(call.name, parseArguments(call.arguments));
      if (at >= 0) this.used[at] = true;
      this.reserved.set(call.callId, at >= 0 ? at : null);
    }
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
   * differing arguments; none for a tool matched by name only), else the unused call whose name is closest.
   */
  nearest(name: string, args: ParsedArguments): { call: RecordedCall; diff: string[] } | null {
    let best: { call: RecordedCall; diff: string[]; score: number } | null = null;
    for (let i = 0; i < this.table.calls.length; i++) {
      const c = this.table.calls[i]!;
      const diff = c.name === name && this.byNameOnly(name) ? [] : argumentDiff(this.parsed[i]!, args);
      const score = (c.name === name ? 0 : 1000 + nameDistance(c.name, name)) + diff.length + (this.used[i] ? 500 : 0);
      if (!best || score < best.score) best = { call: c, diff: c.name === name ? diff : [], score };
    }
    return best ? { call: best.call, diff: best.diff } : null;
  }

  /**
   * Decides one call before its tool would run and marks it. Throws `StrictReplayError` in `strict` mode for a call
   * with no recorded match. A call that cannot be replayed (`replayable` false: a computer action) never gets a
   * recorded output: it runs live in `replay` and is refused in `strict`.
   */
  decide(callId: string, name: string, argumentsText: string, replayable = true): CallDecision {
    const args = parseArguments(argumentsText);
    if (!this.order.has(callId)) this.order.set(callId, this.order.size);
    const mark = (outcome: ReplayMark['outcome'], recordedCallId: string | null) =>
      this.decided.push({ callId, name, arguments: argumentsText, outcome, recordedCallId });
    if (this.options.mode !== 'live') {
      const planned = this.reserved.get(callId);
      this.reserved.delete(callId);
      let at = planned === undefined ? this.find(name, args) : planned;
      if (at !== null && at >= 0 && !replayable) {
        // Not replayable after all: its recorded call goes back to the calls that can still use it.
        if (planned !== undefined) this.used[at] = false;
        at = -1;
      }
      if (at !== null && at >= 0) {
        this.used[at] = true;
        const recorded = this.table.calls[at]!;
        mark('replayed', recorded.callId);
        return { outcome: 'replayed', recorded };
      }
    }
    const near = this.options.mode === 'live' ? null : this.nearest(name, args);
    if (this.options.mode === 'strict') {
      mark('unmatched', near?.call.callId ?? null);
      throw new StrictReplayError(
        replayable ? this.strictMessage(name, argumentsText, args, near) : notReplayableMessage(name, argumentsText),
        { name, arguments: argumentsText },
        near?.call ?? null,
        near?.diff ?? [],
      );
    }
    mark('live', near?.call.callId ?? null);
    return { outcome: 'live', nearest: near?.call ?? null };
  }

  private strictMessage(name: string, text: string, args: ParsedArguments, near: { call: RecordedCall; diff: string[] } | null): string {
    let message = `Strict replay: the call ${name}(${shown(text)}) matches no recorded call, so it was not run and nothing was written.`;
    if (!args.json) message += ' Its arguments are not valid JSON, so they were compared as text.';
    if (!near)
      return `${message} ${
        this.options.recorded === false
          ? 'The run continues past the recording: there is no recorded turn, so no call can be replayed.'
          : 'The recorded turn has no tool calls.'
      }`;
    if (near.call.name !== name) return `${message} Nearest recorded call: ${near.call.name} (${near.call.callId}), another tool.`;
    const index = this.table.calls.indexOf(near.call);
    const why =
      near.diff.length > 0
        ? `: ${near.diff.join('; ')}`
        : !near.call.hasOutput
          ? ' (it was recorded without an output, so it cannot be replayed)'
          : this.byNameOnly(name)
            ? ` (${name} is matched by name only; its output was already used by an earlier call)`
            : this.used[index]
              ? ' (its output was already used by an identical call)'
              : '';
    return `${message} Nearest recorded call: ${near.call.name} (${near.call.callId})${why}.`;
  }
}

function shown(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function notReplayableMessage(name: string, text: string): string {
  return `Strict replay: the call ${name}(${shown(text)}) runs on this machine and cannot be replayed, so it was not run and nothing was written.`;
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
