/** The turn detail's redraw rule (a live refresh never replaces an open form) and the tables' column sizing. */
import { strict as assert } from 'node:assert';
import { detailKey, detailRedraw } from '../../../../webview/conversation/logic/detailRedraw';
import { turnLabel } from '../../../../webview/conversation/logic/itemCount';
import {
  BRANCH_COLUMN_CH,
  columnWidths,
  fittedTemplate,
  gridFit,
  MIN_GRID_FIT,
  headerWidthText,
  textWidth,
  turnsByBranch,
} from '../../../../webview/conversation/logic/tableLayout';

describe('turn detail redraws', () => {
  const two = detailKey('main', 2);
  it('holds a redraw of the same turn while a form is open, and draws a move to another turn at once', () => {
    assert.equal(detailRedraw(two, detailKey('main', 2), true), 'hold');
    assert.equal(detailRedraw(two, detailKey('main', 2), false), 'draw');
    assert.equal(detailRedraw(two, detailKey('main', 3), true), 'draw');
    assert.equal(detailRedraw(two, detailKey('alt', 2), true), 'draw', 'another branch is another turn');
    assert.equal(detailRedraw(null, detailKey('main', 2), true), 'draw');
    assert.equal(detailRedraw(two, null, true), 'draw');
  });

  it('calls turn 0 "Before the first turn"', () => {
    assert.equal(turnLabel(0), 'Before the first turn');
    assert.equal(turnLabel(3), 'Turn 3');
  });
});

describe('table layout', () => {
  it('sizes each column to its widest text, so figures and names never wrap', () => {
    assert.equal(
      columnWidths(
        [
          ['Cost ▲', '$0.000136', '$12.50'],
          ['Tool ▲', 'convert_temperature', 'get_weather'],
        ],
        [true, false],
      ),
      '12ch 22ch',
    );
    // A very long name is capped (then cut with an ellipsis, its tooltip whole); a tiny column keeps room for padding.
    assert.equal(columnWidths([['x'.repeat(90)], ['1']], [false, true]), '40ch 5ch');
    assert.equal(textWidth('턴 12'), 5, 'Hangul takes two columns');
  });

  it('shrinks the columns by a little before the table scrolls sideways, all rows by the same factor', () => {
    assert.equal(fittedTemplate('12ch 22ch'), 'calc(12ch * var(--grid-fit, 1)) calc(22ch * var(--grid-fit, 1))');
    // The Tokens table at about 1,150 px: 753 px of columns in a 750 px box fit after a cut of 4 px.
    const factor = gridFit(753, 750);
    assert.ok(factor < 1 && 753 * factor <= 749, `factor ${factor}`);
    assert.equal(gridFit(700, 750), 1, 'a table that fits keeps its widths');
    assert.equal(gridFit(1500, 750), MIN_GRID_FIT, 'a much narrower view scrolls rather than crushing the columns');
    assert.equal(gridFit(0, 750), 1);
  });

  it('leaves room for a sort mark only in the header of a column that can be sorted', () => {
    assert.equal(headerWidthText('Total', true), 'Total ▲');
    assert.equal(headerWidthText('Cost', false), 'Cost');
    // A narrow Cost column is as wide as its title, not its title and a mark it never shows.
    assert.equal(
      columnWidths(
        [
          [headerWidthText('Cost', false), '$0.1'],
          [headerWidthText('Cost', true), '$0.1'],
        ],
        [true, true],
      ),
      '7ch 9ch',
    );
  });

  it('keeps a long branch name to a narrower column, so the figures after it (Cost) stay in view', () => {
    const long = 'retry-with-a-very-long-descriptive-branch-name-turn-2';
    assert.equal(
      columnWidths(
        [
          ['Branch ▲', long],
          ['Cost ▲', '$0.000136'],
        ],
        [false, true],
        [BRANCH_COLUMN_CH],
      ),
      '20ch 12ch',
    );
    assert.equal(columnWidths([['Branch ▲', 'main']], [false], [BRANCH_COLUMN_CH]), '11ch', 'a short name keeps its own width');
  });

  it('names each whole-session turn of a tool with the branch that ran it', () => {
    assert.equal(
      turnsByBranch([
        { branchId: 'main', turn: 2 },
        { branchId: 'main', turn: 5 },
        { branchId: 'retry', turn: 3 },
      ]),
      'main 2, 5 · retry 3',
    );
  });
});
