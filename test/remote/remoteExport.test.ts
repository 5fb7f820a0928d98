// Export from server stores (exportFromReader over RemoteSessionSource) against real PostgreSQL and Redis: the same
// conversation written to a session file and to a server store exports to the same JSONL and Markdown (a tool output
// named by its call, though the server stores record no tool names), and a missing session is named.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession, exportFromReader, exportSession } from '../../src/store';
import { openRemoteStore } from '../../src/store/remote/openRemoteStore';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { RedisSession } from '../../src/store/remote/redisSession';
import { RemoteSessionSource } from '../../src/store/remote/remoteSessionSource';
import { freshPostgresDatabase, freshRedisPrefix, sharedRedis } from '../support/servers';
import { TRIP } from './remoteHelpers';

async function text(run: (sink: (chunk: string) => void) => Promise<unknown>): Promise<string> {
  let out = '';
  await run((c) => {
    out += c;
  });
  return out;
}

for (const kind of ['PostgreSQL', 'Redis'] as const) {
  describe(`export from ${kind} (real server)`, () => {
    let source: RemoteSessionSource;
    let dir: string;
    let file: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'asi-remote-export-'));
      file = join(dir, 'trip.db');
      const local = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: file, createTables: true });
      await local.addItems(TRIP);
      local.close();
      if (kind === 'PostgreSQL') {
        const url = await freshPostgresDatabase();
        const s = new PostgresSession({ sessionId: 'trip', connection: { url }, createTables: true });
        await s.addItems(TRIP);
        await s.close();
        source = new RemoteSessionSource(await openRemoteStore({ url }));
      } else {
        const { url } = await sharedRedis();
        const keyPrefix = freshRedisPrefix().replace(/:$/, '');
        const s = new RedisSession({ sessionId: 'trip', connection: { url }, keyPrefix });
        await s.addItems(TRIP);
        await s.close();
        source = new RemoteSessionSource(await openRemoteStore({ url, keyPrefix }));
      }
    });
    after(async () => {
      await source?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('exports JSONL as a session file with the same conversation does, one input item per line', async () => {
      const remote = await text((sink) => exportFromReader(source, 'jsonl', { sessionId: 'trip' }, sink));
      const local = await text((sink) => exportSession(file, 'jsonl', { sessionId: 'trip' }, sink));
      assert.equal(remote, local);
      assert.equal(remote.trim().split('\n').length, TRIP.length);
    });

    it('exports Markdown as a session file with the same conversation does', async () => {
      const remote = await text((sink) => exportFromReader(source, 'md', { sessionId: 'trip', branchId: 'main' }, sink));
      const local = await text((sink) => exportSession(file, 'md', { sessionId: 'trip', branchId: 'main' }, sink));
      // The two were written a moment apart: everything but the times is the same, the output named by its call.
      // (Redis keeps no time per item, so its turns have no time line.)
      const times = (md: string) =>
        md.replace(/^_\d{4}-\d\d-\d\d \d\d:\d\d:\d\d_\n\n/gmu, '').replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/gu, '<time>');
      assert.equal(times(remote), times(local));
      assert.match(remote, /\*\*Tool output\*\* `get_weather` \(`call_1`\)\n\n```text get_weather\nLisbon: 22°C, sunshine\n```/u);
    });

    it('says which session is missing', async () => {
      await assert.rejects(
        text((sink) => exportFromReader(source, 'jsonl', { sessionId: 'no-such-session' }, sink)),
        /There is no session 'no-such-session'/,
      );
    });
  });
}
