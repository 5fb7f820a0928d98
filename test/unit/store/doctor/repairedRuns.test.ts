/**
 * After the doctor (issue 45), a run continues: on the dangling-tool-call fixture repaired by `--fix`, and on the
 * empty-main fixture (reported only, so `--fix` leaves it; the run continues on the branch that holds the turns), the
 * real `@openai/agents` runner with our `AdvancedSQLiteSession` runs a turn with a tool round trip against the
 * loopback Responses server, which refuses a call without its output as the API does; the repaired call reaches the
 * model with the doctor's output (unrepaired, the runner drops it: the model never sees it). Then Python's own reads
 * (python3's sqlite3 running the SDK 0.22.0 `get_items` query and `json.loads`) return the items the conformance
 * fixture recorded for the branch, the ones the bug and the repair added, and the run's, in order; the other
 * sessions and branches still read as recorded.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, Runner, tool } from '@openai/agents';
import { z } from 'zod';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { ADDED_OUTPUT_TEXT } from '../../../../src/store/doctor/findingKinds';
import { repairSessionFile } from '../../../../src/store/doctor/repairs';
import { CONFORMANCE_DIR, makeDoctorFixture } from '../../../support/doctorFixtures';
import { startLoopbackOpenAI, type LoopbackOpenAI } from '../../../support/loopbackOpenAI';
import { tempDir } from '../../../support/tempFiles';

type Json = Record<string, unknown>;

/** What the Python SDK recorded for each session and branch of ref-multisession.db (its `get_items`). */
const RECORDED = JSON.parse(readFileSync(join(CONFORMANCE_DIR, 'ref-multisession.expected.json'), 'utf8')) as {
  queries: Record<string, { branches: Record<string, { get_items: Json[] }> }>;
};
const recorded = (session: string, branch: string): Json[] => RECORDED.queries[session]!.branches[branch]!.get_items;

/** Python 0.22.0's AdvancedSQLiteSession.get_items (no limit), run by Python: its rows as json.loads reads them. */
const PYTHON_GET_ITEMS = [
  'import json, sqlite3, sys',
  'conn = sqlite3.connect(sys.argv[1])',
  'rows = conn.execute("""',
  '    SELECT m.message_data',
  '    FROM agent_messages m',
  '    JOIN message_structure s ON m.id = s.message_id',
  '    WHERE m.session_id = ? AND s.branch_id = ?',
  '    ORDER BY s.sequence_number ASC',
  '""", (sys.argv[2], sys.argv[3])).fetchall()',
  'items = []',
  'for (data,) in rows:',
  '    try:',
  '        items.append(json.loads(data))',
  '    except json.JSONDecodeError:',
  '        continue',
  'print(json.dumps(items))',
].join('\n');

function pythonItems(file: string, session: string, branch: string): Json[] {
  const r = spawnSync('python3', ['-c', PYTHON_GET_ITEMS, file, session, branch], { encoding: 'utf8' });
  assert.equal(r.status, 0, `python3 failed (this test needs python3 with sqlite3): ${r.stderr}`);
  return JSON.parse(r.stdout) as Json[];
}

const FORECAST = 'Sunny in Paris, 22°C';
const getWeather = tool({
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async () => FORECAST,
});

