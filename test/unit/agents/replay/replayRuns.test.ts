/**
 * Replay in real SDK runs with scripted models (src/agents/replay/): no tool runs again when replay promises it does
 * not — tools of agents reached through `handoff(...)`, a local shell and apply_patch — and what decides a call's
 * recorded output is the model's call order, its tool's namespace, its arguments' exact text when they are not JSON.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  Usage,
  applyPatchTool,
  handoff,
  shellTool,
  tool,
  toolNamespace,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { runOnBranch } from '../../../../src/agents/branchRun';
import type { RunOutcome } from '../../../../src/shared/protocol/runEvents';
import type { ToolsMode } from '../../../../src/shared/protocol/replay';

const fc = (callId: string, name: string, args: string, extra: Record<string, unknown> = {}) => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
  ...extra,
});
const out = (callId: string, output: unknown) => ({ type: 'function_call_output', call_id: callId, output });
const user = (text: string) => ({ role: 'user', content: text });
const said = (text: string) => ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] });

let n = 0;
/** A model answering its requests in turn with the given output items (SDK shape), then with text. */
class ScriptedModel implements Model {
  readonly inputs: AgentInputItem[][] = [];
  constructor(private readonly steps: unknown[][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(JSON.parse(JSON.stringify(request.input)) as AgentInputItem[]);
    const step = this.steps[this.inputs.length - 1];
    const output = (step ?? [
      { id: `msg_${++n}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.' }] },
    ]) as ModelResponse['output'];
    return { usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }), output, responseId: `resp_${++n}` };
  }
  // The SDK's stream events, in the two this test needs (typed loosely: the protocol types are not exported).
  async *getStreamedResponse(request: ModelRequest): AsyncGenerator<never> {
    const r = await this.getResponse(request);
    yield { type: 'response_started' } as never;
    yield {
      type: 'response_done',
      response: {
        id: r.responseId!,
        usage: { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2, inputTokensDetails: {}, outputTokensDetails: {} },
        output: r.output,
      },
    } as never;
  }
  /** The outputs of earlier calls as the model got them, by call id. */
  saw(): Record<string, unknown> {
    const seen: Record<string, unknown> = {};
    for (const input of this.inputs)
      for (const item of input as unknown as Record<string, unknown>[])
        if (item.type === 'function_call_result') {
          // The SDK hands a text output to the model as `{type: 'text', text}`.
          const o = item.output as { type?: unknown; text?: unknown };
          seen[item.callId as string] = o?.type === 'text' ? o.text : o;
        }
    return seen;
  }
}
const call = (name: string, args: string, extra: Record<string, unknown> = {}) => ({
  type: 'function_call',
  id: `fc_new${++n}`,
  callId: `call_new${n}`,
  name,
  arguments: args,
  status: 'completed',
  ...extra,
});

/** A tool that notes each time it really runs. */
function looseTool(
  name: string,
  fired: string[],
  options: { needsApproval?: (c: unknown, i: unknown, id?: string) => Promise<boolean> } = {},
) {
  return tool({
    name,
    description: name,
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: true } as never,
    strict: false,
    ...(options.needsApproval ? { needsApproval: options.needsApproval } : {}),
    execute: async (input: unknown) => {
      fired.push(`${name} ${JSON.stringify(input)}`);
      return `live ${name}`;
    },
  });
}

describe('replay: SDK runs of a recorded turn', function () {
  this.timeout(60_000);
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'replay-runs-'));
    db = join(dir, 's.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function seed(turn: unknown[]): Promise<void> {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: db, createTables: true });
    try {
      await s.addItems([user('Hello'), said('Hi')] as never);
      await s.addItems(turn as never);
    } finally {
      s.close();
    }
  }
  const rerun = (agent: Agent, mode: ToolsMode, nameOnly?: string[]): Promise<RunOutcome> =>
    runOnBranch({ dbPath: db, sessionId: 's1', agent, input: 'again', fork: { fromTurn: 2 }, tools: { mode, nameOnly } });
  const marks = (o: RunOutcome) => o.replay?.marks.map((m) => [m.name, m.outcome, m.recordedCallId]);

  for (const given of ['an Agent', 'handoff(agent)'] as const)
    for (const mode of ['replay', 'strict'] as const)
      it(`replays the tools of an agent handed off to as ${given} (${mode}), without a false divergence`, async () => {
        await seed([
          user('Refund order 7'),
          fc('h1', 'transfer_to_billing', '{}'),
          out('h1', '{"assistant": "billing"}'),
          fc('r1', 'refund_order', '{"order_id":7}'),
          out('r1', 'refunded order 7 (recorded)'),
          said('Refunded.'),
        ]);
        const fired: string[] = [];
        const billingModel = new ScriptedModel([[call('refund_order', '{"order_id":7}')]]);
        const billing = new Agent({ name: 'billing', instructions: 'x', model: billingModel, tools: [looseTool('refund_order', fired)] });
        const triage = new Agent({
          name: 'triage',
          instructions: 'x',
          model: new ScriptedModel([[call('transfer_to_billing', '{}')]]),
          handoffs: [given === 'an Agent' ? billing : handoff(billing)],
        });
        const outcome = await rerun(triage, mode);
        assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
        assert.deepEqual(fired, [], 'the real refund must not run again');
        assert.deepEqual(marks(outcome), [['refund_order', 'replayed', 'r1']]);
        assert.equal(outcome.replay?.recordedCalls, 1, 'the handoff is no tool call');
        assert.equal(outcome.replay?.divergence, null);
        assert.ok(Object.values(billingModel.saw()).includes('refunded order 7 (recorded)'), JSON.stringify(billingModel.saw()));
      });

  it('replays a local shell command in strict instead of running it, and refuses another one', async () => {
    await seed([
      user('Clean up'),
      { type: 'shell_call', id: 'sh_1', call_id: 'call_sh1', status: 'completed', action: { commands: ['rm -rf important'] } },
      { type: 'shell_call_output', call_id: 'call_sh1', output: [{ stdout: 'gone', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
      said('Cleaned.'),
    ]);
    const ran: string[] = [];
    const shell = () =>
      shellTool({
        shell: {
          run: async (action) => {
            ran.push(action.commands.join(';'));
            return { output: [{ stdout: 'live', stderr: '', outcome: { type: 'exit', exitCode: 0 } }] };
          },
        },
      });
    const shellCall = (command: string) => ({
      type: 'shell_call',
      id: `sh_${++n}`,
      callId: `call_sh_${n}`,
      status: 'completed',
      action: { commands: [command] },
    });
    const same = await rerun(
      new Agent({ name: 'ops', instructions: 'x', model: new ScriptedModel([[shellCall('rm -rf important')]]), tools: [shell()] }),
      'strict',
    );
    assert.equal(same.kind, 'run/completed', JSON.stringify(same));
    assert.deepEqual(ran, [], 'the recorded command must not run again');
    assert.deepEqual(marks(same), [['shell', 'replayed', 'call_sh1']]);
    assert.deepEqual(same.replay?.hosted, [], 'a local shell is not run by the provider');

    const other = await rerun(
      new Agent({ name: 'ops', instructions: 'x', model: new ScriptedModel([[shellCall('rm -rf other')]]), tools: [shell()] }),
      'strict',
    );
    assert.equal(other.kind, 'run/failed');
    assert.deepEqual(ran, [], 'strict refuses before the command runs');
    assert.deepEqual(marks(other), [['shell', 'unmatched', 'call_sh1']]);
  });

  it('replays an apply_patch edit in strict instead of making it', async () => {
    await seed([
      user('Remove the config'),
      {
        type: 'apply_patch_call',
        id: 'ap_1',
        call_id: 'call_ap1',
        status: 'completed',
        operation: { type: 'delete_file', path: 'config.yaml' },
      },
      { type: 'apply_patch_call_output', call_id: 'call_ap1', status: 'completed', output: 'deleted config.yaml' },
      said('Removed.'),
    ]);
    const ran: string[] = [];
    const editor = {
      createFile: async () => (ran.push('create'), { status: 'completed' as const, output: 'live' }),
      updateFile: async () => (ran.push('update'), { status: 'completed' as const, output: 'live' }),
      deleteFile: async () => (ran.push('delete'), { status: 'completed' as const, output: 'live' }),
    };
    const model = new ScriptedModel([
      [
        {
          type: 'apply_patch_call',
          id: 'ap_new',
          callId: 'call_ap_new',
          status: 'completed',
          operation: { type: 'delete_file', path: 'config.yaml' },
        },
      ],
    ]);
    const outcome = await rerun(new Agent({ name: 'coder', instructions: 'x', model, tools: [applyPatchTool({ editor })] }), 'strict');
    assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
    assert.deepEqual(ran, []);
    assert.deepEqual(marks(outcome), [['apply_patch', 'replayed', 'call_ap1']]);
  });

  it('tells tools of one name in two namespaces apart', async () => {
    await seed([
      user('Refund 7 (dry run)'),
      fc('c_sandbox', 'refund', '{"order":7}', { namespace: 'sandbox' }),
      out('c_sandbox', 'DRY RUN'),
      said('ok'),
    ]);
    const fired: string[] = [];
    const agent = new Agent({
      name: 'ns',
      instructions: 'x',
      model: new ScriptedModel([[call('refund', '{"order":7}', { namespace: 'billing' })]]),
      tools: [
        ...toolNamespace({ name: 'billing', description: 'real', tools: [looseTool('refund', fired)] }),
        ...toolNamespace({ name: 'sandbox', description: 'dry', tools: [looseTool('refund', fired)] }),
      ],
    });
    const outcome = await rerun(agent, 'strict');
    assert.equal(outcome.kind, 'run/failed', JSON.stringify(outcome));
    assert.deepEqual(fired, []);
    assert.deepEqual(marks(outcome), [['billing.refund', 'unmatched', 'c_sandbox']]);
  });

  it('compares arguments that are not JSON as text: the identical call is replayed, another refused', async () => {
    await seed([user('Weather?'), fc('w1', 'get_weather', '{city: Paris}'), out('w1', 'Paris 18C (recorded)'), said('Mild')]);
    const fired: string[] = [];
    const model = new ScriptedModel([[call('get_weather', '{city: Paris}')]]);
    const same = await rerun(new Agent({ name: 'w', instructions: 'x', model, tools: [looseTool('get_weather', fired)] }), 'strict');
    assert.equal(same.kind, 'run/completed', JSON.stringify(same));
    assert.deepEqual(marks(same), [['get_weather', 'replayed', 'w1']]);
    assert.deepEqual(Object.values(model.saw()), ['Paris 18C (recorded)']);

    const other = await rerun(
      new Agent({
        name: 'w',
        instructions: 'x',
        model: new ScriptedModel([[call('get_weather', '{city: Lisbon}')]]),
        tools: [looseTool('get_weather', fired)],
      }),
      'strict',
    );
    assert.equal(other.kind, 'run/failed');
    assert.match((other as { message?: string }).message ?? '', /compared as text/);
    assert.deepEqual(marks(other), [['get_weather', 'unmatched', 'w1']]);
    assert.deepEqual(fired, []);
  });

  it('gives identical parallel calls their recorded outputs in the model order, whatever order their tools are reached in', async () => {
    await seed([
      user('Go'),
      fc('w1', 'get_weather', '{"city":"Paris"}'),
      fc('w2', 'get_weather', '{"city":"Paris"}'),
      out('w1', 'first'),
      out('w2', 'second'),
      fc('t1', 'tool_a', '{}'),
      out('t1', 'a'),
      said('ok'),
    ]);
    const fired: string[] = [];
    let slow: string | undefined;
    // The first call's approval check takes longer: its tool is reached after the second's.
    const needsApproval = async (_c: unknown, _i: unknown, callId?: string) => {
      slow ??= callId;
      if (callId === slow) await new Promise((r) => setTimeout(r, 30));
      return false;
    };
    const first = call('get_weather', '{"city":"Paris"}');
    const second = call('get_weather', '{"city":"Paris"}');
    const a = call('tool_a', '{}');
    const model = new ScriptedModel([[first, second, a]]);
    const agent = new Agent({
      name: 'o',
      instructions: 'x',
      model,
      tools: [looseTool('get_weather', fired, { needsApproval }), looseTool('tool_a', fired, { needsApproval })],
    });
    const outcome = await rerun(agent, 'replay');
    assert.deepEqual(model.saw(), { [first.callId]: 'first', [second.callId]: 'second', [a.callId]: 'a' });
    assert.deepEqual(
      outcome.replay?.marks.map((m) => [m.callId, m.recordedCallId]),
      [
        [first.callId, 'w1'],
        [second.callId, 'w2'],
        [a.callId, 't1'],
      ],
    );
    assert.equal(outcome.replay?.divergence, null);
  });
});
