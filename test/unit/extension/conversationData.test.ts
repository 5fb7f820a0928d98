/** The conversation view's tables, built from a file written through the store. */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { branchViews, tables } from '../../../src/extension/conversationData';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../src/store';
import { tempDir } from '../../support/tempFiles';

const usage = (total: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: total - 1,
      outputTokens: 1,
      totalTokens: total,
      inputTokensDetails: [{ cached_tokens: 4 }],
      outputTokensDetails: [{ reasoning_tokens: 2 }],
    },
  },
});

describe('conversation view tables', () => {
  it('lists own turns without usage rows, never turns copied from the parent', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 't.db');
      const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
      await s.addItems([{ role: 'user', content: 'one' }]);
      await s.storeRunUsage(usage(10));
      await s.addItems([{ role: 'user', content: 'two' }]); // no usage stored for turn 2
      await s.addItems([{ role: 'user', content: 'three' }]);
      await s.storeRunUsage(usage(30));
      await s.createBranchFromTurn(3, 'alt'); // copies turns 1 and 2 (their usage stays on main)
      await s.addItems([{ role: 'user', content: 'alt three' }]); // alt's own turn 3, no usage
      await s.addItems([{ type: 'function_call', name: 'lookup', callId: 'c', arguments: '{}', status: 'completed' }] as never);
      s.close();
      const db = openSessionDatabase(path);
      try {
        const branches = branchViews(db.getBranchTree('s'), 'main');
        const alt = tables(db, 's', 'alt', branches);
        assert.deepEqual(alt.turnsWithoutUsage, [{ branchId: 'alt', turn: 3 }]);
        assert.deepEqual(alt.usage, []);
        assert.deepEqual(alt.tools, [{ toolName: 'lookup', calls: 1, turns: [3], turnCount: 1 }]);
        const main = tables(db, 's', 'main', branches);
        assert.deepEqual(main.turnsWithoutUsage, [{ branchId: 'main', turn: 2 }]);
        assert.deepEqual(
          main.usage.map((u) => [u.turn, u.totalTokens, u.cachedTokens, u.reasoningTokens]),
          [
            [1, 10, 4, 2],
            [3, 30, 4, 2],
          ],
        );
        const all = tables(db, 's', null, branches);
        assert.deepEqual(all.turnsWithoutUsage, [
          { branchId: 'alt', turn: 3 },
          { branchId: 'main', turn: 2 },
        ]);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
