/**
 * The page's side of logic/inputDrafts.ts: an inline input is registered with `draftInput` (its key in a `data-draft`
 * attribute), and every redraw of a view runs inside `keepDrafts`, which captures the registered inputs under the root
 * before and puts their text, selection and focus back after.
 */
import { DraftKeeper, drawValue, type DraftField } from './logic/inputDrafts';

const ATTRIBUTE = 'data-draft';
const keepers = new WeakMap<Element, DraftKeeper>();

/**
 * Registers `field` under `key` (what it is for, e.g. `review-note main 2`: unique in the page) and, when `value` is
 * given, draws it there unless the user has typed over the last drawn value.
 */
export function draftInput<F extends HTMLInputElement | HTMLTextAreaElement>(field: F, key: string, value?: string): F {
  field.setAttribute(ATTRIBUTE, key);
  if (value !== undefined) drawValue(field, value);
  return field;
}

function registered(root: Element): [string, DraftField][] {
  return Array.from(root.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>(`[${ATTRIBUTE}]`)).map((f) => [
    f.getAttribute(ATTRIBUTE) ?? '',
    f,
  ]);
}

/** Runs `draw` (a redraw of part of `root`) so that what is typed in `root`'s inputs survives it. */
export function keepDrafts<T>(root: Element, draw: () => T): T {
  let keeper = keepers.get(root);
  if (!keeper) keepers.set(root, (keeper = new DraftKeeper()));
  keeper.capture(registered(root), document.activeElement);
  try {
    return draw();
  } finally {
    const active = document.activeElement;
    keeper.restore(registered(root), active === null || active === document.body);
  }
}
