/**
 * The rules of the extension's replay marks, free of `vscode` so they are unit-tested on their own: the tools
 * defaults as the settings give them, which runs are recorded and how, the what-if form's preview of a turn's recorded
 * calls, and a compare column's counts (docs/replay.md).
 */
import { buildReplayTable } from '../../agents/replay/replayTable';
import {
  TOOLS_MODES,
  type ReplayCountsView,
  type ReplayRunView,
  type ReplaySummary,
  type ReplayTableView,
  type ToolsMode,
} from '../../shared/protocol/replay';
import type { RunEvent, RunOutcome } from '../../shared/protocol/runEvents';
import type { ItemEntry } from '../../store';

/** Tool names `agentSessions.replay.matchNameOnly` may list, and the characters of each: a settings file is outside input. */
export const NAME_ONLY_LIMITS = { names: 200, nameChars: 256 } as const;

/** How re-runs treat tool calls unless a run chooses: the settings' values, checked. */
export interface ReplayDefaults {
  mode: ToolsMode;
  nameOnly: string[];
}

/**
 * The defaults from the settings' raw values: an unknown mode is `replay` (never `live`: a typo must not fire the real
 * tools), and the name-only list keeps its strings, trimmed, at most `NAME_ONLY_LIMITS`.
 */
export function replayDefaults(mode: unknown, nameOnly: unknown): ReplayDefaults {
  const names = Array.isArray(nameOnly)
    ? nameOnly
        .filter((n): n is string => typeof n === 'string')
        .map((n) => n.trim())
        .filter((n) => n !== '' && n.length <= NAME_ONLY_LIMITS.nameChars)
    : [];
  return {
    mode: TOOLS_MODES.includes(mode as ToolsMode) ? (mode as ToolsMode) : 'replay',
    nameOnly: [...new Set(names)].slice(0, NAME_ONLY_LIMITS.names),
  };
}

/**
 * The mode a run uses: a re-run of a recorded turn (a fork) the one chosen for it, else the default; a run that
 * continues past the recording has nothing to replay, so it runs its tools (`live`) whatever was chosen: strict would
 * refuse every call of it.
 */
export function runToolsMode(fork: boolean, chosen: ToolsMode | undefined, defaults: ReplayDefaults): ToolsMode {
  return fork ? (chosen ?? defaults.mode) : 'live';
}

/** Where a run wrote, as its `run/started` event says (a fork's new branch). */
export interface StartedRun {
  sessionId: string;
  branchId: string;
  forked: boolean;
}

/** The `run/started` event's part the marks need. */
export function startedRunOf(event: RunEvent): StartedRun | undefined {
  return event.kind === 'run/started'
    ? { sessionId: event.sessionId, branchId: event.branchId, forked: event.forkedFrom !== undefined }
    : undefined;
}

/** A run to record in the marks store. */
export interface RunRecord {
  sessionId: string;
  branchId: string;
  turn: number;
  summary: ReplaySummary;
  /** The run made the branch: rows under its id are of a deleted branch of that name. */
  freshBranch: boolean;
}

/**
 * What to record of a run, or null: only a run that stored a turn (a rolled-back run's calls are nowhere to be
 * marked) and that re-ran a recorded turn or called a tool (a plain chat run past the recording has nothing to show).
 */
export function runRecordOf(started: StartedRun | undefined, outcome: RunOutcome): RunRecord | null {
  const summary = outcome.replay;
  const turn = outcome.written.turn;
  if (!started || !summary || turn === null) return null;
  if (summary.source === null && summary.marks.length === 0) return null;
  return { sessionId: started.sessionId, branchId: started.branchId, turn, summary, freshBranch: started.forked };
}

/** The what-if form's preview of a turn (`branchId`: the branch that ran it) from its items as stored; unreadable items skipped. */
export function replayTableView(
  entries: readonly ItemEntry[],
  where: { branchId: string; turn: number },
  defaults: ReplayDefaults,
): ReplayTableView {
  const items = entries.filter((e) => !e.corrupt).map((e) => e.item);
  return { ...buildReplayTable(items, where), mode: defaults.mode, nameOnly: [...defaults.nameOnly] };
}

/** A compare column's counts: those of the newest run recorded on its branch, or undefined when there is none. */
export function replayCounts(runs: readonly ReplayRunView[]): ReplayCountsView | undefined {
  const last = runs.at(-1);
  if (!last) return undefined;
  const count = (o: string) => last.summary.marks.filter((m) => m.outcome === o).length;
  return { replayed: count('replayed'), live: count('live'), unmatched: count('unmatched'), divergence: last.summary.divergence };
}
