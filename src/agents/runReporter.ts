/**
 * How one run talks to its caller: events (never allowed to break the run), log lines with secrets redacted, the
 * one `run/started`, and failures before anything was written. Owned here so preparing, running and settling a run
 * report the same way.
 */
import { randomUUID } from 'node:crypto';
import { failedBeforeWriting, type RunEvent, type RunFailureKind, type RunOutcome } from '../shared/protocol/runEvents';
import { redactSecrets } from './apiKey';
import { isMessageItem, messageText } from '../shared/itemText';

/** The text of a run's input for people: the text itself, or the text of the messages among the items. */
export function runInputText(input: string | readonly unknown[]): string {
  if (typeof input === 'string') return input;
  return input
    .filter(isMessageItem)
    .map((i) => messageText(i.content))
    .join('\n');
}

export interface RunReporterOptions {
  runId?: string;
  sessionId: string;
  branchId?: string;
  fork?: { fromTurn: number; name?: string };
  /** The user's message (text, or items: `run/started` shows their text). */
  input: string | readonly unknown[];
  secrets?: string[];
  onEvent?: (event: RunEvent) => void;
  log?: (line: string) => void;
}

export class RunReporter {
  readonly runId: string;
  /** The branch the run continues from. */
  readonly sourceBranch: string;
  /**
   * The branch the run writes to: the source, or the fork's name (what `createBranchFromTurn` is asked for, then what
   * it made). Also the key of the run-in-progress lock, so several forks from one branch can run at once.
   */
  branchId: string;
  /** Whether this run's fork exists (set by `forkMade`); a run without a fork has none to make. */
  private forked = false;
  /** Strings never to show (the API key, a configured agent's secrets). */
  readonly secrets: string[];
  private started = false;

  constructor(private readonly options: RunReporterOptions) {
    this.runId = options.runId ?? randomUUID();
    this.sourceBranch = options.branchId ?? 'main';
    this.branchId = options.fork?.name ?? this.sourceBranch;
    this.secrets = [...(options.secrets ?? [])];
  }

  emit(event: RunEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A view that went away must not break the run, nor the cleanup after it.
    }
  }

  log(line: string): void {
    try {
      this.options.log?.(redactSecrets(line, this.secrets));
    } catch {
      // A failing log sink is not the run's problem.
    }
  }

  redact(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** The fork was made, as `branchId`. */
  forkMade(branchId: string): void {
    this.branchId = branchId;
    this.forked = true;
  }

  /** A fork that was asked for and not (yet) made: the view must not move to it, nor name it as a branch. */
  private get forkMissing(): boolean {
    return this.options.fork !== undefined && !this.forked;
  }

  /** Emits `run/started` once: on the fork once it is made, else on the source branch (a run that failed first). */
  start(agentName: string, warnings: string[]): void {
    if (this.started) return;
    this.started = true;
    const { sessionId, fork, input } = this.options;
    const onFork = fork !== undefined && !this.forkMissing;
    this.emit({
      kind: 'run/started',
      runId: this.runId,
      sessionId,
      branchId: onFork ? this.branchId : this.sourceBranch,
      ...(onFork ? { forkedFrom: { branchId: this.sourceBranch, turn: fork.fromTurn } } : {}),
      input: runInputText(input),
      agentName,
      warnings,
    });
  }

  /** The run's outcome, emitted as its last event and returned. */
  finish(outcome: RunOutcome): RunOutcome {
    this.emit(outcome);
    return outcome;
  }

  /**
   * A failure before anything was written: started (if not yet), then the outcome, which is also returned. Before the
   * fork exists the summary names the branch the run came from: the fork's name is not a branch.
   */
  failEarly(failure: RunFailureKind, message: string, status?: number): RunOutcome {
    this.start('', []);
    const summary = this.forkMissing
      ? `Nothing was written and no branch was made; branch '${this.sourceBranch}' is as it was.`
      : `Nothing was written; branch '${this.branchId}' is as it was.`;
    return this.finish(failedBeforeWriting(this.runId, failure, this.redact(message), summary, status));
  }
}
