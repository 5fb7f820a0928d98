/**
 * The trace store's errors: what was sent or imported cannot be read (`TraceInputError`, which the receiver answers
 * with an HTTP status), or the store itself cannot be used (`TraceStoreError`).
 */
import { SessionError } from '../errors';

export type TraceInputProblem =
  /** Not JSON, or protobuf that does not decode. */
  | 'malformed'
  /** Well-formed, but not an OTLP trace export. */
  | 'not-otlp'
  /** Over `TRACE_LIMITS.maxBodyBytes`, or `maxValues`. */
  | 'too-large'
  /** A body that did not arrive in time (the receiver's `requestTimeoutMs`). */
  | 'too-slow'
  /** A content type or encoding the receiver does not read. */
  | 'unsupported';

export class TraceInputError extends SessionError {
  override readonly pythonType = 'ValueError';
  constructor(
    readonly problem: TraceInputProblem,
    message: string,
  ) {
    super(message);
  }

  /** The HTTP status the receiver answers with (OTLP/HTTP: 400 for a bad request, which the exporter does not retry). */
  get httpStatus(): number {
    return this.problem === 'too-large' ? 413 : this.problem === 'unsupported' ? 415 : this.problem === 'too-slow' ? 408 : 400;
  }
}

export type TraceStoreProblem =
  /** A file that is not a trace store of ours (a session file, another program's database). */
  | 'not-trace-store'
  /** A trace store written by a newer version, in a format this one does not know. */
  | 'newer-format'
  /** An unknown trace, session or turn was asked for. */
  | 'not-found';

export class TraceStoreError extends SessionError {
  override readonly pythonType = 'Exception';
  constructor(
    readonly problem: TraceStoreProblem,
    message: string,
  ) {
    super(message);
  }
}
