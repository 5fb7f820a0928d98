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
  /** The branch the run writes to: the source, or the fork once it is made. */
  branchId: string;
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

  /** Emits `run/started` once. */
  start(agentName: string, warnings: string[]): void {
    if (this.started) return;
    this.started = true;
    const { sessionId, fork, input } = this.options;
    this.emit({
      kind: 'run/started',
      runId: this.runId,
      sessionId,
      branchId: this.branchId,
      ...(fork ? { forkedFrom: { branchId: this.sourceBranch, turn: fork.fromTurn } } : {}),
      input: runInputText(input),
      agentName,
      warnings,
    });
  }

  /** A failure before anything was written: started (if not yet), then the outcome, which is also returned. */
  failEarly(failure: RunFailureKind, message: string, status?: number): RunOutcome {
    this.start('', []);
    const outcome = failedBeforeWriting(
      this.runId,
      failure,
      this.redact(message),
      `Nothing was written; branch '${this.branchId}' is as it was.`,
      status,
    );
    this.emit(outcome);
    return outcome;
  }
}
