/**
 * The conversation view asks for a turn's context through the store worker (src/extension/context/contextRequests.ts),
 * not through a `SessionDatabase` of its own: a compaction item older than the history read must start the window there
 * too, and the answer must be the one the CLI gets from the file.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { buildTurnContext } from '../../../../src/store/context/turnContext';
import { useWorkerClient } from '../../../support/workerClient';

const user = (content: string) => ({ role: 'user', content }) as AgentInputItem;
const said = (text: string) =>
  ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }) as unknown as AgentInputItem;
const turns = (prefix: string, n: number): AgentInputItem[] => {
  const items: AgentInputItem[] = [];
  for (let i = 0; i < n; i++) items.push(user(`${prefix} q ${i}`), said(`${prefix} a ${i}`));
  return items;
};

describe('turn context through the store worker (the view)', function () {
  this.timeout(60_000);
  const worker = useWorkerClient('asi-context-worker-');

  it('starts the window at a compaction item over 1,000 items back, as the file read does', async () => {
    const path = join(worker.dir, 'far.db');
    const session = new AdvancedSQLiteSession({ dbPath: path, sessionId: 's1', createTables: true });
    const compaction = { type: 'compaction', encrypted_content: 'enc:summary' } as unknown as AgentInputItem;
    await session.addItems([...turns('old', 300), compaction, ...turns('new', 600), user('latest')]);
    session.close();
    const target = { sessionId: 's1', branchId: 'main', turn: 901 };

    const viaWorker = await buildTurnContext(await worker.client().openDatabase(path), undefined, target);
    assert.equal(viaWorker.requests[0]!.itemCount, 1 + 1200 + 1, 'the compaction item, the items after it and the turn');
    assert.equal(viaWorker.outsideCount, 600);
    assert.ok(viaWorker.notes.some((n) => n.code === 'compaction'));

    const file = openSessionDatabase(path, { readonly: true });
    try {
      assert.deepEqual(viaWorker, await buildTurnContext(file, undefined, target));
    } finally {
      file.close();
    }
  });
});
