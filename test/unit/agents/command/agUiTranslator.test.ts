/**
 * What the AG-UI translator (src/agents/command/agUiEvents.ts) makes of events, without a process: optional fields
 * sent as null (AG-UI 1.0 reads them as absent), calls streamed only in TOOL_CALL_CHUNKs (ended as AG-UI's reference
 * client ends them), text by role and message, usage entries that are not requests, a second run's RUN_ERROR, the
 * bounds of what a run keeps (one call's arguments, all calls', spans), and what the view shows of every event
 * (redacted whole, every field: ../shownStreams.ts).
 */
import { strict as assert } from 'node:assert';
import { AgUiTranslator, SPANS_EVENT, TOOL_REPLAY_EVENT } from '../../../../src/agents/command/agUiEvents';
import {
  MAX_HELD_TEXT_CHARS,
  MAX_RUN_SPAN_CHARS,
  MAX_RUN_TOOL_CALL_CHARS,
  MAX_TOOL_CALL_ARGS_CHARS,
} from '../../../../src/agents/command/commandLimits';
import { RunReporter } from '../../../../src/agents/runReporter';
import { ShownStreams } from '../../../../src/agents/shownStreams';
import type { RunEvent, ToolCalledEvent } from '../../../../src/shared/protocol/runEvents';

/** A translator whose events and rejections are kept. */
function translator() {
  const events: RunEvent[] = [];
  const rejected: string[] = [];
  let ends = 0;
  const t = new AgUiTranslator(
    'r',
    (e) => void events.push(e),
    (why) => void rejected.push(why),
    () => void ends++,
  );
  const text = () => events.map((e) => (e.kind === 'text/delta' ? e.delta : '')).join('');
  const calls = () => events.filter((e): e is ToolCalledEvent => e.kind === 'tool/called');
  return { t, events, rejected, text, calls, ends: () => ends };
}

