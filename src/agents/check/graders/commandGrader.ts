/**
 * `command:"…"`: a program of the user's judges each case. It gets one JSON object on stdin, `{case, input, expected,
 * actual, trajectory}`, and prints one JSON object on stdout, `{pass, score, reason}` (docs/check.md, "A grader
 * command"). It runs like an agent command (src/agents/command/commandProcess.ts: the system shell, a process group
 * of its own that a stop always ends), so a grader that hangs is stopped at its timeout and leaves nothing running.
 *
 * A grader that cannot give a verdict — it hangs past the timeout, exits non-zero, is killed, or prints anything
 * but one verdict — makes the case an error with the tail of its stderr, never a pass or a fail: nothing was learnt
 * about the agent. What it prints is bounded (`MAX_GRADER_OUTPUT_CHARS`), so a runaway grader cannot fill memory.
 */
import { runCommandProcess } from '../../command/commandProcess';
import { StreamRedactor } from '../../streamRedactor';
import type { CaseRun, CheckCase, Grader, GraderResult } from '../checkTypes';
import { GraderError } from './graderErrors';
import { graderResult, oneLine, quote } from './graderResult';

/** How long a grader command may take on one case by default: 60 s. */
export const DEFAULT_GRADER_TIMEOUT_MS = 60_000;
/** The most a grader command's stdout may hold: 64 Ki characters (a verdict is a line; the rest is a mistake). */
export const MAX_GRADER_OUTPUT_CHARS = 64 * 1024;
/** How much of a grader's stderr an error quotes: its last 10 lines, at most 500 characters. */
const STDERR_TAIL_LINES = 10;
const STDERR_TAIL_CHARS = 500;
/** Between the polite and the firm stop of a grader past its timeout: a grader holds no state worth a long grace. */
const STOP_GRACE_MS = 1000;

export interface CommandGraderOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * Secrets to redact from everything the program says (beside the `OPENAI_API_KEY` of its environment, which it is
   * given and may print): its stderr, its verdict's reason, its output quoted in an error.
   */
  secrets?: readonly (string | undefined)[];
}

/**
 * The object a grader command reads on stdin. `expected` is the case's: its answer, its trajectory (null for a bad
 * turn's case, whose recorded calls were part of the answer rejected) and its rejected answer (a bad turn's, else null).
 */
export function graderInput(c: CheckCase, run: CaseRun): string {
  return JSON.stringify({
    case: { id: c.id, sessionId: c.sessionId, branchId: c.branchId, turn: c.turn, verdict: c.verdict, note: c.note, tags: c.tags },
    input: c.input,
    expected: c.expected,
    actual: run.answer,
    trajectory: run.trajectory,
  });
}

/**
 * A verdict from what the grader printed: the whole output as JSON, or else its last non-empty line. `shown` turns the
 * output into what an error may quote of it (the grader's redaction), applied before it is cut, so a cut never leaves
 * the start of a secret that no longer matches in full.
 */
export function parseVerdict(
  stdout: string,
  shown: (text: string) => string = (t) => t,
): { pass: boolean; score: number; reason: string } | string {
  const text = stdout.trim();
  if (text === '') return 'it printed nothing';
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  let value: unknown;
  for (const candidate of [text, lines[lines.length - 1]!]) {
    try {
      value = JSON.parse(candidate);
      break;
    } catch {
      value = undefined;
    }
  }
  if (value === undefined) return `it printed no JSON verdict: ${quote(shown(text))}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `its verdict is not a JSON object: ${quote(shown(text))}`;
  const v = value as Record<string, unknown>;
  if (typeof v.pass !== 'boolean') return `its verdict has no boolean "pass": ${quote(shown(text))}`;
  if (v.score !== undefined && (typeof v.score !== 'number' || !(v.score >= 0 && v.score <= 1)))
    return `its "score" must be a number from 0 to 1: ${quote(shown(JSON.stringify(v.score) ?? String(v.score)))}`;
  if (v.reason !== undefined && typeof v.reason !== 'string') return 'its "reason" must be text';
  return {
    pass: v.pass,
    score: typeof v.score === 'number' ? v.score : v.pass ? 1 : 0,
    reason: shown(v.reason ?? (v.pass ? 'passed' : 'failed')),
  };
}

export class CommandGrader implements Grader {
  readonly name: string;
  constructor(
    readonly command: string,
    private readonly options: CommandGraderOptions = {},
  ) {
    // The name is in every report: a key written into the command line itself is not.
    this.name = `command:${JSON.stringify(this.redactor().redact(command))}`;
  }

  /**
   * A redactor of what the program says, with the check's secrets and the key the program is given in its
   * environment (docs/agent-command.md §5, as an agent's output is redacted): its stderr reaches the console, the
   * JUnit and Markdown reports and the experiment store through the case's error, its reason through the result.
   */
  private redactor(): StreamRedactor {
    return new StreamRedactor([...(this.options.secrets ?? []), (this.options.env ?? process.env).OPENAI_API_KEY]);
  }

  async grade(c: CheckCase, run: CaseRun, signal: AbortSignal): Promise<GraderResult> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_GRADER_TIMEOUT_MS;
    let stdout = '';
    let overflow = false;
    const stderr: string[] = [];
    // Redacted as a stream, line breaks kept: a key split across two lines, or starting in a line that falls out of
    // the tail, is still caught whole before the tail is taken.
    const redactor = this.redactor();
    let partial = '';
    const keep = (text: string, last = false) => {
      const lines = (partial + text).split('\n');
      partial = last ? '' : lines.pop()!;
      for (const line of lines) {
        if (last && line === '') continue;
        stderr.push(line);
        if (stderr.length > STDERR_TAIL_LINES) stderr.shift();
      }
    };
    const end = await runCommandProcess({
      command: this.command,
      cwd: this.options.cwd,
      env: this.options.env ?? process.env,
      stdin: graderInput(c, run),
      signal,
      timeoutMs,
      graceMs: STOP_GRACE_MS,
      maxLineChars: MAX_GRADER_OUTPUT_CHARS,
      onLine: (line) => {
        if (stdout.length + line.length + 1 > MAX_GRADER_OUTPUT_CHARS) overflow = true;
        else stdout += `${line}\n`;
      },
      onStderr: (line) => keep(redactor.push(`${line}\n`)),
    });
    keep(redactor.end(), true);
    const tail = stderr.join(' | ').slice(-STDERR_TAIL_CHARS);
    const fail = (what: string) =>
      new GraderError(this.name, oneLine(redactor.redact(`The grader command ${what}${tail ? `; its stderr ends: ${tail}` : ''}`), 800));
    if (end.spawnError !== undefined) throw fail(`could not start: ${end.spawnError}`);
    if (end.stoppedBy === 'timeout') throw fail(`gave no verdict within ${timeoutMs / 1000} s and was stopped`);
    if (end.stoppedBy === 'stop' || signal.aborted) throw fail('was stopped');
    if (end.signal !== null) throw fail(`was ended by ${end.signal}`);
    if (end.code !== 0) throw fail(`exited with code ${String(end.code)}`);
    if (overflow || end.overlongLines > 0)
      throw fail(`printed more than ${MAX_GRADER_OUTPUT_CHARS.toLocaleString('en-US')} characters (MAX_GRADER_OUTPUT_CHARS)`);
    const verdict = parseVerdict(stdout, (text) => redactor.redact(text));
    if (typeof verdict === 'string') throw fail(`printed garbage: ${verdict}`);
    return graderResult(this.name, verdict.pass, verdict.score, verdict.reason);
  }
}
