/**
 * Replaying recorded tool results (docs/replay.md): the words shared by the runs, the CLI and both views. A re-run of
 * a recorded turn gets the outputs its tools returned then instead of calling them again; every call of the run is
 * marked with what happened to it. Plain JSON only: these cross `postMessage` and the worker unchanged.
 */

/** How a run treats its tool calls. */
export type ToolsMode = 'replay' | 'strict' | 'live';
export const TOOLS_MODES: readonly ToolsMode[] = ['replay', 'strict', 'live'];

/** What happened to one call of a run. */
export type ReplayOutcome = 'replayed' | 'live' | 'unmatched';

/** A function call of the recorded turn, with the output it got then. */
export interface RecordedCall {
  callId: string;
  name: string;
  /** As stored (text the model wrote). */
  arguments: string;
  /** As stored: usually a string; a list of content parts stays a list. `null` with `hasOutput` false: never answered. */
  output: unknown;
  hasOutput: boolean;
  /** The source branch and turn it was recorded on. */
  branchId: string;
  turn: number;
}

/** A call the provider ran (web search, file search, code interpreter, computer…): it cannot be replayed. */
export interface HostedCall {
  type: string;
  callId: string | null;
}

/** The recorded calls of the turn a run re-runs, read with the fork. */
export interface ReplayTable {
  branchId: string;
  turn: number;
  calls: RecordedCall[];
  hosted: HostedCall[];
}

/** The mark of one call of a run. */
export interface ReplayMark {
  /** The new call's id. */
  callId: string;
  name: string;
  arguments: string;
  outcome: ReplayOutcome;
  /** The recorded call whose output it got (`replayed`), or the nearest one (`live`, `unmatched`). */
  recordedCallId: string | null;
  /** What an agent command reported for this call, when it reported something else than what we found. */
  reported?: ReplayOutcome | 'missing';
}

/** Where the run's calls left the recorded sequence (1-based step), with both sides and the argument diff. */
export interface ReplayDivergence {
  step: number;
  recorded: { name: string; arguments: string } | null;
  actual: { name: string; arguments: string } | null;
  /** One line per differing argument (`city: "Paris" → "Lisbon"`); empty when the tool differs or a side is missing. */
  diff: string[];
}

/** What a run did with its tools, for the outcome, the CLI and the views. */
export interface ReplaySummary {
  mode: ToolsMode;
  /** The recorded turn (absent when the run continued past the recording: nothing to replay). */
  source: { branchId: string; turn: number } | null;
  recordedCalls: number;
  marks: ReplayMark[];
  /** Provider-run calls of the recorded turn, which no re-run can replay. */
  hosted: string[];
  divergence: ReplayDivergence | null;
  /** Calls an agent command reported but never wrote (their ids), or reports that disagree with what was written. */
  disagreements: string[];
}

/** `replay/table`: the recorded calls of a turn, previewed in the what-if form, and how a re-run treats them by default. */
export interface ReplayTableView extends ReplayTable {
  /** The default of `agentSessions.replay.mode` (a trusted setting: an untrusted workspace's value is ignored). */
  mode: ToolsMode;
  /** `agentSessions.replay.matchNameOnly`: tools matched by name alone. */
  nameOnly: string[];
}

/** A mark as kept in the replay marks store: the run that made it, and where the recorded call it points at lives. */
export interface StoredReplayMark extends ReplayMark {
  runId: string;
  /** The branch and turn of `recordedCallId` (null with it, or when the run continued past the recording). */
  recordedBranchId: string | null;
  recordedTurn: number | null;
}

/** One run recorded on a branch: the turn it wrote (null: none) and what it did with its tools. */
export interface ReplayRunView {
  runId: string;
  turn: number | null;
  summary: ReplaySummary;
}

/** `replay/marks`: a branch's call marks (by the new call's id) and its recorded runs, oldest first. */
export interface ReplayMarksView {
  marks: StoredReplayMark[];
  runs: ReplayRunView[];
}

/** One compare column's tool calls in the branch's last recorded run (the compare view's counts and divergence). */
export interface ReplayCountsView {
  replayed: number;
  live: number;
  unmatched: number;
  divergence: ReplayDivergence | null;
}

/** "3 tool calls replayed, 1 ran live (send_email)": the run summary's sentence. */
export function replaySentence(summary: ReplaySummary): string {
  const count = (o: ReplayOutcome) => summary.marks.filter((m) => m.outcome === o);
  const replayed = count('replayed');
  const live = count('live');
  const unmatched = count('unmatched');
  const names = (marks: ReplayMark[]) => [...new Set(marks.map((m) => m.name))].join(', ');
  const parts: string[] = [];
  if (summary.mode !== 'live' || summary.marks.length === 0 || replayed.length > 0)
    parts.push(`${replayed.length} tool call${replayed.length === 1 ? '' : 's'} replayed`);
  if (live.length > 0) parts.push(`${live.length} ran live (${names(live)})`);
  if (unmatched.length > 0) parts.push(`${unmatched.length} unmatched (${names(unmatched)})`);
  let text = parts.join(', ');
  if (summary.mode === 'live') text = summary.marks.length === 0 ? 'Tools live: no tool calls' : `Tools live: ${text}`;
  if (summary.hosted.length > 0) text += `; not replayable (run by the provider): ${[...new Set(summary.hosted)].join(', ')}`;
  if (summary.divergence) text += `; ${divergenceSentence(summary.divergence)}`;
  if (summary.disagreements.length > 0) text += `; the agent's report disagrees with what it wrote (${summary.disagreements.length})`;
  return `${text}.`;
}

export function divergenceSentence(d: ReplayDivergence): string {
  if (d.recorded && d.actual && d.recorded.name === d.actual.name)
    return `diverged at step ${d.step}: ${d.actual.name} with other arguments (${d.diff.join('; ')})`;
  if (d.recorded && d.actual) return `diverged at step ${d.step}: ${d.actual.name} instead of ${d.recorded.name}`;
  if (d.recorded) return `diverged at step ${d.step}: the recording called ${d.recorded.name} next, this run stopped calling tools`;
  return `diverged at step ${d.step}: this run called ${d.actual?.name ?? 'a tool'} past the recording's calls`;
}
