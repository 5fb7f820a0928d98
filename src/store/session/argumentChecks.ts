/** Checks of caller-supplied arguments that the Python SDK would hand to SQLite unchecked (spec §12 b, f, i). */
import { BranchError, InvalidArgumentError } from '../errors';
import { hasInvisibleCharacter, hasLoneSurrogate } from '../../shared/unicodeText';

/**
 * A value as an error message shows it: numbers as they print (`-1`, `1.5`, `NaN`), everything else with its type,
 * so `'3' (string)` cannot be mistaken for the number 3.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return String(value);
    case 'string':
      return `'${value}' (string)`;
    case 'bigint':
      return `${value}n (bigint)`;
    case 'boolean':
      return `${value} (boolean)`;
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return `${String(value)} (symbol)`;
    case 'function':
      return 'a function';
    default:
      if (value === null) return 'null';
      return Array.isArray(value) ? 'an array' : 'an object';
  }
}

/**
 * A limit (`getItems(limit)`, `sessionSettings.limit`): an integer, `null` or `undefined` (spec §12 i). Negative
 * integers mean "all" and 0 means none, as in Python; anything else throws `InvalidArgumentError`.
 */
export function checkLimitArgument(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new InvalidArgumentError(`${name} must be an integer, null or undefined, got ${describeValue(value)}`);
}

/** C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F). */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Whether `text` contains a C0 or C1 control character. */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** A session id a session can be opened with: one that is valid Unicode (`hasLoneSurrogate`). */
export function checkSessionId(sessionId: unknown): void {
  if (typeof sessionId === 'string' && hasLoneSurrogate(sessionId))
    throw new InvalidArgumentError('sessionId holds half of a character (a lone UTF-16 surrogate), which cannot be stored as UTF-8');
}

/**
 * A name for a new branch (spec §12 b, f): omitted/null means "generate one"; otherwise a string that is not blank
 * and holds no control character (node:sqlite reads TEXT only up to the first U+0000, so such an id could not be
 * read back on every driver).
 */
export function checkNewBranchName(name: unknown): void {
  if (name === undefined || name === null) return;
  if (typeof name !== 'string') throw new InvalidArgumentError(`Branch name must be a string, got ${describeValue(name)}`);
  if (name.trim() === '') throw new BranchError('Branch ID cannot be empty');
  if (hasControlCharacter(name)) throw new BranchError('Branch ID cannot contain control characters');
  if (hasLoneSurrogate(name)) throw new BranchError('Branch ID cannot contain half of a character (a lone UTF-16 surrogate)');
  if (hasInvisibleCharacter(name))
    throw new BranchError('Branch ID cannot contain invisible or direction-changing characters (a zero-width space, a bidi control)');
}

/** A turn number for `createBranchFromTurn` (spec §12 b): a non-negative integer. */
export function checkTurnNumber(value: unknown): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new BranchError(`Turn number must be a non-negative integer, got ${describeValue(value)}`);
  }
}
