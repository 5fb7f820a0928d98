/**
 * Tests of what an id's text may hold: the one owner of them, for the store (which refuses such ids before writing),
 * the name prompts (which say so before asking the store) and the pickers (which show a name read from a file).
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

/**
 * Characters that are invisible or turn the direction text is shown in: the bidirectional marks, embeddings, overrides
 * and isolates, the zero-width space, the word joiner and its invisible operators, the byte order mark. In a branch
 * name they make `main\u200b` look like `main` and `fix\u202egnp.exe` like `fixexe.png` in every picker. The zero-width
 * joiner and non-joiner are not among them: emoji sequences and several scripts need them.
 */
const INVISIBLE = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** Whether `text` holds a character that hides itself or reorders what is shown (`INVISIBLE`). */
export function hasInvisibleCharacter(text: string): boolean {
  return INVISIBLE.test(text);
}

/**
 * `text` with each invisible or direction-changing character written out (`<U+200B>`), for a label showing a name
 * that another writer stored: the picker then tells `main` from `main\u200b`.
 */
export function visibleText(text: string): string {
  if (!INVISIBLE.test(text)) return text;
  return text.replace(new RegExp(INVISIBLE.source, 'g'), (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
}

/** `text` without its invisible or direction-changing characters, for a name made from other text (a model's). */
export function withoutInvisible(text: string): string {
  return text.replace(new RegExp(INVISIBLE.source, 'g'), '');
}
