import { strict as assert } from 'node:assert';
import { SortMemory, sortRows } from '../../../../webview/conversation/logic/sortRows';

/** Rows of the Tools table, as `tools/get` gives them: the turns each tool ran in. */
const tools = [
  { toolName: 'a', turns: [12] },
  { toolName: 'b', turns: [2, 11] },
  { toolName: 'c', turns: [9] },
  { toolName: 'd', turns: [2] },
  { toolName: 'e', turns: [2, 3] },
  { toolName: 'f', turns: [2, 11] },
];

describe('table sort', () => {
  it('sorts the turns a tool ran in as numbers: by the first turn, then the next, a shorter list first', () => {
    assert.deepEqual(
      sortRows(tools, 'turns', 'asc').map((r) => r.toolName),
      ['d', 'e', 'b', 'f', 'c', 'a'],
    );
    // Reversed, ties (b and f ran in the same turns) keep their order.
    assert.deepEqual(
      sortRows(tools, 'turns', 'desc').map((r) => r.toolName),
      ['a', 'c', 'b', 'f', 'e', 'd'],
    );
  });

  it('keeps the order the user chose across a rebuild of the table from new rows', () => {
    const memory = new SortMemory<'toolName' | 'turns'>();
    assert.equal(memory.choice, undefined, 'the host’s order until a column is chosen');
    assert.deepEqual(memory.choose('turns'), { key: 'turns', direction: 'asc' });
    assert.deepEqual(memory.choose('turns'), { key: 'turns', direction: 'desc' }, 'chosen again: reversed');
    // A refresh builds the table again with a new tool: the kept choice orders it as before.
    const refreshed = [...tools, { toolName: 'g', turns: [1] }];
    const { key, direction } = memory.choice!;
    assert.deepEqual(
      sortRows(refreshed, key, direction).map((r) => r.toolName),
      ['a', 'c', 'b', 'f', 'e', 'd', 'g'],
    );
    assert.deepEqual(memory.choose('toolName'), { key: 'toolName', direction: 'asc' }, 'another column starts ascending');
  });
});
