/**
 * The one mechanism that keeps what is typed in the views' inline inputs across redraws (issue 40, item 1): text,
 * selection and focus go from the input a redraw took away into the one it drew under the same key.
 */
import { strict as assert } from 'node:assert';
import { DraftKeeper, MAX_KEPT_DRAFTS, drawValue, isTyped, type DraftField } from '../../../../webview/shared/logic/inputDrafts';

/** An input as the page has one: a value, a selection, and the page's one focus. */
class Field implements DraftField {
  private text = '';
  selectionStart: number | null = 0;
  selectionEnd: number | null = 0;
  selectionDirection: 'forward' | 'backward' | 'none' | null = 'none';
  constructor(private readonly page: { active: unknown }) {}
  get value(): string {
    return this.text;
  }
  /** As the DOM does: a value set from code puts the caret at its end. */
  set value(text: string) {
    this.text = text;
    this.selectionStart = this.selectionEnd = text.length;
  }
  setSelectionRange(start: number | null, end: number | null, direction?: 'forward' | 'backward' | 'none'): void {
    this.selectionStart = start;
    this.selectionEnd = end;
    this.selectionDirection = direction ?? 'none';
  }
  focus(): void {
    this.page.active = this;
  }
  /** The user types `text` at the caret. */
  type(text: string): void {
    const at = this.selectionStart ?? this.value.length;
    this.value = this.value.slice(0, at) + text + this.value.slice(this.selectionEnd ?? at);
    this.selectionStart = this.selectionEnd = at + text.length;
  }
}

/** A redraw that makes every input again, drawing `data` into each (as the turn detail's redraw does). */
function redraw(
  keeper: DraftKeeper,
  page: { active: unknown },
  fields: Map<string, Field>,
  data: Record<string, string> = {},
  keys = [...fields.keys()],
): Map<string, Field> {
  keeper.capture(fields, page.active);
  // The focused input leaves the page with the rest: nothing holds the focus until it is put back.
  if ([...fields.values()].includes(page.active as Field)) page.active = null;
  const next = new Map(keys.map((k) => [k, new Field(page)] as const));
  for (const [k, f] of next) drawValue(f, data[k] ?? '');
  keeper.restore(next, page.active === null);
  return next;
}

