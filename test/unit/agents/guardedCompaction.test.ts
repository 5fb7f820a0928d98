/**
 * Our runs' compaction recorded by the history guard (docs/history-guard.md): a run's session, opened as every run
 * opens it (`openOnBranch`, what the SDK runner and agent commands share) with the run's `guardStorePath`, records
 * what its compaction replaces in the guard store, the file guarded or not; without the option nothing is recorded.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { openOnBranch, type OpenedBranch } from '../../../src/agents/branchOpening';
import { RunReporter } from '../../../src/agents/runReporter';
import { HistoryGuardStore } from '../../../src/store/guard/guardStore';
import { Workspace, mk, query } from '../../support/sessionHelpers';

async function openRun(dbPath: string, guardStorePath?: string): Promise<OpenedBranch> {
  const reporter = new RunReporter({ sessionId: 's1', input: 'compact' });
  const opened = await openOnBranch({ dbPath, sessionId: 's1', ...(guardStorePath !== undefined ? { guardStorePath } : {}) }, reporter, {
    classify: (err) => ({ failure: 'other', message: String(err) }),
    agentMakesTurnOneFork: false,
  });
  if ('kind' in opened) throw new Error(`the run did not open: ${JSON.stringify(opened)}`);
  return opened;
}

describe("a run's compaction and the history guard", () => {
  let ws: Workspace;
  beforeEach(async () => {
    ws = new Workspace('asi-guard-run-');
    const s = ws.open();
    await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2'), mk.assistant('a2')]);
    s.close();
  });
  afterEach(() => ws.cleanup());

  const texts = () =>
    query<{ message_data: string }>(
      ws.path(),
      "SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id WHERE s.branch_id = 'main' ORDER BY s.sequence_number",
    ).map((r) => r.message_data);

  it('records the replaced items when the run has a guard store', async () => {
    const guardPath = join(ws.dir, 'guard.db');
    const before = texts();
    const { session } = await openRun(ws.path(), guardPath);
    try {
      await session.replaceHistoryWithCompaction([{ type: 'compaction', encrypted_content: 'x' } as unknown as AgentInputItem]);
    } finally {
      await session.close();
    }
    const guard = HistoryGuardStore.open(guardPath, { readonly: true });
    try {
      const [layer] = guard.layersOf(ws.path(), 's1', 'main');
      assert.equal(layer?.cause, 'our-compaction');
      assert.deepEqual(
        guard.layerItems(layer!.layerId).map((i) => i.messageData),
        before,
      );
    } finally {
      guard.close();
    }
  });

  it('records nothing, and makes no store, without one', async () => {
    const { session } = await openRun(ws.path());
    try {
      await session.replaceHistoryWithCompaction([{ type: 'compaction', encrypted_content: 'x' } as unknown as AgentInputItem]);
    } finally {
      await session.close();
    }
    assert.equal(existsSync(join(ws.dir, 'guard.db')), false);
  });
});