describe('doctor: a run continues on the repaired branch (runner, loopback server, Python’s reads)', function () {
  this.timeout(30_000);
  const tmp = tempDir('asi-doctor-run-');
  let server: LoopbackOpenAI;
  let agent: Agent;
  const runner = new Runner({ tracingDisabled: true });
  after(() => tmp.cleanup());
  beforeEach(async () => {
    // One tool round trip per run: get_weather, then the answer once its output is the last input item.
    server = await startLoopbackOpenAI({
      script: (r) =>
        (r.body.input as Json[]).at(-1)?.type === 'function_call_output'
          ? { kind: 'text', text: 'It is sunny in Paris.' }
          : { kind: 'calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
    });
    const client = new OpenAI({ apiKey: 'sk-loopback-test', baseURL: server.baseUrl, organization: null, project: null, maxRetries: 0 });
    agent = new Agent({
      name: 'Continuer',
      instructions: 'Continue.',
      model: new OpenAIResponsesModel(client, 'gpt-4.1'),
      tools: [getWeather],
    });
  });
  afterEach(() => server.close());

  /** Runs one turn on `branch` and returns the items it added, as Python reads them. */
  async function continueOn(file: string, session: string, branch: string): Promise<{ before: Json[]; added: Json[] }> {
    const before = pythonItems(file, session, branch);
    const s = new AdvancedSQLiteSession({ sessionId: session, dbPath: file });
    try {
      await s.switchToBranch(branch);
      const result = await runner.run(agent, 'Continue please', { session: s });
      assert.equal(result.finalOutput, 'It is sunny in Paris.');
      // Our own read of the branch is Python's.
      assert.deepStrictEqual(await s.getStoredItems(null, branch), pythonItems(file, session, branch));
    } finally {
      s.close();
    }
    const after = pythonItems(file, session, branch);
    assert.deepStrictEqual(after.slice(0, before.length), before, 'the history changed');
    const added = after.slice(before.length);
    assert.deepStrictEqual(
      added.map((i) => (typeof i.role === 'string' ? i.role : i.type)),
      ['user', 'function_call', 'function_call_output', 'assistant'],
    );
    assert.deepStrictEqual(
      { call: added[1]!.call_id, output: added[2]!.call_id, text: added[2]!.output },
      { call: added[1]!.call_id, output: added[1]!.call_id, text: FORECAST },
    );
    return { before, added };
  }

  it('dangling-tool-call: after --fix, bob continues on main; the model gets the call with the added output', async () => {
    const file = join(tmp.dir, 'dangling.db');
    makeDoctorFixture('dangling-tool-call', file);
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'dangling.backup.db') });
    assert.equal(outcome.counts.outputsAdded, 1);
    assert.equal(findingCount(outcome.after), 0);

    const { before } = await continueOn(file, 'bob', 'main');
    // Python reads what the SDK recorded, the turn the killed run stored, and the doctor's output.
    assert.deepStrictEqual(before, [
      ...recorded('bob', 'main'),
      { content: 'And 12 * 12?', role: 'user' },
      {
        arguments: '{"expression": "12*12"}',
        call_id: 'call_b9',
        name: 'calculator',
        type: 'function_call',
        id: 'fc_b9',
        status: 'completed',
      },
      { type: 'function_call_output', call_id: 'call_b9', output: ADDED_OUTPUT_TEXT },
    ]);
    // The first request sent the call and its added output (the server refuses a call without one).
    const input = server.requests[0]!.body.input as Json[];
    const at = input.findIndex((i) => i.type === 'function_call' && i.call_id === 'call_b9');
    const sent = input[at + 1]!;
    assert.deepStrictEqual(
      { type: sent.type, call_id: sent.call_id, output: sent.output },
      { type: 'function_call_output', call_id: 'call_b9', output: ADDED_OUTPUT_TEXT },
    );
    // The other sessions and branches read as recorded.
    for (const [session, branch] of [
      ['alice', 'main'],
      ['alice', 'alt'],
    ] as const) {
      assert.deepStrictEqual(pythonItems(file, session, branch), recorded(session, branch), `${session}/${branch}`);
    }
    assert.equal(findingCount(checkSessionFile(file)), 0);
  });

  it('dangling-tool-call without the repair: the runner drops the unanswered call, so the model never sees it', async () => {
    const file = join(tmp.dir, 'unrepaired.db');
    makeDoctorFixture('dangling-tool-call', file);
    const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: file });
    try {
      await runner.run(agent, 'Continue please', { session: s });
    } finally {
      s.close();
    }
    // The file still holds the call; what the model got lacks it (the SDKs' runners drop calls without an output).
    const input = server.requests[0]!.body.input as Json[];
    assert.equal(
      input.some((i) => i.call_id === 'call_b9'),
      false,
    );
    assert.ok(pythonItems(file, 'bob', 'main').some((i) => i.call_id === 'call_b9'));
  });

  it('empty-main: --fix leaves it (reported only); alice continues on alt, the branch that holds her turns', async () => {
    const file = join(tmp.dir, 'empty-main.db');
    makeDoctorFixture('empty-main', file);
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'empty-main.backup.db') });
    assert.equal(outcome.backup, null);
    assert.deepEqual(outcome.after.totals, { 'empty-main': 1 });
    assert.deepStrictEqual(pythonItems(file, 'alice', 'main'), []);

    const { before } = await continueOn(file, 'alice', 'alt');
    assert.deepStrictEqual(before, recorded('alice', 'alt'));
    assert.deepStrictEqual(pythonItems(file, 'bob', 'main'), recorded('bob', 'main'));
    // Still reported: main stays empty until the user chooses which branch becomes it.
    assert.deepEqual(checkSessionFile(file).totals, { 'empty-main': 1 });
  });
});
