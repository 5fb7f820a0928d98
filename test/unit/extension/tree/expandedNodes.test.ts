/**
 * The Sessions tree's expansion kept across reloads (issue 40, item 8): what the user expands is drawn expanded by the
 * next window's tree, read from the same workspace state; collapsing forgets it; the state stays within its bound.
 */
import { strict as assert } from 'node:assert';
import { ExpandedNodes, MAX_EXPANDED_NODES, type ExpansionStore } from '../../../../src/extension/tree/expandedNodes';

/** A workspace state as VS Code keeps one: values round-trip through JSON. */
class State implements ExpansionStore {
  private readonly values = new Map<string, string>();
  get<T>(key: string, defaultValue: T): T {
    const v = this.values.get(key);
    return v === undefined ? defaultValue : (JSON.parse(v) as T);
  }
  update(key: string, value: unknown): Thenable<void> {
    this.values.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

describe('Sessions tree: expansion across reloads', () => {
  it('a reload (a new tree on the same state) has what was expanded, not what was collapsed again', () => {
    const state = new State();
    const before = new ExpandedNodes(state);
    before.expanded('db:/a.db');
    before.expanded('session:/a.db:s1');
    before.expanded('branch:/a.db:s1:main');
    before.collapsed('session:/a.db:s1');
    const after = new ExpandedNodes(state);
    assert.deepEqual(
      ['db:/a.db', 'session:/a.db:s1', 'branch:/a.db:s1:main'].map((id) => after.has(id)),
      [true, false, true],
    );
  });

  it('keeps at most MAX_EXPANDED_NODES ids, forgetting the oldest, and ignores a damaged state', () => {
    const state = new State();
    const nodes = new ExpandedNodes(state);
    for (let i = 0; i <= MAX_EXPANDED_NODES; i++) nodes.expanded(`n${i}`);
    const after = new ExpandedNodes(state);
    assert.equal(after.has('n0'), false);
    assert.equal(after.has('n1'), true);
    assert.equal(after.has(`n${MAX_EXPANDED_NODES}`), true);
    void state.update('agentSessions.tree.expanded', { not: 'a list' });
    assert.equal(new ExpandedNodes(state).has('n1'), false);
  });
});
