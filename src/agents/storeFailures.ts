/**
 * The part of classifying a run's failure that needs no agent SDK: error codes along a cause chain, and a database
 * locked by another writer. Kept apart from runFailures.ts (which knows the SDK's and the client's errors) so that
 * agent-command runs, which the CLI bundles, do not load \`@openai/agents\`.
 */
import { SessionDatabaseError } from '../store/errors';
import type { RunFailureKind } from '../shared/protocol/runEvents';
import { errorMessage } from '../shared/errorMessage';

/** A classified failure. */
export interface ClassifiedFailure {
  failure: RunFailureKind;
  message: string;
  status?: number;
}

/** Error codes along an error's cause chain. */
export function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const errcode = (e as { errcode?: unknown }).errcode;
    if (typeof errcode === 'number') codes.push(`SQLITE_${errcode & 0xff}`);
    // AggregateError from a connect to several addresses.
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner)) for (const x of inner) codes.push(...codesOf(x));
  }
  return codes;
}

/** A database locked by another writer past the busy timeout, or undefined for any other error. */
export function lockedFailure(err: unknown): ClassifiedFailure | undefined {
  const codes = codesOf(err);
  if (
    (err instanceof SessionDatabaseError && err.problem === 'locked') ||
    codes.some((c) => c.startsWith('SQLITE_BUSY') || c.startsWith('SQLITE_LOCKED') || c === 'SQLITE_5' || c === 'SQLITE_6')
  ) {
    return {
      failure: 'locked',
      message: `The session database is locked by another writer (${errorMessage(err)}). Try again when it has finished writing.`,
    };
  }
  return undefined;
}

/** A failure of the store (opening, forking): locked, or the store's own message. */
export function storeFailure(err: unknown): ClassifiedFailure {
  return lockedFailure(err) ?? { failure: 'other', message: errorMessage(err) };
}
