/**
 * A turn's review in its detail (docs/reviews.md): Good and Bad (pressed again: no verdict), the tags as toggles (the
 * defaults, then those in use) with a field for a tag of the user's own, and a note saved with its button or
 * Ctrl+Enter. Each control sends only its own change, so another window's tags or note are never overwritten by this
 * one's verdict. A redraw (this window's change answered, another's noticed) replaces the toggles but never the fields
 * being typed in, nor takes the focus from a toggle. The note and tags are user text.
 */
import type { TurnReviewChangeView, TurnReviewView } from '../../../src/shared/protocol/reviewViews';
import type { Verdict } from '../../../src/shared/reviewVocabulary';
import { el, replaceChildren } from '../../shared/dom';
import { draftInput } from '../../shared/drafts';
import { drawValue } from '../../shared/logic/inputDrafts';
import { t } from '../../shared/l10n';

export interface ReviewBarState {
  review: TurnReviewView | undefined;
  /** The tags to offer: the defaults, then those in use. */
  tags: readonly string[];
  /** Why reviews cannot be read or written here, if so. */
  problem: string | undefined;
}

type Change = (c: TurnReviewChangeView) => void;

/** What the fields made once per bar act on: the latest review and change function, set by each redraw. */
interface Live {
  review: TurnReviewView | undefined;
  change: Change;
  /** The note sent by *Save note*, until a redraw shows it stored (then "Note saved" says so). */
  savingNote?: string;
}
const live = new WeakMap<HTMLElement, Live>();

function toggle(label: string, pressed: boolean, cls: string, focusKey: string, onClick: () => void, title?: string): HTMLElement {
  const b = el(
    'button',
    {
      type: 'button',
      class: `review-toggle ${cls}`,
      'aria-pressed': pressed ? 'true' : 'false',
      'data-focus': focusKey,
      ...(title ? { title } : {}),
    },
    label,
  );
  b.addEventListener('click', onClick);
  return b;
}

/**
 * The fields typed in, made once per bar: a redraw of the bar leaves them (and what is being typed) alone; a redraw of
 * the whole detail makes them again, and their drafts come back by key (`scope`: the branch and turn, shared/drafts.ts).
 */
function fields(
  container: HTMLElement,
  scope: string,
): { newTag: HTMLInputElement; noteRow: HTMLElement; note: HTMLTextAreaElement; noteStatus: HTMLElement } {
  const existing = container.querySelector<HTMLInputElement>('input.review-new-tag');
  if (existing) {
    return {
      newTag: existing,
      noteRow: container.querySelector<HTMLElement>('.review-note-row')!,
      note: container.querySelector<HTMLTextAreaElement>('textarea.review-note')!,
      noteStatus: container.querySelector<HTMLElement>('.review-note-status')!,
    };
  }
  const newTag = el('input', {
    type: 'text',
    class: 'review-new-tag',
    placeholder: t('New tag'),
    'aria-label': t('Add a tag of your own'),
    maxlength: 40,
  }) as HTMLInputElement;
  draftInput(newTag, `review-new-tag ${scope}`);
  newTag.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || newTag.value.trim() === '') return;
    e.preventDefault();
    live.get(container)?.change({ addTags: [newTag.value.trim()] });
    newTag.value = '';
  });
  const note = el('textarea', {
    class: 'review-note',
    rows: 2,
    placeholder: t('A note on this turn (Ctrl+Enter saves)'),
    'aria-label': t('Review note'),
  }) as HTMLTextAreaElement;
  draftInput(note, `review-note ${scope}`);
  const save = el('vscode-button', { appearance: 'secondary', class: 'review-save-note' }, t('Save note'));
  // Said when the saved note comes back stored, so the user knows it was kept (the field looks the same either way).
  const noteStatus = el('span', { class: 'review-note-status', role: 'status', 'aria-live': 'polite' });
  const saveNote = (): void => {
    const l = live.get(container);
    if (!l || note.value === (l.review?.note ?? '')) return;
    l.savingNote = note.value;
    noteStatus.textContent = '';
    l.change({ note: note.value });
  };
  note.addEventListener('input', () => (noteStatus.textContent = ''));
  save.addEventListener('click', saveNote);
  note.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      saveNote();
    }
  });
  return { newTag, noteRow: el('div', { class: 'review-note-row' }, note, save, noteStatus), note, noteStatus };
}

/**
 * Draws (or redraws) the review bar in `container`, its own element in the turn's detail. Only the toggles and the
 * problem line are replaced: the fields stay in the page (taking them out, even for a moment, would take the focus).
 */
export function renderReviewBar(container: HTMLElement, state: ReviewBarState, change: Change, scope: string): void {
  const r = state.review;
  const previous = live.get(container);
  const first = previous === undefined;
  const { newTag, noteRow, note, noteStatus } = fields(container, scope);
  const stored = r?.note ?? '';
  let savingNote = previous?.savingNote;
  if (savingNote !== undefined && stored === savingNote && note.value === savingNote) {
    // The note sent is the one stored now (drawn below, it is no longer a draft): the user is told it was kept.
    noteStatus.textContent = t('Note saved');
    savingNote = undefined;
  } else if (state.problem) savingNote = undefined;
  live.set(container, { review: r, change, savingNote });
  // The note shows the stored one unless the user is writing their own (logic/inputDrafts.ts).
  drawValue(note, stored);
  const focused = container.contains(document.activeElement) ? document.activeElement?.getAttribute('data-focus') : null;
  const verdict = (v: Verdict): void => change({ verdict: r?.verdict === v ? null : v });
  const on = new Set(r?.tags ?? []);
  const tags = [...new Set([...state.tags, ...on])];
  const verdicts = el(
    'div',
    { class: 'review-verdicts', role: 'group', 'aria-label': t('Verdict') },
    el('span', { class: 'review-label' }, t('Review')),
    toggle(
      t('Good'),
      r?.verdict === 'good',
      'verdict-good',
      'verdict-good',
      () => verdict('good'),
      t('Mark this turn good (G in the turn list)'),
    ),
    toggle(
      t('Bad'),
      r?.verdict === 'bad',
      'verdict-bad',
      'verdict-bad',
      () => verdict('bad'),
      t('Mark this turn bad (B in the turn list)'),
    ),
  );
  const tagGroup = el(
    'div',
    { class: 'review-tags', role: 'group', 'aria-label': t('Tags') },
    ...tags.map((tag) =>
      toggle(tag, on.has(tag), 'review-tag', `tag-${tag}`, () => change(on.has(tag) ? { removeTags: [tag] } : { addTags: [tag] })),
    ),
  );
  const problem = el('p', { class: 'error review-problem', role: 'alert' }, state.problem ?? '');
  problem.hidden = !state.problem;
  if (first) {
    replaceChildren(container, verdicts, tagGroup, el('div', { class: 'review-tag-add' }, newTag), noteRow, problem);
  } else {
    container.querySelector('.review-verdicts')?.replaceWith(verdicts);
    container.querySelector('.review-tags')?.replaceWith(tagGroup);
    container.querySelector('.review-problem')?.replaceWith(problem);
  }
  // A replaced toggle that had the focus gets it back.
  if (focused) container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
}
