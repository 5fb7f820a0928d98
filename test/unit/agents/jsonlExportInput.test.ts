/**
 * A JSONL export is valid `@openai/agents` input: the real runner takes its items as a run's input (and as the history
 * of a session built from an import) and hands them to the model unchanged. The model is the offline ScriptedModel.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { Agent, Runner, tool, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import { writeDemoDatabase } from '../../../scripts/demo';
import { ScriptedModel } from '../../../src/agents/scriptedModel';
import { AdvancedSQLiteSession, exportSession, exportSessionToFile, importJsonlFile } from '../../../src/store';
import { tempDir } from '../../support/tempFiles';

describe('JSONL export as @openai/agents input', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-jsonl-run-');
  const db = join(tmp.dir, 'demo.db');
  let items: AgentInputItem[] = [];
  before(async () => {
    await writeDemoDatabase(db);
    let text = '';
    await exportSession(db, 'jsonl', { sessionId: 'weather-trip', branchId: 'lisbon-instead' }, (c) => {
      text += c;
    });
    items = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AgentInputItem);
  });
  after(() => tmp.cleanup());

  function agent(seen: AgentInputItem[][]): Agent {
    const weather = tool({
      name: 'get_weather',
      description: 'w',
      parameters: z.object({ city: z.string() }),
      execute: async () => 'sunny',
    });
    const convert = tool({
      name: 'convert_temperature',
      description: 'c',
      parameters: z.object({ celsius: z.number() }),
      execute: async () => 'x',
    });
    return new Agent({
      name: 'replay',
      instructions: 'Answer briefly.',
      model: new ScriptedModel((input) => {
        seen.push(JSON.parse(JSON.stringify(input)) as AgentInputItem[]);
        return { kind: 'text', text: 'ok' };
      }),
      tools: [weather, convert],
    });
  }

  it('runs with the exported items as input, which reach the model unchanged', async () => {
    assert.ok(
      items.some((i) => (i as { type?: string }).type === 'function_call_result'),
      'the export holds tool outputs',
    );
    const seen: AgentInputItem[][] = [];
    const next = { role: 'user', content: 'And tomorrow?' } as AgentInputItem;
    const result = await new Runner({ tracingDisabled: true }).run(agent(seen), [...items, next]);
    assert.equal(result.finalOutput, 'ok');
    assert.equal(seen.length, 1);
    const input = seen[0]!;
    assert.equal(input.length, items.length + 1);
    // The runner may add nothing and drop nothing: types, roles, call ids and tool names in order.
    const shape = (i: AgentInputItem) => {
      const r = i as Record<string, unknown>;
      return [r.type ?? 'message', r.role ?? null, r.callId ?? r.call_id ?? null, r.name ?? null];
    };
    assert.deepEqual(input.slice(0, items.length).map(shape), items.map(shape));
  });

  it('an imported JSONL file is a session the runner continues', async () => {
    const file = join(tmp.dir, 'lisbon.jsonl');
    await exportSessionToFile(db, file, 'jsonl', { sessionId: 'weather-trip', branchId: 'lisbon-instead' });
    const target = join(tmp.dir, 'imported.db');
    await importJsonlFile(target, file, { sessionId: 'eval-1', createTables: true });
    const session = new AdvancedSQLiteSession({ sessionId: 'eval-1', dbPath: target });
    try {
      const seen: AgentInputItem[][] = [];
      await new Runner({ tracingDisabled: true }).run(agent(seen), 'And tomorrow?', { session });
      assert.equal(seen[0]!.length, items.length + 1);
      const turns = await session.getConversationTurns();
      assert.equal(turns.length, items.filter((i) => (i as { role?: string }).role === 'user').length + 1);
    } finally {
      session.close();
    }
  });
});
