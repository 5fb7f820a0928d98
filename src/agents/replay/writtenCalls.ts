/**
 * The settlement's own marks for the calls an agent command wrote (docs/agent-command.md §4, "Replayed tool calls").
 * A command reports what it did with each call (CUSTOM `agent-sessions.tool-replay`), but a report is only the
 * command's word: a wrapper that forgot a tool, or a version-1 agent that knows nothing of replay, would say nothing or
 * the wrong thing. What the command wrote is what the session now holds, so each written call is marked from that:
 * replayed only when its tool and arguments match an unused recorded call and the output it wrote is that call's
 * recorded output, exactly. Reports that say otherwise are kept as disagreements, to be shown, never believed.
 * Loads no agent SDK (the CLI bundles it with the command runner).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ReplayMark, ReplayOutcome, ReplaySummary, ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import { findDivergence } from './divergence';
import { ReplayMatcher } from './replayMatcher';
import { buildReplayTable } from './replayTable';
import { argumentsKey, parseArguments } from '../../shared/compare/toolArguments';

/** What a command reported for one call (the value of its `agent-sessions.tool-replay` event). */
export interface ReplayReport {
  callId: string;
  name: string;
  outcome: ReplayOutcome;
  recordedCallId: string | null;
  /** The call's arguments, when its TOOL_CALL events came before the report (for a refused call's mark). */
  arguments?: string;
}

export interface WrittenCallsArgs {
  mode: ToolsMode;
  /** The recorded turn's table (an empty one when the run continued past the recording). */
  table: ReplayTable;
  /** The recorded turn, or null when there is none (then nothing can be replayed). */
  source: { branchId: string; turn: number } | null;
  nameOnly: readonly string[];
  /** The items the run wrote, oldest first, exactly as stored (`getStoredItems`): outputs are compared as stored. */
  written: readonly unknown[];
  /** What the command reported, in the order it sent them. */
  reports: readonly ReplayReport[];
}

export interface WrittenCallsCheck {
  summary: ReplaySummary;
  /** In `strict`: why the run fails (its first call that ran live), else null. */
  strictFailure: string | null;
}

const SHOWN_ARGUMENT_CHARS = 200;

/** Marks every written call that has an output, in the order written, and says what a strict run makes of them. */
export function checkWrittenCalls(args: WrittenCallsArgs): WrittenCallsCheck {
  const { mode, table } = args;
  // A call without an output never ran as far as the session knows, and the settlement removes it (runPersistence.ts).
  const calls = buildReplayTable(args.written, { branchId: '', turn: 0 }).calls.filter((c) => c.hasOutput);
  const nameOnly = new Set(args.nameOnly);
  const recordedKeys = table.calls.map((c) => argumentsKey(parseArguments(c.arguments)));
  const used = table.calls.map(() => false);
  // Only for the nearest recorded call of one that matched nothing (its messages), never for deciding.
  const nearest = new ReplayMatcher(table, { mode: 'replay', nameOnly: args.nameOnly });
  const marks: ReplayMark[] = [];
  let strictFailure: string | null = null;

  for (const call of calls) {
    const mark = (outcome: ReplayOutcome, recordedCallId: string | null) =>
      marks.push({ callId: call.callId, name: call.name, arguments: call.arguments, outcome, recordedCallId });
    if (mode === 'live') {
      mark('live', null);
      continue;
    }
    const parsed = parseArguments(call.arguments);
    const key = argumentsKey(parsed);
    // The unused recorded calls this one may stand for: same tool, equal arguments (or any, for a name-only tool).
    const candidates: number[] = [];
    table.calls.forEach((r, i) => {
      if (!used[i] && r.hasOutput && r.name === call.name && (nameOnly.has(call.name) || recordedKeys[i] === key)) candidates.push(i);
    });
    // Identical calls are consumed in recorded order; an output that is not one of theirs was made now.
    const hit = candidates.find((i) => isDeepStrictEqual(table.calls[i]!.output, call.output));
    if (hit !== undefined) {
      used[hit] = true;
      nearest.consume(hit);
      mark('replayed', table.calls[hit]!.callId);
      continue;
    }
    const matched = candidates.length > 0 ? table.calls[candidates[0]!]! : null;
    const near = matched ? { call: matched, diff: [] } : nearest.nearest(call.name, parsed);
    // In strict a call that matches nothing is what the mode refuses (`unmatched`, as an SDK run marks it); one that
    // matches but wrote another output ran its tool anyway (`live`). Either way the tool touched the world.
    mark(mode === 'strict' && !matched ? 'unmatched' : 'live', near?.call.callId ?? null);
    if (mode === 'strict' && strictFailure === null)
      strictFailure = strictMessage(call.name, call.arguments, matched !== null, near, args.source !== null);
  }

  const disagreements = compareReports(marks, args.reports, mode, table);
  return {
    summary: {
      mode,
      source: args.source,
      recordedCalls: table.calls.length,
      marks,
      hosted: table.hosted.map((h) => h.type),
      // The calls as the run made them: the written ones, and in strict those only a report tells of (the refused
      // call and the calls replayed before it were never written, yet they are where the run went).
      divergence: args.source ? findDivergence(table, marks, args.nameOnly) : null,
      disagreements,
    },
    strictFailure,
  };
}

