/**
 * What the user is typing survives the views' redraws (the one mechanism for every inline input of both views: the
 * review note and new tag, a correction, the composer, the what-if forms, the search box). A live refresh draws a
 * part of the page again from new data, and an input made again comes back empty, unfocused, its caret at 0. So each
 * inline input is registered under a key that names what it is for (`review-note main 2`, not its position), and a
 * redraw is wrapped: before, every registered input's text, selection and focus are captured; after, they are put
 * into the input with the same key.
 *
 * An input's text is the user's when it differs from what the last draw put there (`drawValue`): that text is kept
 * over new data, while an input the user has not typed in shows the new data (another window's saved note). An input
 * gone after a redraw (the user moved to another turn) keeps its typed text for when a redraw draws it again, up to
 * `MAX_KEPT_DRAFTS` (an input of that key the user opens in the meantime, a form, drops it); its focus is not brought
 * back later, as the user has been elsewhere since.
 *
 * No DOM here (unit-tested without one): `<input>` and `<textarea>` are `DraftField`s as they are.
 */

/** What a draft needs of an input: an `<input>` and a `<textarea>` have all of it. */
export interface DraftField {
  value: string;
  readonly selectionStart: number | null;
  readonly selectionEnd: number | null;
  readonly selectionDirection: 'forward' | 'backward' | 'none' | null;
  setSelectionRange(start: number | null, end: number | null, direction?: 'forward' | 'backward' | 'none'): void;
  focus(options?: { preventScroll?: boolean }): void;
}

/** An input's state as captured before a redraw. */
export interface Draft {
  value: string;
  /** The user typed it (it differs from what the last draw put there). */
  typed: boolean;
  start: number | null;
  end: number | null;
  direction: 'forward' | 'backward' | 'none' | null;
  focused: boolean;
}

/** Drafts of inputs that a redraw took away, kept for when they come back; the oldest go first past this. */
export const MAX_KEPT_DRAFTS = 50;

/** What the last draw put in each input (none: the empty text an input starts with). */
const drawn = new WeakMap<DraftField, string>();

/** Whether the user has typed in `field` since it was last drawn. */
export function isTyped(field: DraftField): boolean {
  return field.value !== (drawn.get(field) ?? '');
}

/**
 * Puts the data's `value` in `field`, unless the user typed over the last one (their text stays: it is newer than
 * any data). Either way `value` is what the field now counts as drawn.
 */
export function drawValue(field: DraftField, value: string): void {
  if (!isTyped(field)) field.value = value;
  drawn.set(field, value);
}

/** Takes a field's text as the data's from now on (it was saved: it is no longer a draft). */
export function settleValue(field: DraftField): void {
  drawn.set(field, field.value);
}

export class DraftKeeper {
  /** By key: drafts captured before the redraw under way, then those whose input has not come back. */
  private readonly drafts = new Map<string, Draft>();
  /** The inputs in the page before the redraw under way: one it kept needs nothing put back. */
  private before = new Set<DraftField>();

  /** Before a redraw: the state of every registered input (`fields`: key and input), `active` the focused element. */
  capture(fields: Iterable<readonly [string, DraftField]>, active: unknown): void {
    this.before = new Set();
    for (const [key, field] of fields) {
      this.before.add(field);
      // An input in the page now supersedes a draft kept under its key from an earlier one (the user opened the form
      // again since): that draft must not come back over it.
      this.drafts.delete(key);
      const focused = field === active;
      const typed = isTyped(field);
      // An untouched, unfocused input has nothing of the user's; the draw gives it its data.
      if (!typed && !focused) continue;
      this.drafts.set(key, {
        value: field.value,
        typed,
        start: field.selectionStart,
        end: field.selectionEnd,
        direction: field.selectionDirection,
        focused,
      });
    }
  }

  /**
   * After a redraw: each captured draft goes into the input now under its key. `focusFree`: nothing holds the focus
   * (the redraw took it away with the focused input), so it may go back to where it was.
   */
  restore(fields: Iterable<readonly [string, DraftField]>, focusFree: boolean): void {
    for (const [key, field] of fields) {
      const d = this.drafts.get(key);
      if (!d) continue;
      this.drafts.delete(key);
      if (this.before.has(field)) continue;
      if (d.typed) field.value = d.value;
      if (d.focused && focusFree) {
        field.focus({ preventScroll: true });
        const length = field.value.length;
        const clamp = (n: number | null): number => Math.min(n ?? length, length);
        field.setSelectionRange(clamp(d.start), clamp(d.end), d.direction ?? undefined);
      }
    }
    // Inputs the redraw took away: their typed text waits for them; their focus does not.
    for (const [key, d] of this.drafts) {
      if (d.typed) d.focused = false;
      else this.drafts.delete(key);
    }
    while (this.drafts.size > MAX_KEPT_DRAFTS) this.drafts.delete(this.drafts.keys().next().value as string);
  }

  /** The kept draft of `key`, if any (for tests and for a form that wants it before it is drawn). */
  kept(key: string): Draft | undefined {
    return this.drafts.get(key);
  }

  /** Forgets `key`'s draft (its text was sent or saved). */
  forget(key: string): void {
    this.drafts.delete(key);
  }
}
