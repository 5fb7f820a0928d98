/**
 * What an agent command streams, through the run module (src/agents/command/commandRun.ts) with real processes: the
 * API key split across two text deltas, two stderr chunks, two stderr lines, two tool-argument deltas or two lines
 * that are not events never shows whole or in parts, in the events, the log or the outcome; and a stdout line over
 * the event bound fails the run naming the bound, without gathering the line in memory.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { MAX_EVENT_LINE_CHARS } from '../../../../src/agents/command/commandLimits';
import { TEST_KEY, eventLog, seedSession } from '../agentTestKit';
import { failed, nodeCommand, snapshot } from './commandKit';

/** Every piece of `secret` at least 8 characters long that shows in `text`. */
function fragments(text: string, secret: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) found.add(secret.slice(i, i + 8));
  return [...found];
}

describe('agent commands: what they stream is redacted as a stream, and bounded', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-streams-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [['Weather in Paris?', 'Mild.']]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(options: Partial<CommandRunOptions> & Pick<CommandRunOptions, 'agent' | 'input'>) {
    const log = eventLog();
    const lines: string[] = [];
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      env: { PATH: process.env.PATH ?? '' },
      graceMs: 300,
      onEvent: log.onEvent,
      log: (l) => void lines.push(l),
      ...options,
    });
    return { log, lines, outcome };
  }

  /** A command that sends the key in halves every way there is, then fails naming it. */
  const LEAKER = `const k = process.env.OPENAI_API_KEY; const a = k.slice(0, 17), b = k.slice(17);
    const out = (e) => console.log(JSON.stringify(e));
    out({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' });
    out({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
    out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'the key is ' + a });
    out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: b + ', done' });
    out({ type: 'TEXT_MESSAGE_END', messageId: 'm' });
    out({ type: 'TOOL_CALL_START', toolCallId: 't', toolCallName: 'lookup' });
    out({ type: 'TOOL_CALL_ARGS', toolCallId: 't', delta: '{"key":"' + a });
    out({ type: 'TOOL_CALL_ARGS', toolCallId: 't', delta: b + '"}' });
    out({ type: 'TOOL_CALL_END', toolCallId: 't' });
    console.log('loading ' + a);
    console.log(b + ' loaded');
    process.stderr.write('chunked ' + a);
    setTimeout(() => {
      process.stderr.write(b + ' end\\n');
      console.error('lines ' + a);
      console.error(b);
      out({ type: 'RUN_ERROR', message: 'failed with ' + a });
      process.exit(1);
    }, 50);`;

  for (const via of ['apiKey', 'the environment it inherits (the CLI)'] as const) {
    it(`the key, given through ${via}, never shows whole or in halves`, async () => {
      const command = nodeCommand(dir, 'leaks.js', LEAKER);
      const { log, lines, outcome } = run({
        agent: { kind: 'command', name: 'leaky', command },
        input: 'hi',
        ...(via === 'apiKey' ? { apiKey: TEST_KEY } : { env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: TEST_KEY } }),
      });
      const o = failed(await outcome);
      const everything = JSON.stringify([log.events, lines, o]);
      assert.deepEqual(fragments(everything, TEST_KEY), [], 'a part of the key was shown');
      // What surrounds the key still shows, in order.
      assert.equal(log.text(), 'the key is [redacted], done');
      const call = log.events.find((e) => e.kind === 'tool/called');
      assert.equal(call?.kind === 'tool/called' && call.arguments, '{"key":"[redacted]"}');
      assert.deepEqual(o.command?.stderrTail, ['chunked [redacted] end', 'lines [redacted]', '']);
      assert.ok(
        lines.some((l) => l.includes('ignored a line that is not JSON: loading [redacted]')),
        lines.join('\n'),
      );
      assert.match(o.message, /reported an error: failed with/);
    });
  }

  it('a 50 MB stdout line fails the run naming the bound, and is never gathered in memory', async function () {
    const command = nodeCommand(
      dir,
      'long.js',
      `const out = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
       out({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' });
       const chunk = 'x'.repeat(1024 * 1024);
       process.stdout.write('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"');
       let n = 0;
       (function more() {
         while (n < 50) { n++; if (!process.stdout.write(chunk)) return process.stdout.once('drain', more); }
         process.stdout.write('"}\\n');
         out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'after' });
         out({ type: 'RUN_FINISHED', threadId: 's1', runId: 'r' });
       })();`,
    );
    const before = await snapshot(dbPath);
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const { log, outcome } = run({ agent: { kind: 'command', name: 'long', command }, input: 'hi' });
      const o = failed(await outcome);
      assert.match(
        o.message,
        /^The agent command 'long' sent 1 stdout line longer than 16,777,216 characters \(16 MiB\), the bound of one AG-UI event \(MAX_EVENT_LINE_CHARS\); it was discarded unread\./,
      );
      // The events around it were read.
      assert.equal(log.text(), 'after');
      assert.deepEqual(await snapshot(dbPath), before);
    } finally {
      clearInterval(sampler);
    }
    // Gathering the line cost 0.64 GB; the bound keeps it to a few times its 16 Mi characters at most.
    const grew = (peak - base) / 1024 / 1024;
    assert.ok(grew < 4 * (MAX_EVENT_LINE_CHARS / 1024 / 1024) + 64, `RSS grew by ${grew.toFixed(0)} MB`);
  });

  it('a line just under the bound is read (the bound is on the line, not on the stream)', async () => {
    const command = nodeCommand(
      dir,
      'fits.js',
      `console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'y'.repeat(900) }));
       console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'z'.repeat(900) }));`,
    );
    const { log, outcome } = run({ agent: { kind: 'command', name: 'fits', command }, input: 'hi', maxEventChars: 1000 });
    // It writes no turn, so the run fails for that, and for nothing else (not for the line's length).
    assert.equal(failed(await outcome).message, "The agent command 'fits' exited without writing a turn.");
    assert.equal(log.text(), 'y'.repeat(900) + 'z'.repeat(900));
  });
});
