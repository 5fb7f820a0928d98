/**
 * A legacy row: a JS-shaped `hosted_tool_call` written by an old JS writer, whose `providerData` has no `type`. The
 * runner decides a built-in call's kind from `providerData.type` and refused the whole history ("Unsupported
 * built-in tool call type"); the store now reads such a row as the call its `name` names. Continued here through the
 * real runner against the loopback Responses server, with the request checked for the call as the API takes it.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AdvancedSQLiteSession, fromStoredItems, openDatabase } from '../../../src/store';
import { createConfiguredAgent, type ConfiguredAgent } from '../../../src/agents/agentConfig';
import { runOnBranch } from '../../../src/agents/branchRun';
import { startLoopbackOpenAI, type LoopbackOpenAI } from '../../support/loopbackOpenAI';
import { TEST_KEY } from './agentTestKit';

const LEGACY = {
  type: 'hosted_tool_call',
  id: 'ws_legacy_1',
  name: 'web_search_call',
  status: 'completed',
  providerData: { action: { type: 'search', query: 'weather in Lisbon' } },
};

describe('a legacy hosted_tool_call without providerData.type', function () {
  this.timeout(30_000);
  let dir: string;
  let dbPath: string;
  let server: LoopbackOpenAI;
  let agent: ConfiguredAgent;

  before(async () => {
    server = await startLoopbackOpenAI({ script: () => ({ kind: 'text', text: 'Still sunny.' }) });
  });
  after(() => server.close());
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-legacy-'));
    dbPath = join(dir, 'legacy.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, createTables: true });
    await s.addItems([
      { role: 'user', content: 'Weather in Lisbon?' },
      { type: 'web_search_call', id: 'ws_legacy_1', status: 'completed', action: { type: 'search', query: 'x' } },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.' }], status: 'completed' },
    ] as never);
    s.close();
    // The row as the old writer left it: the JS protocol item itself, with no type in providerData.
    const db = openDatabase(dbPath);
    db.prepare(`UPDATE agent_messages SET message_data = ? WHERE message_data LIKE '%ws_legacy_1%'`).run(JSON.stringify(LEGACY));
    db.close();
    agent = await createConfiguredAgent(
      { model: 'loopback-model', instructions: 'Answer briefly.', baseUrl: server.baseUrl, maxRetries: 0 },
      TEST_KEY,
      { trusted: true, cwd: dir },
    );
  });
  afterEach(async () => {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is read as the built-in call its name names', () => {
    const [item] = fromStoredItems([LEGACY]) as unknown as { type: string; name: string; providerData: Record<string, unknown> }[];
    assert.deepEqual(item, { ...LEGACY, providerData: { ...LEGACY.providerData, type: 'web_search_call' } });
  });

  it('the session continues through the runner: the call reaches the model as a web_search_call', async () => {
    const from = server.requests.length;
    const outcome = await runOnBranch({ dbPath, sessionId: 's1', agent, input: 'And tomorrow?' });
    assert.equal(outcome.kind, 'run/completed', outcome.kind === 'run/failed' ? outcome.message : '');
    const input = server.requests[from]?.body.input as Record<string, unknown>[];
    const call = input.find((i) => i.id === 'ws_legacy_1');
    assert.deepEqual(call && [call.type, call.status, (call.action as { query?: string }).query], [
      'web_search_call',
      'completed',
      'weather in Lisbon',
    ]);
  });
});
