/**
 * Word-level text diffs for the compare view, by jsdiff (`diff`). The two columns of a pair each get their own
 * pieces: the baseline's text with what the other column dropped marked `removed`, the other's text with what it
 * added marked `added`, so each column reads as its own text: its pieces joined are its text, byte for byte.
 *
 * The texts are split into tokens here (words, whitespace runs, punctuation) and diffed with `diffArrays`, not with
 * `diffWords`: jsdiff's `diffWords` gives an unchanged part the new text's whitespace, so the baseline would show the
 * other column's indentation and line breaks. With whitespace as tokens of its own, each column's pieces are made of
 * its own tokens only. Whitespace differences count as changes (a code block's indentation or a blank line matters
 * when reading a model's answer) and are marked like any other change.
 */
import { diffArrays } from 'diff';
import type { DiffPiece } from '../protocol/compareViews';

/**
 * Texts longer than this are not diffed word by word: a model's long answer against another is nearly all changes,
 * and the diff's cost grows with the product of the lengths. Such a pair is shown as wholly replaced.
 */
export const MAX_WORD_DIFF_CHARS = 20_000;

/**
 * The most edits worth showing word by word: 40, or about a quarter of the words of long texts (a word and its space
 * are ~6 characters, and edits count both sides). Two long answers that differ more than that read better side by side
 * as they are, and jsdiff's cost grows with the number of edits, so bounding them keeps a page of rows of unrelated
 * answers nearly as cheap as one of near-equal ones. This bound, not a time limit, is what stops a diff: jsdiff's
 * `timeout` made one pair's answer depend on the machine's load (a pair diffed word by word on one run was shown as
 * wholly replaced on the next). At the size bound a diff takes 40–60 ms on the slow machine of docs/benchmarks.md.
 */
const maxEdits = (before: string, after: string): number => Math.max(40, Math.ceil((before.length + after.length) / 24));

export interface TextDiff {
  /** The baseline's text as pieces (`same`/`removed`). */
  before: DiffPiece[];
  /** The other column's text as pieces (`same`/`added`). */
  after: DiffPiece[];
  changed: boolean;
}

const whole = (text: string, change: DiffPiece['change']): DiffPiece[] => (text === '' ? [] : [{ text, change }]);

/** Diffs `after` against `before` word by word. */
export function diffText(before: string, after: string): TextDiff {
  if (before === after) return { before: whole(before, 'same'), after: whole(after, 'same'), changed: false };
  const replaced = { before: whole(before, 'removed'), after: whole(after, 'added'), changed: true };
  if (before === '' || after === '' || before.length + after.length > MAX_WORD_DIFF_CHARS) return replaced;
  const changes = diffArrays(tokens(before), tokens(after), { maxEditLength: maxEdits(before, after) });
  if (!changes) return replaced;
  const b: DiffPiece[] = [];
  const a: DiffPiece[] = [];
  changes.forEach((c, i) => {
    const value = c.value.join('');
    if (c.added) push(a, value, 'added');
    else if (c.removed) push(b, value, 'removed');
    else if (/^\s+$/.test(value) && i > 0 && i < changes.length - 1) {
      // A lone space kept between two changes would cut a replaced phrase into one marked piece a word: it is shown
      // as part of the change on both sides instead (still each side's own text, as it is equal on both).
      push(a, value, 'added');
      push(b, value, 'removed');
    } else {
      push(a, value, 'same');
      push(b, value, 'same');
    }
  });
  return { before: b, after: a, changed: true };
}

/**
 * A text's tokens, which joined are the text: whitespace runs, words (letters with their combining marks, digits,
 * `_`), and single other characters, an emoji with its modifiers, joined sequence or flag pair being one.
 */
const TOKEN =
  /\s+|[\p{L}\p{M}\p{N}_]+|\p{Regional_Indicator}{2}|[^\s\p{L}\p{M}\p{N}_][\p{M}\p{Emoji_Modifier}\ufe0f]*(?:\u200d[^\s][\p{M}\p{Emoji_Modifier}\ufe0f]*)*/gsu;

function tokens(text: string): string[] {
  // The alternatives above match every character (the last one any non-space), so nothing of the text is lost.
  return text.match(TOKEN) ?? [];
}

/** Appends, merging with the previous piece of the same kind (fewer DOM nodes to draw). */
function push(pieces: DiffPiece[], text: string, change: DiffPiece['change']): void {
  const last = pieces[pieces.length - 1];
  if (last && last.change === change) last.text += text;
  else pieces.push({ text, change });
}

/** A text shown without a diff (a column with nothing to compare against). */
export function plainPieces(text: string): DiffPiece[] {
  return whole(text, 'same');
}
