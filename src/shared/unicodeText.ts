/**
 * Whether a string is text UTF-8 can hold: the one test of it, for the store (which refuses such ids before writing)
 * and the name prompts (which say so before asking the store).
 */

/** A UTF-16 surrogate without its pair: half of a character, which UTF-8 cannot encode. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether `text` holds half of a character. SQLite would store such an id as bytes that are not UTF-8: Python's
 * `sqlite3` then fails to read any row's id in the column ("Could not decode to UTF-8"), and reading it back here gives
 * U+FFFD, a different id (spec §12 f). Python itself refuses such a string (`surrogates not allowed`).
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