describe('the AG-UI translator', () => {
  describe('optional fields sent as null (AG-UI 1.0: absent)', () => {
    it('RUN_FINISHED with outcome: null finishes the run', () => {
      const { t, rejected } = translator();
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r', outcome: null });
      assert.deepEqual(rejected, []);
      assert.equal(t.finished, true);
      assert.equal(t.cancelled, false);
    });

    it('timestamp, rawEvent, parentRunId, result, parentMessageId as null: every event is read', () => {
      const { t, rejected, text, calls } = translator();
      const nulls = { timestamp: null, rawEvent: null };
      t.event({ type: 'RUN_STARTED', threadId: 's', runId: 'r', parentRunId: null, ...nulls });
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant', ...nulls });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Answer.', ...nulls });
      t.event({ type: 'TEXT_MESSAGE_END', messageId: 'm', ...nulls });
      t.event({ type: 'TOOL_CALL_START', toolCallId: 'c', toolCallName: 'get', parentMessageId: null });
      t.event({ type: 'TOOL_CALL_ARGS', toolCallId: 'c', delta: '{}' });
      t.event({ type: 'TOOL_CALL_END', toolCallId: 'c' });
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r', outcome: null, result: null, usage: null, ...nulls });
      assert.deepEqual(rejected, []);
      assert.equal(t.valid, 8);
      assert.equal(text(), 'Answer.');
      assert.deepEqual(
        calls().map((c) => c.name),
        ['get'],
      );
      assert.equal(t.finished, true);
    });

    it('a null where the field is required is still invalid', () => {
      const { t, rejected } = translator();
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: null, delta: 'x' });
      assert.deepEqual(rejected, ['not a valid TEXT_MESSAGE_CONTENT event']);
    });
  });

  describe('TOOL_CALL_CHUNK (as the reference client reads it)', () => {
    it('a chunk without an id continues the call; the next other event ends it, shown with its arguments', () => {
      const { t, events } = translator();
      t.event({ type: 'TOOL_CALL_CHUNK', toolCallId: 'call_1', toolCallName: 'get_weather', parentMessageId: 'm0', delta: '{"city":' });
      t.event({ type: 'TOOL_CALL_CHUNK', delta: ' "Paris"}' });
      t.event({ type: 'TOOL_CALL_RESULT', messageId: 'tr', toolCallId: 'call_1', content: 'Paris: 18C', role: 'tool' });
      assert.deepEqual(
        events.map((e) => [e.kind, 'name' in e ? e.name : '', 'arguments' in e ? e.arguments : 'output' in e ? e.output : '']),
        [
          ['tool/called', 'get_weather', '{"city": "Paris"}'],
          ['tool/output', 'get_weather', 'Paris: 18C'],
        ],
      );
    });

    it('a chunk with another id ends the call streaming and begins one; the stream end ends the last', () => {
      const { t, calls } = translator();
      t.event({ type: 'TOOL_CALL_CHUNK', toolCallId: 'a', toolCallName: 'one', delta: '{"x":1}' });
      t.event({ type: 'TOOL_CALL_CHUNK', toolCallId: 'b', toolCallName: 'two', delta: '{"y":' });
      t.event({ type: 'TOOL_CALL_CHUNK', delta: '2}' });
      assert.deepEqual(
        calls().map((c) => [c.callId, c.name, c.arguments]),
        [['a', 'one', '{"x":1}']],
      );
      t.end();
      assert.deepEqual(
        calls().map((c) => [c.callId, c.name, c.arguments]),
        [
          ['a', 'one', '{"x":1}'],
          ['b', 'two', '{"y":2}'],
        ],
      );
    });

    it('RUN_FINISHED ends a chunked call before the run ends', () => {
      const { t, calls } = translator();
      t.event({ type: 'TOOL_CALL_CHUNK', toolCallId: 'a', toolCallName: 'one', delta: '{}' });
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r' });
      assert.deepEqual(
        calls().map((c) => c.callId),
        ['a'],
      );
    });
  });

  describe('text as the view shows it', () => {
    it("only an assistant's text: a user message echoed and a system chunk (and its continuation) are not shown", () => {
      const { t, text } = translator();
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'u1', role: 'user' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'u1', delta: '[USER ECHO]' });
      t.event({ type: 'TEXT_MESSAGE_END', messageId: 'u1' });
      t.event({ type: 'TEXT_MESSAGE_CHUNK', messageId: 's1', role: 'system', delta: '[SYSTEM]' });
      t.event({ type: 'TEXT_MESSAGE_CHUNK', delta: '[SYSTEM continued]' });
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'The answer.' });
      t.event({ type: 'TEXT_MESSAGE_END', messageId: 'a1' });
      assert.equal(text(), 'The answer.');
    });

    it('two interleaved messages show one after the other, with a break between them', () => {
      const { t, text } = translator();
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' });
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'a2', role: 'assistant' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'AAA ' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: 'BBB ' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'aaa.' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: 'bbb.' });
      assert.equal(text(), 'AAA aaa.', 'the second waits for the first');
      t.event({ type: 'TEXT_MESSAGE_END', messageId: 'a1' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: ' More.' });
      t.event({ type: 'TEXT_MESSAGE_END', messageId: 'a2' });
      assert.equal(text(), 'AAA aaa.\n\nBBB bbb. More.');
    });

    it('separate messages (chunks with two ids, then a started one) do not run together', () => {
      const { t, text } = translator();
      t.event({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'First.' });
      t.event({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta: 'Second.' });
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'm3' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm3', delta: 'Third.' });
      assert.equal(text(), 'First.\n\nSecond.\n\nThird.');
    });

    it('text of a message still open when the run ends is let out; held text is bounded', () => {
      const { t, text } = translator();
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'a1' });
      t.event({ type: 'TEXT_MESSAGE_START', messageId: 'a2' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'one' });
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: 'two' });
      // Past the bound, what waited is shown rather than held further.
      const big = 'x'.repeat(MAX_HELD_TEXT_CHARS);
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: big });
      assert.equal(text(), `one\n\ntwo${big}`);
      t.event({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'ONE' });
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r' });
      assert.equal(text(), `one\n\ntwo${big}\n\nONE`);
    });
  });

  describe('usage', () => {
    it("RUN_FINISHED's entries (one per provider and model) are not requests: 0 unless an entry counts its own", () => {
      const { t } = translator();
      t.event({
        type: 'RUN_FINISHED',
        threadId: 's',
        runId: 'r',
        usage: [
          { provider: 'openai', model: 'gpt-4.1', inputTokens: 300, outputTokens: 30 },
          { provider: 'openai', model: 'gpt-4.1-mini', inputTokens: 100, outputTokens: 10 },
        ],
      });
      assert.deepEqual(t.usage, { requests: 0, inputTokens: 400, outputTokens: 40, totalTokens: 440, cachedTokens: 0, reasoningTokens: 0 });
      const other = translator();
      other.t.event({
        type: 'RUN_FINISHED',
        threadId: 's',
        runId: 'r',
        usage: [
          { model: 'a', inputTokens: 3, outputTokens: 1, requests: 3 },
          { model: 'b', inputTokens: 1, outputTokens: 1, requests: 1 },
        ],
      });
      assert.equal(other.t.usage?.requests, 4);
    });
  });

  describe("the run's end", () => {
    it("a second run's RUN_ERROR after our RUN_FINISHED is ignored, as everything of that run", () => {
      const { t, text, ends } = translator();
      t.event({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm', delta: 'ok' });
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r' });
      t.event({ type: 'RUN_STARTED', threadId: 's', runId: 'second' });
      t.event({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm2', delta: 'SECOND RUN TEXT' });
      t.event({ type: 'RUN_ERROR', message: 'late failure' });
      assert.equal(t.error, undefined);
      assert.equal(t.afterEnd, 3);
      assert.equal(t.afterEndSample, 'RUN_STARTED');
      assert.equal(text(), 'ok');
      assert.equal(ends(), 1);
    });

    it('a RUN_ERROR right after RUN_FINISHED still counts', () => {
      const { t, ends } = translator();
      t.event({ type: 'RUN_FINISHED', threadId: 's', runId: 'r' });
      t.event({ type: 'RUN_ERROR', message: 'surfaced late' });
      assert.equal(t.error?.message, 'surfaced late');
      assert.equal(ends(), 1);
    });

    it('an interrupt outcome is kept with what each interrupt says and the call it concerns', () => {
      const { t } = translator();
      t.event({
        type: 'RUN_FINISHED',
        threadId: 's',
        runId: 'r',
        outcome: {
          type: 'interrupt',
          interrupts: [{ id: 'i1', reason: 'tool_approval', toolCallId: 'call_send', message: 'Send the email?' }],
        },
      });
      assert.deepEqual(t.interrupts, [{ text: 'Send the email?', toolCallId: 'call_send' }]);
    });
  });

  describe('bounds of what a run keeps', () => {
    it("one call's arguments: cut at MAX_TOOL_CALL_ARGS_CHARS, and the cut is marked", () => {
      const { t, calls } = translator();
      t.event({ type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'x' });
      const delta = 'a'.repeat(MAX_TOOL_CALL_ARGS_CHARS / 2 + 10);
      for (let i = 0; i < 4; i++) t.event({ type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta });
      t.event({ type: 'TOOL_CALL_END', toolCallId: 'c1' });
      const [call] = calls();
      assert.ok(call);
      assert.ok(call.arguments.startsWith('a'.repeat(MAX_TOOL_CALL_ARGS_CHARS)));
      assert.ok(!call.arguments.startsWith('a'.repeat(MAX_TOOL_CALL_ARGS_CHARS + 1)));
      const cut = 4 * delta.length - MAX_TOOL_CALL_ARGS_CHARS;
      assert.match(call.arguments, new RegExp(`… \\[${cut.toLocaleString('en-US')} more characters of the arguments were not kept`));
      assert.ok(call.arguments.length < MAX_TOOL_CALL_ARGS_CHARS + 200);
      assert.equal(t.cutToolCalls, 1);
    });

    it("all calls' arguments together: past MAX_RUN_TOOL_CALL_CHARS they are cut, further calls are dropped and counted", () => {
      const { t, calls } = translator();
      const delta = 'b'.repeat(MAX_TOOL_CALL_ARGS_CHARS);
      const n = Math.ceil(MAX_RUN_TOOL_CALL_CHARS / MAX_TOOL_CALL_ARGS_CHARS) + 4;
      for (let i = 0; i < n; i++) {
        t.event({ type: 'TOOL_CALL_START', toolCallId: `c${i}`, toolCallName: 'x' });
        t.event({ type: 'TOOL_CALL_ARGS', toolCallId: `c${i}`, delta });
        t.event({ type: 'TOOL_CALL_END', toolCallId: `c${i}` });
      }
      const kept = calls().reduce((sum, c) => sum + (c.arguments.match(/^b*/)?.[0].length ?? 0), 0);
      assert.ok(kept <= MAX_RUN_TOOL_CALL_CHARS, `${kept} characters of arguments kept`);
      assert.ok(t.droppedToolCalls > 0);
      assert.ok(t.cutToolCalls > 0);
      assert.ok(calls().length < n);
    });

    it("an answered call's arguments no longer count: a long run of answered calls is never cut", () => {
      const { t, calls } = translator();
      const delta = 'c'.repeat(MAX_TOOL_CALL_ARGS_CHARS);
      const n = Math.ceil(MAX_RUN_TOOL_CALL_CHARS / MAX_TOOL_CALL_ARGS_CHARS) + 4;
      for (let i = 0; i < n; i++) {
        t.event({ type: 'TOOL_CALL_START', toolCallId: `c${i}`, toolCallName: 'x' });
        t.event({ type: 'TOOL_CALL_ARGS', toolCallId: `c${i}`, delta });
        t.event({ type: 'TOOL_CALL_END', toolCallId: `c${i}` });
        t.event({ type: 'TOOL_CALL_RESULT', messageId: `r${i}`, toolCallId: `c${i}`, content: 'ok' });
      }
      assert.equal(calls().length, n);
      assert.equal(t.cutToolCalls, 0);
      assert.equal(t.droppedToolCalls, 0);
    });

    it("a report of a call carries its arguments (until the call's output)", () => {
      const { t } = translator();
      t.event({ type: 'TOOL_CALL_START', toolCallId: 'c', toolCallName: 'get' });
      t.event({ type: 'TOOL_CALL_ARGS', toolCallId: 'c', delta: '{"a":1}' });
      t.event({ type: 'TOOL_CALL_END', toolCallId: 'c' });
      t.event({ type: 'CUSTOM', name: TOOL_REPLAY_EVENT, value: { callId: 'c', name: 'get', outcome: 'unmatched', recordedCallId: null } });
      assert.equal(t.replayReports[0]?.arguments, '{"a":1}');
    });

    it("spans' total size: past MAX_RUN_SPAN_CHARS the rest are dropped and counted", () => {
      const { t } = translator();
      const blob = 'd'.repeat(4 * 1024 * 1024);
      const n = MAX_RUN_SPAN_CHARS / blob.length + 3;
      for (let i = 0; i < n; i++)
        t.event({
          type: 'CUSTOM',
          name: SPANS_EVENT,
          value: { spans: [{ id: `s${i}`, trace_id: 't', span_data: { type: 'custom', data: { blob } } }] },
        });
      const size = t.sdkSpans.reduce((sum: number, s) => sum + JSON.stringify(s).length, 0);
      assert.ok(size <= MAX_RUN_SPAN_CHARS, `${size} characters of spans kept`);
      assert.ok(t.sdkSpans.length >= MAX_RUN_SPAN_CHARS / blob.length - 1);
      assert.equal(t.sdkSpans.length + t.droppedSpans, n);
    });
  });

  describe('what the view shows is redacted whole, every field', () => {
    it('a call id, a name, arguments, an output and an item holding the key show it nowhere', () => {
      const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH';
      const shown: RunEvent[] = [];
      const reporter = new RunReporter({ sessionId: 's', input: 'hi', runId: 'r', secrets: [key], onEvent: (e) => void shown.push(e) });
      const streams = new ShownStreams(reporter);
      const t = new AgUiTranslator('r', (e) => streams.emit(e));
      t.event({ type: 'TOOL_CALL_START', toolCallId: `c-${key}`, toolCallName: `tool_${key}` });
      t.event({ type: 'TOOL_CALL_ARGS', toolCallId: `c-${key}`, delta: `{"k":"${key}"}` });
      t.event({ type: 'TOOL_CALL_END', toolCallId: `c-${key}` });
      t.event({ type: 'CUSTOM', name: TOOL_REPLAY_EVENT, value: { callId: `c-${key}`, name: 'x', outcome: 'live', recordedCallId: key } });
      t.event({ type: 'TOOL_CALL_RESULT', messageId: 'x', toolCallId: `c-${key}`, content: `result ${key}` });
      t.event({
        type: 'CUSTOM',
        name: 'agent-sessions.item',
        value: { type: 'reasoning', id: key, summary: [{ type: 'summary_text', text: key }] },
      });
      streams.end();
      const text = JSON.stringify(shown);
      assert.ok(!text.includes(key.slice(8, 24)), text.slice(0, 400));
      const called = shown.find((e): e is ToolCalledEvent => e.kind === 'tool/called');
      assert.equal(called?.callId, 'c-[redacted]');
      const output = shown.find((e) => e.kind === 'tool/output');
      assert.equal(output && 'callId' in output ? output.callId : undefined, 'c-[redacted]');
    });
  });
});
