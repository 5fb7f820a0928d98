/**
 * What a run's agent sends that people see, redacted before it is shown: the SDK runner's stream (branchRun.ts) and an
 * agent command's (command/commandRun.ts), with the command's stderr tail and the samples of invalid lines its outcome
 * quotes. One owner, so both kinds of run show the same text: the SDK's stream once went out unredacted but for tool
 * outputs (a key in the model's answer, a call's arguments or an item reached the view).
 */
import type { RunEvent } from '../shared/protocol/runEvents';
import type { RunReporter } from './runReporter';
import { LineRedactor, StreamRedactor } from './streamRedactor';

/** How many stderr lines a run keeps for its outcome and the command's status. */
const STDERR_TAIL_LINES = 20;
/** How many lines that are not events are quoted in the log. */
const INVALID_SAMPLES = 3;

/**
 * Everything the agent sent that people see, redacted as streams (../streamRedactor.ts): its text deltas (the view,
 * the CLI), its stderr (the log, the tail on the outcome) and the lines that were not events (the log). A secret
 * split across two deltas, chunks or lines is found as a whole; what could be the start of one waits for what
 * follows it.
 */
export class ShownStreams {
  private readonly text: StreamRedactor;
  private readonly reasoning: StreamRedactor;
  private readonly stderrLines: LineRedactor;
  private readonly invalidLines: LineRedactor;
  /** Why each line given to `invalidLines` and not yet out of it was rejected, in order. */
  private readonly invalidWhys: string[] = [];
  private invalidSeen = 0;
  readonly stderrTail: string[] = [];
  readonly invalidSamples: string[] = [];
  private runId = '';

  constructor(private readonly reporter: RunReporter) {
    const secrets = reporter.secrets;
    this.text = new StreamRedactor(secrets);
    this.reasoning = new StreamRedactor(secrets);
    this.stderrLines = new LineRedactor(secrets);
    this.invalidLines = new LineRedactor(secrets);
  }

  /** An event from the translator, redacted, to the reporter. */
  emit(e: RunEvent): void {
    this.runId = e.runId;
    if (e.kind === 'text/delta') {
      const delta = this.text.push(e.delta);
      if (delta !== '') this.reporter.emit({ ...e, delta });
      return;
    }
    if (e.kind === 'reasoning/delta') {
      const delta = this.reasoning.push(e.delta);
      if (delta !== '') this.reporter.emit({ ...e, delta });
      return;
    }
    // Text held back belongs before whatever comes next: a secret does not span two events of different kinds.
    this.flushText();
    this.reporter.emit(this.redactWhole(e));
  }

  private flushText(): void {
    const text = this.text.end();
    if (text !== '') this.reporter.emit({ kind: 'text/delta', runId: this.runId, delta: text });
    const reasoning = this.reasoning.end();
    if (reasoning !== '') this.reporter.emit({ kind: 'reasoning/delta', runId: this.runId, delta: reasoning });
  }

  /**
   * Events that arrive whole (tool calls with their joined arguments, outputs, items) are redacted whole: every string
   * in them, whatever its field (a call id echoing the key once showed it), and what they nest (an item, a replay
   * mark) as its JSON text, keys included. Only `kind` and `runId`, ours, are left as they are.
   */
  private redactWhole(e: RunEvent): RunEvent {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(e)) out[key] = key === 'kind' || key === 'runId' ? value : this.redactValue(value);
    return out as unknown as RunEvent;
  }

  private redactValue(value: unknown): unknown {
    if (typeof value === 'string') return this.text.redact(value);
    if (typeof value !== 'object' || value === null) return value;
    // As JSON text, so that a rule spanning a key and its value (`"authorization": "…"`) applies too.
    const text = this.text.redact(JSON.stringify(value));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // A marker put where the JSON needed an escape (a secret containing a quote): keep the text.
      return text;
    }
  }

  /** One stderr line in; the lines that can be shown now go to `log` and the tail. */
  stderr(line: string, log: (line: string) => void): void {
    for (const l of this.stderrLines.push(line)) this.stderrOut(l, log);
  }

  endStderr(log: (line: string) => void): void {
    for (const l of this.stderrLines.end()) this.stderrOut(l, log);
  }

  private stderrOut(line: string, log: (line: string) => void): void {
    this.stderrTail.push(line);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    log(line);
  }

  /** A line that was not an event: the first few are quoted in the log (redacted across lines, as stderr is). */
  invalid(why: string, source: string): void {
    if (this.invalidSeen > INVALID_SAMPLES) return;
    this.invalidSeen++;
    this.invalidWhys.push(why);
    // One line in, one line out (a line break a secret swallowed is kept), so each reason stays with its line.
    this.invalidOut(this.invalidLines.push(source.replace(/\r?\n/g, ' ')));
    // The line after the last sample was read only to settle its end.
    if (this.invalidSeen > INVALID_SAMPLES) this.invalidOut(this.invalidLines.end());
  }

  private invalidOut(lines: string[]): void {
    for (const line of lines) {
      const why = this.invalidWhys.shift() ?? 'not an AG-UI event';
      if (this.invalidSamples.length < INVALID_SAMPLES)
        this.invalidSamples.push(`${why}: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`);
    }
  }

  /** The stream ended: what was held back is let out, redacted. */
  end(): void {
    this.flushText();
    this.invalidOut(this.invalidLines.end());
  }
}
