/**
 * The steps every kind of run shares (src/agents/runLocks.ts, branchOpening.ts, branchSettlement.ts, runWrites.ts):
 * the SDK runner's run and an agent command's run that cannot start fail the same way, with the same kind, message
 * and summary, and write nothing. Real store, the offline demo agent, a real process that would leave a mark if it
 * were started.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { AdvancedSQLiteSession } from '../../../src/store';
import { createDemoAgent } from '../../../src/agents/demoAgent';
import { runOnBranch } from '../../../src/agents/branchRun';
import { runCommandOnBranch } from '../../../src/agents/command/commandRun';
import type { RunFailedEvent, RunOutcome } from '../../../src/shared/protocol/runEvents';
import { Workspace, tables } from '../../support/sessionHelpers';
import { seedSession } from './agentTestKit';
import { nodeCommand } from './command/commandKit';

describe('the steps every kind of run shares', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let dbPath: string;
  /** Written by the agent command if it is ever started. */
  let mark: string;
  let command: string;
  beforeEach(async () => {
    ws = new Workspace('asi-run-steps-');
    dbPath = ws.path('s.db');
    mark = ws.path('started');
    command = nodeCommand(ws.dir, 'marks.js', `require('fs').writeFileSync(${JSON.stringify(mark)}, 'x');`);
    await seedSession(dbPath, [['Hello', 'Hi! Ask me about the weather.']]);
  });
  afterEach(() => ws.cleanup());

  /** The same run asked of both kinds: the failure they report, and the file unchanged. */
  async function bothFail(args: { dbPath?: string; branchId?: string; signal?: AbortSignal; fork?: { fromTurn: number; name?: string } }) {
    const file = args.dbPath ?? dbPath;
    const before = existsSync(file) ? tables(file) : undefined;
    const common = { dbPath, sessionId: 's1', input: 'again', ...args };
    const sdk = await runOnBranch({ ...common, agent: createDemoAgent() });
    const cmd = await runCommandOnBranch({ ...common, agent: { kind: 'command', name: 'marks', command } });
    const shown = (o: RunOutcome) => {
      assert.equal(o.kind, 'run/failed', JSON.stringify(o));
      const f = o as RunFailedEvent;
      return { failure: f.failure, message: f.message, summary: f.written.summary };
    };
    assert.deepEqual(shown(cmd), shown(sdk));
    assert.equal(existsSync(mark), false, 'the agent command was started');
    if (before) assert.deepEqual(tables(file), before);
    else assert.equal(existsSync(file), false, 'a file was created');
    return shown(sdk);
  }

  it('a branch made from turn 1 elsewhere (no rows yet) cannot be continued by id: both say to fork instead', async () => {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await s.createBranchFromTurn(1, 'empty');
    s.close();
    const f = await bothFail({ branchId: 'empty' });
    assert.equal(f.failure, 'other');
    assert.match(f.message, /does not exist\. A branch made from turn 1 has no items until its first message is stored/);
  });

  it('a run stopped before it started is cancelled, before the file is even looked for', async () => {
    const f = await bothFail({ dbPath: ws.path('missing.db'), signal: AbortSignal.abort() });
    assert.deepEqual(f, {
      failure: 'cancelled',
      message: 'The run was cancelled before it started.',
      summary: "Nothing was written; branch 'main' is as it was.",
    });
  });
});
