/**
 * The agent's input is checked by hand (commandInput.ts: AG-UI's `RunAgentInputSchema` stays out of `agent-sessions
 * run`'s start, issue 43). The check is held to the schema here: every input we build passes both, and each way of
 * breaking one that the schema refuses, the check refuses too.
 */
import { strict as assert } from 'node:assert';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import {
  RunAgentInputError,
  buildCommandInput,
  checkRunAgentInput,
  type CommandInputArgs,
} from '../../../../src/agents/command/commandInput';

const BASE: CommandInputArgs = {
  runId: 'run-1',
  dbPath: '/tmp/conversations.db',
  tables: { sessions: 'agent_sessions', messages: 'agent_messages' },
  sessionId: 'alice',
  branchId: 'main',
  fork: null,
  model: null,
  input: 'What is the weather in Paris?',
  tools: { mode: 'live', nameOnly: [], table: { branchId: '', turn: 0, calls: [], hosted: [] } },
};

/** Inputs as the runs build them: text and items, forks, models, a replay table, text that is not plain ASCII. */
const BUILT: CommandInputArgs[] = [
  BASE,
  { ...BASE, input: '' },
  { ...BASE, input: 'Grüße, 東京 \u0000 \ud83d\ude00' },
  { ...BASE, input: [{ role: 'user', content: [{ type: 'input_text', text: 'items' }] }] },
  { ...BASE, fork: { fromBranchId: 'main', fromTurn: 1 }, branchId: 'retry-1', model: 'gpt-4.1-mini' },
  {
    ...BASE,
    tools: {
      mode: 'strict',
      nameOnly: ['get_time'],
      table: {
        branchId: 'main',
        turn: 2,
        calls: [
          { callId: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', output: '18°C', hasOutput: true, turn: 2, branchId: 'main' },
        ],
        hosted: [{ type: 'web_search_call', callId: 'ws1' }],
      },
    } as unknown as CommandInputArgs['tools'],
  },
];

/** Ways of breaking a built input, each one the schema refuses. */
const BROKEN: [string, (v: Record<string, unknown>) => unknown][] = [
  ['not an object', () => 'input'],
  ['a list', () => []],
  ['null', () => null],
  ['threadId missing', ({ threadId: _, ...v }) => v],
  ['threadId a number', (v) => ({ ...v, threadId: 7 })],
  ['runId missing', ({ runId: _, ...v }) => v],
  ['runId null', (v) => ({ ...v, runId: null })],
  ['protocolVersion a number', (v) => ({ ...v, protocolVersion: 1 })],
  ['messages missing', ({ messages: _, ...v }) => v],
  ['messages an object', (v) => ({ ...v, messages: {} })],
  ['a message without id', (v) => ({ ...v, messages: [{ role: 'user', content: 'x' }] })],
  ['a message with a numeric id', (v) => ({ ...v, messages: [{ id: 1, role: 'user', content: 'x' }] })],
  ['a message without content', (v) => ({ ...v, messages: [{ id: 'm', role: 'user' }] })],
  ['a message with numeric content', (v) => ({ ...v, messages: [{ id: 'm', role: 'user', content: 5 }] })],
  ['a message of no role', (v) => ({ ...v, messages: [{ id: 'm', role: 'robot', content: 'x' }] })],
  ['a message that is a string', (v) => ({ ...v, messages: ['hello'] })],
  ['tools an object', (v) => ({ ...v, tools: {} })],
  ['tools holding a broken tool', (v) => ({ ...v, tools: [{ name: 'x' }] })],
  ['context a string', (v) => ({ ...v, context: 'x' })],
  ['context holding a broken entry', (v) => ({ ...v, context: [{ description: 'x' }] })],
  ['forwardedProps null', (v) => ({ ...v, forwardedProps: null })],
];

const schemaAccepts = (v: unknown): boolean => RunAgentInputSchema.safeParse(v).success;
function checkAccepts(v: unknown): boolean {
  try {
    checkRunAgentInput(v);
    return true;
  } catch (err) {
    assert.ok(err instanceof RunAgentInputError, `not a RunAgentInputError: ${String(err)}`);
    return false;
  }
}

describe("the agent's input check (by hand, held to AG-UI's RunAgentInputSchema)", () => {
  it('passes every input the runs build, as the schema does', () => {
    for (const args of BUILT) {
      const value = buildCommandInput(args);
      assert.equal(schemaAccepts(value), true, `the schema refuses ${JSON.stringify(value)}`);
      assert.equal(checkAccepts(value), true);
    }
  });

  it('refuses each broken input the schema refuses, naming what is wrong', () => {
    const value = buildCommandInput(BASE);
    for (const [what, breakIt] of BROKEN) {
      const broken = breakIt(structuredClone(value));
      assert.equal(schemaAccepts(broken), false, `the schema accepts '${what}': the case tests nothing`);
      assert.equal(checkAccepts(broken), false, `the check accepts '${what}'`);
    }
    assert.throws(() => checkRunAgentInput({ ...value, runId: 3 }), /not a valid AG-UI RunAgentInput: runId is not a string/);
  });

  it('lets through what the schema lets through beside the fields it constrains (loose objects)', () => {
    const value = { ...buildCommandInput(BASE), extra: { any: 'thing' }, parentRunId: 'p' };
    assert.equal(schemaAccepts(value), true);
    assert.equal(checkAccepts(value), true);
  });
});
