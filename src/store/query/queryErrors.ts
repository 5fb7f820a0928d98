/**
 * The one error the query surface throws for a call it cannot answer as asked. Its reader is a model (through an
 * MCP client or a VS Code Language Model tool), so the message says what was wrong and shows a call that works:
 * which sessions, branches or turns exist, or an argument written the right way.
 */

import { dataValue } from './dataBlock';

/** What was wrong with the call. */
export type QueryProblem =
  /** An argument of the wrong type or range, or arguments that do not go together. */
  | 'bad-argument'
  /** No such store among those served, and not a file that can be opened. */
  | 'unknown-store'
  | 'unknown-session'
  | 'unknown-branch'
  | 'unknown-turn'
  /** A search query the search syntax refuses. */
  | 'bad-query'
  /**
   * The store's file was replaced by another (or deleted) since it was opened: the call read nothing, and the next one
   * opens what is at the path now.
   */
  | 'store-changed'
  /** A timeline was asked for without a trace store to read it from. */
  | 'no-trace-store'
  /** The caller cancelled the call. */
  | 'cancelled';

/**
 * How to turn the failed call into one that works, for the example its error ends with (queryExamples.ts): arguments
 * to leave out or to set, on top of the caller's. An error site knows which argument was wrong; the rest of the
 * example (a session, branch or turn that exists) is filled in from the store, so the example is a call that succeeds.
 */
export interface CallFix {
  drop?: readonly string[];
  set?: Record<string, unknown>;
}

export class QueryError extends Error {
  override readonly name = 'QueryError';

  /**
   * @param fix present when the message should end with a call that works: the tool's run appends it (queryTools.ts),
   *   because only there are the caller's other arguments and the store at hand.
   */
  constructor(
    readonly problem: QueryProblem,
    message: string,
    readonly fix?: CallFix,
  ) {
    super(message);
  }
}

/** A few items of a list, for a message: `"a", "b", "c" and 12 more`. */
export function someOf(values: readonly string[], max = 5): string {
  if (values.length === 0) return '(none)';
  // Session and branch ids are session content: quoted and cut like any value handed to a model (dataBlock.ts).
  const shown = values.slice(0, max).map((v) => dataValue(v));
  return values.length > max ? `${shown.join(', ')} and ${values.length - max} more` : shown.join(', ');
}

/**
 * What a tool call that failed answers the model. A `QueryError`'s message is written for it, its values quoted where
 * they are made; any other error (a lock, a damaged file) says what the store said, which holds a file's path and
 * whatever else it read: quoted on one line (`dataValue`), so a path with a line break cannot write a line of its own.
 */
export function toolErrorText(tool: string, err: unknown): string {
  if (err instanceof QueryError) return err.message;
  return `${tool} failed: ${dataValue(err instanceof Error ? err.message : String(err))}`;
}

/** Throws `cancelled` when `signal` was aborted: checked between two reads, so a cancelled call stops its work. */
export function checkCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new QueryError('cancelled', 'The call was cancelled.');
}
