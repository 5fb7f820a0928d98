/**
 * `agent-sessions run`: the extension's what-if outside VS Code. Forks (or continues) a branch, runs the user's own
 * agent command on it (docs/agent-command.md), settles the run as the extension does, and prints the events as they
 * arrive. Several `--model`s run at once, each on a branch of its own, as *Retry with Several Models* does.
 */
import { runCommandOnBranch, type CommandAgent } from '../agents/command/commandRun';
import { agentsEndWithUs } from './agentLifetime';
import type { RunEvent, RunOutcome } from '../shared/protocol/runEvents';
import { TOOLS_MODES, replaySentence, type ReplaySummary, type ToolsMode } from '../shared/protocol/replay';
import { branchNameProblem } from '../shared/branchNames';
import { readRunTarget } from '../store/inspector/runTarget';
import { pausedRunText } from '../shared/pausedRun';
import { urlHasPassword, urlWithoutPassword } from '../shared/urlPasswords';
import { EXIT, NotFoundError, UsageError } from './exitCodes';

/** The longest tool name `--match-name-only` takes (a function name is at most 64 characters at OpenAI). */
export const MAX_TOOL_NAME_CHARS = 256;

export interface RunArgs {
  db: string;
  sessionId: string;
  branch: string;
  fromTurn?: number;
  /** The new branch's name (with one model); default: `retry-<n>` / `retry-<model>-<n>` from the time. */
  name?: string;
  command?: string;
  url?: string;
  message: string;
  models: string[];
  timeoutSeconds?: number;
  /** `--tools`: replay, strict or live (default: replay with --from-turn, live without). */
  tools?: string;
  /** `--match-name-only`: tools whose recorded calls match by name alone. */
  matchNameOnly: string[];
  json: boolean;
  signal: AbortSignal;
}

/**
 * `run --from-turn`'s branch name when `--name` is not given: `retry-<time>` (`retry-<model>-<time>` with a model),
 * the time in milliseconds, base 36. Seconds were not enough: two runs from the same turn started within one second
 * (a script, a test) named the same branch, and the second failed on the name its default took.
 */
export function defaultForkName(model: string | null, now: number): string {
  return `retry-${model ? `${model}-` : ''}${now.toString(36)}`;
}

/**
 * The exit code of the runs' outcomes: 0 when every run completed, 7 (`EXIT.paused`) when the agent paused one,
 * waiting for input, and every other completed, else 1 (a run failed or was stopped: that wins over a pause).
 */
export function runExitCode(outcomes: readonly RunOutcome[]): number {
  if (outcomes.some((o) => o.kind === 'run/failed' && o.failure !== 'paused')) return EXIT.error;
  return outcomes.some((o) => o.kind === 'run/failed') ? EXIT.paused : EXIT.ok;
}

/** Runs and prints; resolves with the exit code of the outcomes (`runExitCode`). */
export async function runCommand(args: RunArgs, write: (text: string) => void): Promise<number> {
  if ((args.command === undefined) === (args.url === undefined)) throw new UsageError('run needs exactly one of --command and --url');
  if ((args.command ?? args.url ?? '').trim() === '') throw new UsageError(`--${args.command !== undefined ? 'command' : 'url'} is empty`);
  if (args.url !== undefined) checkAgentUrl(args.url);
  if (args.message.trim() === '') throw new UsageError('run needs a --message');
  if (args.name !== undefined && args.models.length > 1) throw new UsageError('--name names one branch: give one --model with it');
  const mode = toolsMode(args);
  const agent: CommandAgent =
    args.command !== undefined
      ? { kind: 'command', name: args.command, command: args.command, cwd: process.cwd() }
      : { kind: 'url', url: args.url as string };
  const models: (string | null)[] = args.models.length > 0 ? args.models : [null];
  const now = Date.now();
  const several = models.length > 1;
  const forkName = (model: string | null) => args.name ?? defaultForkName(model, now);
  checkTarget(args, args.fromTurn !== undefined ? models.map(forkName) : []);
  const outcomes = await agentsEndWithUs(
    () =>
      Promise.all(
        models.map((model) => {
          const fork = args.fromTurn !== undefined ? { fromTurn: args.fromTurn, name: forkName(model) } : undefined;
          const label = several ? `[${model}] ` : '';
          const text = eventPrinter(label, several);
          return runCommandOnBranch({
            dbPath: args.db,
            sessionId: args.sessionId,
            branchId: args.branch,
            fork,
            agent,
            input: args.message,
            model,
            timeoutMs: args.timeoutSeconds ? args.timeoutSeconds * 1000 : undefined,
            tools: { mode, nameOnly: args.matchNameOnly },
            signal: args.signal,
            onEvent: (e) => write(args.json ? `${JSON.stringify(e)}\n` : text(e)),
            log: (line) => process.stderr.write(`${line}\n`),
          });
        }),
      ),
    { kill: 'Stopping the agent now (SIGKILL).' },
  );
  return runExitCode(outcomes);
}

