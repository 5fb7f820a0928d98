/**
 * A paused run for people (src/shared/pausedRun.ts): the outcome of a run the agent paused, waiting for input (an agent
 * command's AG-UI `interrupt` outcome), told apart from a failure, and its line naming what it waits for.
 */
import { strict as assert } from 'node:assert';
import { isPausedRun, pausedRunText } from '../../../src/shared/pausedRun';
import { failedBeforeWriting } from '../../../src/shared/protocol/runEvents';
import { completedRun } from '../../support/runOutcomes';

describe('a paused run for people', () => {
  it('is told apart from a failure, a Stop and a completed run', () => {
    const done = completedRun('a');
    assert.equal(isPausedRun(failedBeforeWriting('p', 'paused', 'paused', 'kept')), true);
    assert.equal(isPausedRun(failedBeforeWriting('f', 'tool', 'a tool failed', 'nothing')), false);
    assert.equal(isPausedRun(failedBeforeWriting('s', 'cancelled', 'stopped', 'nothing')), false);
    assert.equal(isPausedRun(done), false);
  });

  it('says what it waits for: each interrupt with the tool call it names, in order', () => {
    assert.equal(
      pausedRunText([{ text: 'Send the email?', toolCallId: 'call_send' }]),
      'Paused: waiting for input — Send the email? (tool call call_send)',
    );
    assert.equal(
      pausedRunText([
        { text: 'Which city?', toolCallId: null },
        { text: 'Pay?', toolCallId: 'call_pay' },
      ]),
      'Paused: waiting for input — Which city?; Pay? (tool call call_pay)',
    );
  });

  it('without interrupts (none sent, or an outcome without the list) says only that it waits', () => {
    assert.equal(pausedRunText([]), 'Paused: waiting for input.');
    assert.equal(pausedRunText(undefined), 'Paused: waiting for input.');
  });

  it("keeps the agent's words as they are (text, never markup: the view puts them in as text)", () => {
    assert.equal(
      pausedRunText([{ text: '<img src=x onerror=alert(1)>', toolCallId: '<b>id</b>' }]),
      'Paused: waiting for input — <img src=x onerror=alert(1)> (tool call <b>id</b>)',
    );
  });
});
