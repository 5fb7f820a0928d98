/**
 * An SDK run's events never carry a secret it was given (docs/webview-protocol.md: "no event contains an API key"):
 * not in the model's text (streamed in pieces), a call's arguments, the items shown, the outcome's answer nor its
 * replay summary. Only tool outputs were redacted once; the rest reached the conversation view as the model wrote it.
 */
import { strict as assert } from 'node:assert';
import { Agent, tool } from '@openai/agents';
import { z } from 'zod';
import { runOnBranch } from '../../../src/agents/branchRun';
import { ScriptedModel } from '../../../src/agents/scriptedModel';
import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { Workspace } from '../../support/sessionHelpers';
import { seedSession } from './agentTestKit';

// Not shaped like an OpenAI key, so only the run's own list of secrets can find it.
const KEY = 'proj-SECRETKEY0123456789abcdefXYZ';

describe('an SDK run redacts what it shows', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-sdk-redact-')));
  afterEach(() => ws.cleanup());

  it('keeps the key out of every event and the outcome', async () => {
    const dbPath = ws.path('s.db');
    await seedSession(dbPath, [['Hello', 'Hi!']]);
    const readEnv = tool({
      name: 'read_env',
      description: 'Reads the environment.',
      parameters: z.object({ note: z.string() }),
      execute: async () => `OPENAI_API_KEY=${KEY}`,
    });
    let step = 0;
    const model = new ScriptedModel(() =>
      ++step === 1
        ? { kind: 'tools', calls: [{ name: 'read_env', arguments: { note: `using key ${KEY}` } }] }
        : { kind: 'text', text: `Your key is ${KEY}, and here it is again: ${KEY}.` },
    );
    const events: RunEvent[] = [];
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      agent: new Agent({ name: 'a', model, tools: [readEnv] }),
      input: 'Show me my key.',
      secrets: [KEY],
      onEvent: (e) => events.push(e),
    });
    assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
    const leaks = [...events, outcome].filter((e) => JSON.stringify(e).includes('SECRETKEY')).map((e) => e.kind);
    assert.deepEqual(leaks, []);
    // What was redacted is still there, as the marker: the text whole, in order, and the call's arguments.
    const text = events.flatMap((e) => (e.kind === 'text/delta' ? [e.delta] : [])).join('');
    assert.match(text, /^Your key is (\S+), and here it is again: \1\.$/);
    const called = events.find((e) => e.kind === 'tool/called');
    assert.ok(called && called.kind === 'tool/called' && called.arguments.includes('using key '), JSON.stringify(called));
    assert.equal(outcome.kind === 'run/completed' && outcome.finalOutput, text);
  });
});