/**
 * `--url` (of `run` and `check`), refused as a usage error before any run unless it is an http(s) URL without
 * credentials. Node's fetch refuses a URL with a user name or password, so each run failed on its own ("could not be
 * reached"), every message quoting the URL, password and all; and a URL that is none, or of another scheme, failed
 * each run apart. The URL is shown without its password; a password as text reads it counts even where the URL parses
 * without one (an unencoded `/`, `?` or `#` in it makes the URL parse as another host, or not at all). A secret in the
 * query (`?token=`) is sent, and stays allowed.
 */
export function checkAgentUrl(url: string): void {
  const shown = urlWithoutPassword(url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--url takes an http:// or https:// URL, got '${shown}'`);
  if (urlHasPassword(url) || (parsed && (parsed.username !== '' || parsed.password !== '')))
    throw new UsageError(
      `--url ${shown} holds a user name or password: credentials in a URL are not sent (fetch refuses them), and an ` +
        'agent URL has no other way to send them. Remove them from the URL.',
    );
  if (!parsed) throw new UsageError(`--url takes an http:// or https:// URL, got '${shown}'`);
}

/**
 * What is refused before any agent starts, with the exit codes of the other commands: a missing file or session (3; a
 * run continues a session, and a mistyped id would quietly start a new one), a file that is no session store (4), and
 * a fork name the store would refuse (2, a bad argument: blank, `main`, used or reserved by the session). Each run
 * checks its fork's name again as it opens the branch (src/agents/branchOpening.ts), against what was written since.
 */
function checkTarget(args: RunArgs, forkNames: string[]): void {
  const target = readRunTarget(args.db, args.sessionId);
  if (!target.sessionExists) throw new NotFoundError(`no session '${args.sessionId}' in ${args.db}`);
  for (const name of forkNames) {
    const problem = branchNameProblem(name, target.usedBranchIds);
    if (problem) throw new UsageError(`${args.name !== undefined ? '--name' : "the new branch's name"} '${name}': ${problem}`);
  }
}

/** `--tools` and `--match-name-only`, checked: the mode the runs use. */
function toolsMode(args: RunArgs): ToolsMode {
  if (args.tools !== undefined && !(TOOLS_MODES as readonly string[]).includes(args.tools))
    throw new UsageError(`--tools takes ${TOOLS_MODES.join(', ')}; got '${args.tools}'`);
  const mode = (args.tools as ToolsMode | undefined) ?? (args.fromTurn !== undefined ? 'replay' : 'live');
  for (const name of args.matchNameOnly) {
    if (name.trim() === '' || name.length > MAX_TOOL_NAME_CHARS)
      throw new UsageError(`--match-name-only takes a tool name (1 to ${MAX_TOOL_NAME_CHARS} characters); got '${name.slice(0, 40)}'`);
  }
  if (args.matchNameOnly.length > 0 && mode === 'live')
    throw new UsageError(
      '--match-name-only matches recorded calls, which a live run does not: use it with --tools replay or strict (or --from-turn)',
    );
  return mode;
}

/**
 * One line per tool call of the run (what the settlement found, not what the agent said), then the summary sentence:
 * "replayed get_weather (call_9 ← call_2)", "live send_email (call_10)". Nothing for a live run without calls.
 */
export function replayText(summary: ReplaySummary, label: string): string {
  if (summary.mode === 'live' && summary.marks.length === 0 && summary.disagreements.length === 0) return '';
  const lines = summary.marks.map((m) => {
    const reported = m.reported ? `; the agent reported ${m.reported}` : '';
    if (m.outcome === 'replayed') return `${label}replayed ${m.name} (${m.callId} ← ${m.recordedCallId ?? '?'})${reported}`;
    const near = m.recordedCallId ? `; nearest recorded call ${m.recordedCallId}` : '';
    return `${label}${m.outcome} ${m.name} (${m.callId}${near})${reported}`;
  });
  for (const d of summary.disagreements) lines.push(`${label}report disagrees: ${d}`);
  lines.push(`${label}${replaySentence(summary)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * A failed run's calls. When nothing of the run was kept (rolled back), its calls are no longer in the file: they are
 * said to be what the agent did before the rollback, and a run that made none (one that never started, or stopped
 * before calling a tool) says nothing of replay rather than "0 tool calls replayed; this run stopped calling tools".
 */
function failedReplayText(summary: ReplaySummary, rolledBack: boolean, label: string): string {
  if (!rolledBack) return replayText(summary, label);
  if (summary.marks.length === 0 && summary.disagreements.length === 0) return '';
  return `${label}Rolled back, so not in the file: the calls the agent made were\n${replayText(summary, label)}`;
}

/**
 * One run's events for people. A run that failed before its agent started (`agentName` is '': see `RunStartedEvent`)
 * gets no header line, which could only name a branch it never ran on; its outcome says what went wrong.
 */
function eventPrinter(label: string, several: boolean): (e: RunEvent) => string {
  let headed = false;
  // A delta ending in CR whose LF starts the next: held, so the pair reaches the output guard whole (which keeps CR LF
  // and writes a lone CR out as `\u000d`).
  let heldCr = '';
  return (e) => {
    if (e.kind === 'run/started') {
      if (e.agentName === '') return '';
      headed = true;
    }
    let text = heldCr + eventText(e, label, several);
    heldCr = '';
    if (e.kind === 'text/delta' && text.endsWith('\r')) {
      heldCr = '\r';
      text = text.slice(0, -1);
    }
    // The outcome's leading newline ends the streamed answer; with nothing printed before it, it is a blank line.
    return e.kind === 'run/failed' && !headed ? text.replace(/^\n/, '') : text;
  };
}

/** One event for people: text streams as it comes (one run) or by line (several at once). */
function eventText(e: RunEvent, label: string, several: boolean): string {
  switch (e.kind) {
    case 'run/started':
      return `${label}${e.agentName} on branch '${e.branchId}'${e.forkedFrom ? ` (forked from '${e.forkedFrom.branchId}' at turn ${e.forkedFrom.turn})` : ''}\n`;
    case 'text/delta':
      return several ? '' : e.delta;
    case 'reasoning/delta':
      // The answer is what a script reads from stdout: reasoning is shown with --json only.
      return '';
    case 'tool/called':
      return `\n${label}→ ${e.name}(${e.arguments})\n`;
    case 'tool/output':
      return `${label}← ${e.name}: ${e.output.length > 300 ? `${e.output.slice(0, 300)}…` : e.output}\n`;
    case 'item/added':
      return '';
    case 'run/completed':
      return `${several ? `${label}${e.finalOutput}\n` : '\n'}${label}Done: ${e.written.summary}\n${e.replay ? replayText(e.replay, label) : ''}`;
    case 'run/failed':
      // Paused is no error: what the run waits for, then what was kept for the run that resumes it.
      if (e.failure === 'paused')
        return `\n${label}${pausedRunText(e.interrupts)}\n${label}${e.written.summary}\n${e.replay ? replayText(e.replay, label) : ''}`;
      return `\n${label}${e.failure === 'cancelled' ? 'Stopped' : 'Failed'}: ${e.message}\n${label}${e.written.summary}\n${e.replay ? failedReplayText(e.replay, e.written.kept.length === 0, label) : ''}`;
  }
}
