/**
 * Replay through agent commands (docs/agent-command.md §2 `tools`, §4 "Replayed tool calls"): the version-2 input
 * carries the recorded calls of the re-run turn; a scripted agent (a real child process writing through our store)
 * honours them, runs live in strict, or reports what it did not do. The settlement marks each written call from what
 * it wrote, never from the report. Expectations come from what the test seeded and planned.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { eventLog, readBranch } from '../agentTestKit';
import { REPO, completed, failed, snapshot } from './commandKit';
import { RECORDED, scriptedAgent, seedRecordedSession, type AgentPlan } from './replayKit';

describe('agent commands: replaying the recorded tool results (scripted agent, real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-command-replay-'));
    dbPath = join(dir, 'conversations.db');
    await seedRecordedSession(dbPath);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(plan: AgentPlan, options: Partial<CommandRunOptions> = {}) {
    const log = eventLog();
    const lines: string[] = [];
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      agent: { kind: 'command', name: 'scripted', command: scriptedAgent(dir, plan), cwd: REPO },
      input: 'Weather in Paris and Lyon, then mail Ana.',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      graceMs: 300,
      onEvent: log.onEvent,
      log: (l) => void lines.push(l),
      ...options,
    });
    return { log, lines, outcome };
  }

  it('sends version 2 with the recorded calls of the re-run turn and its hosted calls; past the recording, live and none', async () => {
    const inputCopy = join(dir, 'input.json');
    completed(await run({ calls: [], inputCopy }, { fork: { fromTurn: 2, name: 'again' }, tools: { nameOnly: ['send_email'] } }).outcome);
    const props = (JSON.parse(readFileSync(inputCopy, 'utf8')) as { forwardedProps: { agentSessions: Record<string, unknown> } })
      .forwardedProps.agentSessions;
    assert.equal(props.version, 2);
    const recorded = (c: { call_id: string; name: string; arguments: string; output: string }) => ({
      callId: c.call_id,
      name: c.name,
      arguments: c.arguments,
      output: c.output,
      hasOutput: true,
      turn: 2,
      branchId: 'main',
    });
    assert.deepEqual(props.tools, {
      mode: 'replay',
      nameOnly: ['send_email'],
      recorded: [recorded(RECORDED.paris), recorded(RECORDED.lyon), recorded(RECORDED.email)],
      hosted: [{ type: 'web_search_call', callId: 'ws_1' }],
    });
    // Continuing a branch: nothing recorded to replay, and the tools run live.
    completed(await run({ calls: [], inputCopy }).outcome);
    const past = (JSON.parse(readFileSync(inputCopy, 'utf8')) as { forwardedProps: { agentSessions: Record<string, unknown> } })
      .forwardedProps.agentSessions;
    assert.deepEqual([past.version, past.tools], [2, { mode: 'live', nameOnly: [], recorded: [], hosted: [] }]);
  });

  it("a key the agent wrote into its answer and a call's arguments is redacted in the outcome and its replay summary", async () => {
    // Not shaped like an OpenAI key (no sk- prefix): only the key's own value can find it.
    const key = 'proj-SECRETabcdef1234567890XYZ';
    const { log, lines, outcome } = run(
      { calls: [{ name: 'get_weather', arguments: JSON.stringify({ city: key }), output: 'replay' }], answer: `the key is ${key}` },
      { fork: { fromTurn: 2, name: 'leak' }, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OPENAI_API_KEY: key } },
    );
    const o = completed(await outcome);
    assert.ok(!JSON.stringify([o, log.events, lines]).includes(key), 'the key left the run');
    assert.equal(o.finalOutput, 'the key is [redacted]');
    assert.deepEqual(
      o.replay?.marks.map((m) => m.arguments),
      ['{"city":"[redacted]"}'],
    );
    assert.match(o.replay?.divergence?.diff.join(' ') ?? '', /\[redacted\]/);
  });

  it('a command that honours replay writes the recorded outputs: its calls are marked replayed, in any order', async () => {
    const { log, outcome } = run(
      {
        calls: [
          // Lyon first, Paris with other spacing and key order: both still match; the e-mail by name only.
          { name: 'get_weather', arguments: '{"city":"Lyon"}', output: 'replay' },
          { name: 'get_weather', arguments: '{ "city" : "Paris" }', output: 'replay' },
          { name: 'send_email', arguments: '{"to":"ana@example.com","at":"2026-12-05T03:00:00Z"}', output: 'replay' },
        ],
      },
      { fork: { fromTurn: 2, name: 'replayed' }, tools: { nameOnly: ['send_email'] } },
    );
    const done = completed(await outcome);
    assert.deepEqual(
      done.replay?.marks.map((m) => [m.callId, m.name, m.outcome, m.recordedCallId, m.reported]),
      [
        ['call_new_1', 'get_weather', 'replayed', 'call_lyon', undefined],
        ['call_new_2', 'get_weather', 'replayed', 'call_paris', undefined],
        ['call_new_3', 'send_email', 'replayed', 'call_email', undefined],
      ],
    );
    assert.deepEqual(
      [done.replay?.mode, done.replay?.source, done.replay?.recordedCalls, done.replay?.hosted],
      ['replay', { branchId: 'main', turn: 2 }, 3, ['web_search_call']],
    );
    assert.deepEqual(done.replay?.disagreements, []);
    // The order differs from the recording's: step 1 called Lyon where the recording called Paris.
    assert.deepEqual([done.replay?.divergence?.step, done.replay?.divergence?.diff], [1, ['city: "Paris" → "Lyon"']]);
    // The live view showed the agent's reports with the outputs.
    const outputs = log.events.flatMap((e) => (e.kind === 'tool/output' ? [[e.output, e.replay?.outcome, e.replay?.recordedCallId]] : []));
    assert.deepEqual(outputs, [
      [RECORDED.lyon.output, 'replayed', 'call_lyon'],
      [RECORDED.paris.output, 'replayed', 'call_paris'],
      [RECORDED.email.output, 'replayed', 'call_email'],
    ]);
    assert.deepEqual((await readBranch(dbPath, 'replayed')).turns, [1, 2]);
  });

  it('in strict, a command that runs a call live is rolled back whole (usage or not) and the message names the nearest call', async () => {
    const before = await snapshot(dbPath);
    const o = failed(
      await run(
        {
          calls: [
            { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'replay' },
            // Misbehaving: strict asks it to fail before running an unmatched call; it ran the tool instead.
            { name: 'get_weather', arguments: '{"city":"Berlin"}', output: 'Berlin: 9°C', report: 'none' },
          ],
          storeUsage: true,
        },
        { fork: { fromTurn: 2, name: 'strict' }, tools: { mode: 'strict' } },
      ).outcome,
    );
    assert.match(
      o.message,
      /^Strict replay: the agent ran get_weather\(\{"city":"Berlin"\}\) live, which matches no recorded call, so the run was rolled back and nothing it wrote was kept\. Nearest recorded call: get_weather \(call_lyon\): city: "Lyon" → "Berlin"\./,
    );
    assert.deepEqual(
      o.replay?.marks.map((m) => [m.name, m.outcome, m.recordedCallId]),
      [
        ['get_weather', 'replayed', 'call_paris'],
        ['get_weather', 'unmatched', 'call_lyon'],
      ],
    );
    assert.equal(o.usage, null);
    assert.equal(o.written.turn, null);
    assert.match(o.written.summary, /The new branch 'strict' made for this run was deleted again/);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('in strict, a call whose arguments match but whose written output is not the recorded one ran live: rolled back too', async () => {
    const before = await snapshot(dbPath);
    const o = failed(
      await run(
        { calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'Paris: 25°C today', report: 'none' }] },
        { fork: { fromTurn: 2, name: 'strict2' }, tools: { mode: 'strict' } },
      ).outcome,
    );
    assert.match(
      o.message,
      /^Strict replay: the agent ran get_weather\(\{"city":"Paris"\}\) live: it matches the recorded call get_weather \(call_paris\), but the output it wrote is not the recorded one/,
    );
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('in strict, a command that refuses an unmatched call (RUN_ERROR) is rolled back whole, even after writing and spending', async () => {
    const before = await snapshot(dbPath);
    const o = failed(
      await run(
        {
          calls: [
            { name: 'get_weather', arguments: '{"city":"Paris"}', output: 'replay' },
            { name: 'get_weather', arguments: '{"city":"Berlin"}', output: 'refuse' },
          ],
          storeUsage: true,
        },
        { fork: { fromTurn: 2, name: 'refused' }, tools: { mode: 'strict' } },
      ).outcome,
    );
    assert.match(
      o.message,
      /^The agent command 'scripted' reported an error: Strict replay: get_weather\(\{"city":"Berlin"\}\) matches no recorded call; it was not run\./,
    );
    // The refused call was never written: its mark is the agent's report, with the arguments its events showed.
    assert.deepEqual(
      o.replay?.marks.map((m) => [m.callId, m.outcome, m.recordedCallId, m.arguments]),
      [
        ['call_new_1', 'replayed', 'call_paris', '{"city":"Paris"}'],
        ['call_new_2', 'unmatched', null, '{"city":"Berlin"}'],
      ],
    );
    assert.deepEqual(o.replay?.disagreements, []);
    assert.deepEqual([o.usage, o.written.turn], [null, null]);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('a report that lies is shown as a disagreement; the call is marked by what was written', async () => {
    const { log, outcome } = run(
      {
        // Reports it replayed Paris, but wrote today's weather.
        calls: [
          {
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
            output: 'Paris: 25°C today',
            report: { outcome: 'replayed', recordedCallId: 'call_paris' },
          },
        ],
        extraReports: [{ callId: 'call_ghost', name: 'send_email', outcome: 'replayed', recordedCallId: 'call_email' }],
      },
      { fork: { fromTurn: 2, name: 'liar' } },
    );
    const done = completed(await outcome);
    assert.deepEqual(
      done.replay?.marks.map((m) => [m.outcome, m.recordedCallId, m.reported]),
      [['live', 'call_paris', 'replayed']],
    );
    assert.deepEqual(done.replay?.disagreements, [
      'get_weather (call_new_1): reported replayed from call_paris, but its written output is not a recorded output of a matching call',
      'send_email (call_ghost): reported replayed from call_email, but no such call was written',
    ]);
    // The live view showed what it reported (its word, while the run went); the outcome has ours.
    const shown = log.events.find((e) => e.kind === 'tool/output');
    assert.deepEqual(shown?.kind === 'tool/output' && shown.replay, { outcome: 'replayed', recordedCallId: 'call_paris' });
  });

  it('a version-1 agent that runs its tools live and reports nothing: its calls are marked live', async () => {
    const done = completed(
      await run(
        { calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'Paris: 25°C today', report: 'none' }] },
        { fork: { fromTurn: 2, name: 'v1' } },
      ).outcome,
    );
    assert.deepEqual(
      done.replay?.marks.map((m) => [m.outcome, m.recordedCallId, m.reported]),
      [['live', 'call_paris', undefined]],
    );
    assert.deepEqual(done.replay?.disagreements, []);
  });

  it('tool-replay events that are not reports are ignored and counted in the outcome', async () => {
    const done = completed(
      await run(
        {
          calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'replay' }],
          rawReports: [
            { callId: 'x', name: 'get_weather', outcome: 'maybe' },
            'replayed',
            { callId: 'y'.repeat(600), name: 'n', outcome: 'live' },
          ],
        },
        { fork: { fromTurn: 2, name: 'noisy' } },
      ).outcome,
    );
    assert.match(
      done.written.summary,
      /sent 3 agent-sessions\.tool-replay event\(s\) whose value is not \{ callId, name, outcome, recordedCallId \}; they were ignored/,
    );
    assert.deepEqual(done.replay?.disagreements, []);
    assert.deepEqual(
      done.replay?.marks.map((m) => m.outcome),
      ['replayed'],
    );
  });

  it('--tools live marks every call live, even one whose output is the recorded one', async () => {
    const done = completed(
      await run(
        { calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: RECORDED.paris.output, report: 'none' }] },
        { fork: { fromTurn: 2, name: 'live' }, tools: { mode: 'live' } },
      ).outcome,
    );
    assert.deepEqual(
      done.replay?.marks.map((m) => [m.outcome, m.recordedCallId]),
      [['live', null]],
    );
  });
});
