import { strict as assert } from 'node:assert';
import { DetailState, localMemory, scrollBack, toggleKey } from '../../../../webview/conversation/logic/detailState';
import { detailKey } from '../../../../webview/conversation/logic/detailRedraw';

describe('turn detail state across redraws', () => {
  it('keeps each item’s expanded output and Raw view when the same turn is drawn again', () => {
    const state = new DetailState();
    const turn3 = detailKey('main', 3);
    assert.equal(state.draw(turn3), false, 'the first draw of a turn');
    const output = toggleKey('expanded', 7, 'output');
    const raw = toggleKey('raw', 9);
    state.set(output, true);
    state.set(raw, true);
    // Another process appended a turn: the same turn is drawn again from new data.
    assert.equal(state.draw(turn3), true, 'a redraw of the same turn');
    assert.equal(state.isOn(output), true);
    assert.equal(state.isOn(raw), true);
    // Keyed by the item's row, not its place: another item (or another text of the same item) is not expanded.
    assert.equal(state.isOn(toggleKey('expanded', 8, 'output')), false);
    assert.equal(state.isOn(toggleKey('expanded', 7, 'field-0')), false);
    assert.equal(state.isOn(toggleKey('raw', 7)), false);
    state.set(raw, false);
    assert.equal(state.draw(turn3), true);
    assert.equal(state.isOn(raw), false, 'collapsed again by the user: stays collapsed');
  });

  it('starts afresh on another turn or branch', () => {
    const state = new DetailState();
    state.draw(detailKey('main', 3));
    state.set(toggleKey('raw', 9), true);
    assert.equal(state.draw(detailKey('main', 4)), false);
    assert.equal(state.isOn(toggleKey('raw', 9)), false);
    state.set(toggleKey('raw', 9), true);
    assert.equal(state.draw(detailKey('alt', 4)), false, 'the same turn number on another branch is another turn');
    assert.equal(state.isOn(toggleKey('raw', 9)), false);
    state.set(toggleKey('raw', 9), true);
    assert.equal(state.draw(null), false, 'no turn selected');
    assert.equal(state.isOn(toggleKey('raw', 9)), false);
  });

  it('gives a history layer’s card a memory of its own', () => {
    const a = localMemory();
    const b = localMemory();
    a.set(toggleKey('raw', 1), true);
    assert.equal(a.isOn(toggleKey('raw', 1)), true);
    assert.equal(b.isOn(toggleKey('raw', 1)), false);
  });

  it('scrolls back as far as the pane can, and says when it has to wait for content', () => {
    assert.deepEqual(scrollBack(400, 1000), { top: 400, done: true });
    assert.deepEqual(scrollBack(400, 250), { top: 250, done: false }, 'a Timeline still loading: shorter for now');
    assert.deepEqual(scrollBack(0, -5), { top: 0, done: true });
  });
});