/**
 * One line per report that disagrees with the marks (and each such mark gets `reported`), and per report of a call
 * that was never written. `live` and `unmatched` both say "not replayed", so only replayed-or-not (and, for a replayed
 * call, which recorded call) can disagree. A call the command did not report is not a disagreement: a version-1
 * agent reports nothing, and a handoff is a function call no tool wrapper sees.
 */
function compareReports(marks: ReplayMark[], reports: readonly ReplayReport[], mode: ToolsMode, table: ReplayTable): string[] {
  const byCall = new Map<string, ReplayReport>();
  for (const r of reports) if (!byCall.has(r.callId)) byCall.set(r.callId, r);
  const lines: string[] = [];
  for (const m of marks) {
    const r = byCall.get(m.callId);
    if (!r) continue;
    byCall.delete(m.callId);
    const sameWord = (r.outcome === 'replayed') === (m.outcome === 'replayed');
    if (sameWord && (m.outcome !== 'replayed' || r.recordedCallId === m.recordedCallId)) continue;
    m.reported = r.outcome;
    lines.push(
      `${m.name} (${m.callId}): reported ${reportText(r)}, but ${m.outcome === 'replayed' ? `its written output is the recorded output of ${m.recordedCallId}` : 'its written output is not a recorded output of a matching call'}`,
    );
  }
  // What strict asks of an agent: a call that matches nothing is refused before it runs, and the run is rolled back,
  // so nothing it wrote is kept. The reports are then the only trace of the run's calls: the refused one and the ones
  // replayed before it. Nothing ran (a replayed call's tool is not run either), so believing them costs nothing; a
  // report of a recorded call that does not exist, or of one already used, is still a disagreement.
  const unwritten = [...byCall.values()];
  const refusedAt = mode === 'strict' ? unwritten.findIndex((r) => r.outcome === 'unmatched') : -1;
  const usedRecorded = new Set(marks.filter((m) => m.outcome === 'replayed').map((m) => m.recordedCallId));
  unwritten.forEach((r, i) => {
    const recorded = table.calls.find((c) => c.callId === r.recordedCallId && c.hasOutput);
    if (i === refusedAt)
      marks.push({ callId: r.callId, name: r.name, arguments: r.arguments ?? '', outcome: 'unmatched', recordedCallId: r.recordedCallId });
    else if (refusedAt >= 0 && i < refusedAt && r.outcome === 'replayed' && recorded && !usedRecorded.has(recorded.callId)) {
      usedRecorded.add(recorded.callId);
      marks.push({
        callId: r.callId,
        name: r.name,
        arguments: r.arguments ?? recorded.arguments,
        outcome: 'replayed',
        recordedCallId: recorded.callId,
      });
    } else lines.push(`${r.name} (${r.callId}): reported ${reportText(r)}, but no such call was written`);
  });
  return lines;
}

function reportText(r: ReplayReport): string {
  return r.outcome === 'replayed' && r.recordedCallId ? `replayed from ${r.recordedCallId}` : r.outcome;
}

function strictMessage(
  name: string,
  text: string,
  matched: boolean,
  near: { call: { name: string; callId: string }; diff: string[] } | null,
  recorded: boolean,
): string {
  const shown = text.length > SHOWN_ARGUMENT_CHARS ? `${text.slice(0, SHOWN_ARGUMENT_CHARS)}…` : text;
  const head = `Strict replay: the agent ran ${name}(${shown}) live`;
  const tail = 'so the run was rolled back and nothing it wrote was kept.';
  if (matched && near)
    return `${head}: it matches the recorded call ${near.call.name} (${near.call.callId}), but the output it wrote is not the recorded one, ${tail}`;
  const why = `${head}, which matches no recorded call, ${tail}`;
  // Continuing a branch has no recorded turn: strict can only refuse every call there.
  if (!near)
    return `${why} ${recorded ? 'The recorded turn has no function calls.' : 'The run continues past the recording: there is no recorded turn, so no call can be replayed.'}`;
  if (near.call.name !== name) return `${why} Nearest recorded call: ${near.call.name} (${near.call.callId}), another tool.`;
  const diff = near.diff.length > 0 ? `: ${near.diff.join('; ')}` : ' (its output was already used by an identical call)';
  return `${why} Nearest recorded call: ${near.call.name} (${near.call.callId})${diff}.`;
}