describe('input drafts across redraws', () => {
  it('puts the typed text, the caret and the focus back into the input drawn under the same key', () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    let fields = redraw(keeper, page, new Map(), {}, ['review-note main 2', 'review-new-tag main 2', 'composer']);
    const note = fields.get('review-note main 2')!;
    note.focus();
    note.type('Answered in Celsius');
    note.setSelectionRange(3, 3);
    fields.get('review-new-tag main 2')!.type('needs-f');

    fields = redraw(keeper, page, fields);
    const again = fields.get('review-note main 2')!;
    assert.notEqual(again, note, 'a new input');
    assert.equal(again.value, 'Answered in Celsius');
    assert.deepEqual([again.selectionStart, again.selectionEnd], [3, 3]);
    assert.equal(page.active, again, 'the focus is back');
    assert.equal(fields.get('review-new-tag main 2')!.value, 'needs-f', 'an unfocused input keeps its text too');
    assert.equal(page.active === fields.get('review-new-tag main 2'), false);
    again.type('!');
    assert.equal(again.value, 'Ans!wered in Celsius', 'typing goes on at the caret');
  });

  it("shows new data in an input the user has not typed in, and keeps the user's text over it", () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    let fields = redraw(keeper, page, new Map(), { note: 'stored' }, ['note']);
    assert.equal(fields.get('note')!.value, 'stored');
    assert.equal(isTyped(fields.get('note')!), false);
    fields = redraw(keeper, page, fields, { note: 'saved by another window' });
    assert.equal(fields.get('note')!.value, 'saved by another window', 'untouched: the new data');
    fields.get('note')!.type(' and mine');
    fields = redraw(keeper, page, fields, { note: 'saved again elsewhere' });
    assert.equal(fields.get('note')!.value, 'saved by another window and mine', 'typed: the user’s text');
    // Once what the user typed is what is stored, the input is the data's again.
    drawValue(fields.get('note')!, 'saved by another window and mine');
    assert.equal(isTyped(fields.get('note')!), false);
  });

  it('leaves an input the redraw kept alone, and does not take the focus from where the user moved it', () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    const search = new Field(page);
    search.focus();
    search.type('tool:get_weather');
    search.setSelectionRange(5, 9, 'backward');
    keeper.capture([['search', search]], page.active);
    keeper.restore([['search', search]], false);
    assert.deepEqual(
      [search.value, search.selectionStart, search.selectionEnd, search.selectionDirection],
      ['tool:get_weather', 5, 9, 'backward'],
    );

    const note = new Field(page);
    note.focus();
    note.type('draft');
    const other = new Field(page);
    keeper.capture([['note', note]], page.active);
    other.focus();
    const drawn = new Field(page);
    keeper.restore([['note', drawn]], false);
    assert.equal(drawn.value, 'draft');
    assert.equal(page.active, other, 'the focus stays where it went');
  });

  it('keeps the text of an input a redraw took away (another turn shown) for when it is drawn again, without its focus', () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    let fields = redraw(keeper, page, new Map(), {}, ['review-note main 2']);
    fields.get('review-note main 2')!.focus();
    fields.get('review-note main 2')!.type('half a note');
    fields = redraw(keeper, page, fields, {}, ['review-note main 3']);
    assert.equal(fields.get('review-note main 3')!.value, '', 'another turn’s note is not this one');
    page.active = null;
    fields = redraw(keeper, page, fields, {}, ['review-note main 2']);
    assert.equal(fields.get('review-note main 2')!.value, 'half a note');
    assert.equal(page.active, null, 'the user was elsewhere since: no focus taken');
  });

  it('never puts a kept draft over an input the user opened since (it was in the page before the redraw)', () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    // Edit and resend open on turn 2, text typed; the user shows turn 3 (the form goes), then comes back and opens
    // the form again (drawn by the click, not by a redraw), with the stored message in it.
    let fields = redraw(keeper, page, new Map(), { 'what-if-text main 2': 'stored' }, ['what-if-text main 2']);
    fields.get('what-if-text main 2')!.type(' edited');
    fields = redraw(keeper, page, fields, {}, []);
    assert.equal(keeper.kept('what-if-text main 2')?.value, 'stored edited');
    const reopened = new Field(page);
    drawValue(reopened, 'stored');
    // A live refresh that holds the detail (a form is open) before the user types in it: the input stays as it is.
    const open = new Map([['what-if-text main 2', reopened]]);
    keeper.capture(open, page.active);
    keeper.restore(open, true);
    assert.equal(reopened.value, 'stored');
    assert.equal(page.active, null);
    assert.equal(keeper.kept('what-if-text main 2'), undefined, 'the old draft is gone');
  });

  it(`keeps at most ${MAX_KEPT_DRAFTS} drafts of inputs that are gone, dropping the oldest`, () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    const keys = Array.from({ length: MAX_KEPT_DRAFTS + 1 }, (_, i) => `note ${i}`);
    const fields = redraw(keeper, page, new Map(), {}, keys);
    for (const [k, f] of fields) f.type(k);
    redraw(keeper, page, fields, {}, []);
    assert.equal(keeper.kept('note 0'), undefined, 'the oldest is dropped');
    assert.equal(keeper.kept(`note ${MAX_KEPT_DRAFTS}`)?.value, `note ${MAX_KEPT_DRAFTS}`);
  });

  it('clamps a caret past the end of the text put back', () => {
    const page: { active: unknown } = { active: null };
    const keeper = new DraftKeeper();
    const f = new Field(page);
    f.focus();
    f.type('abc');
    f.setSelectionRange(9, 9);
    keeper.capture([['k', f]], page.active);
    page.active = null;
    const g = new Field(page);
    keeper.restore([['k', g]], true);
    assert.deepEqual([g.value, g.selectionStart, g.selectionEnd], ['abc', 3, 3]);
  });
});
