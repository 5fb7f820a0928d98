/** The README's first command writes its demo through the real runner: check what lands in the file. */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { writeDemoDatabase } from '../../../scripts/demo';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../src/store';
import { tempDir } from '../../support/tempFiles';

describe('npm start demo database', function () {
  this.timeout(60_000);
  it('holds two sessions, three branches with fork points, tool calls and usage', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'conversations.db');
      await writeDemoDatabase(path);
      const db = openSessionDatabase(path);
      try {
        assert.deepEqual(
          db
            .listSessions()
            .map((s) => s.sessionId)
            .sort(),
          ['support-chat', 'weather-trip'],
        );
        const tree = db.getBranchTree('weather-trip').map((b) => [b.branchId, b.parentBranchId, b.forkTurn]);
        assert.deepEqual(tree, [
          ['main', null, null],
          ['lisbon-instead', 'main', 3],
          ['oslo-retry', 'main', 4],
        ]);
      } finally {
        db.close();
      }
      const s = new AdvancedSQLiteSession({ sessionId: 'weather-trip', dbPath: path, readonly: true });
      try {
        const tools = await s.getToolUsage('main');
        assert.deepEqual(
          tools.map((t) => [t.toolName, t.turn]),
          [
            ['get_weather', 2],
            ['convert_temperature', 3],
            ['get_weather', 3],
            ['get_weather', 4],
          ],
        );
        assert.deepEqual(
          (await s.getTurnUsage(undefined, 'lisbon-instead')).map((u) => u.userTurnNumber),
          [3, 4],
        );
        const usage = await s.getSessionUsage();
        assert.ok(usage && usage.totalTurns === 7 && usage.totalTokens > 0);
        const answer = (await s.getItems(1, 'lisbon-instead'))[0] as { content: { text: string }[] };
        assert.match(answer.content[0]!.text, /Paris: 18°C, light rain/);
      } finally {
        s.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
