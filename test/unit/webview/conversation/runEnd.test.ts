/**
 * How the composer shows a run that ended without completing (webview/conversation/logic/runEnd.ts): a run the agent
 * paused, waiting for input, is shown as paused (its own line and class, no alert, no error styling, its message not
 * put back in the box); a failure and a Stop as before.
 */
import { strict as assert } from 'node:assert';
import { failedBeforeWriting, type RunFailedEvent } from '../../../../src/shared/protocol/runEvents';
import { failedRunView } from '../../../../webview/conversation/logic/runEnd';

const paused: RunFailedEvent = {
  ...failedBeforeWriting('p', 'paused', "The agent command 'hitl' paused the run, waiting for input: …", 'Kept your message.'),
  interrupts: [{ text: 'Send the email?', toolCallId: 'call_send' }],
};

describe('the composer: how a run that did not complete is shown', () => {
  it('shows a paused run as paused: what it waits for, not as an error, its message kept as its turn', () => {
    assert.deepEqual(failedRunView(paused, 'hitl', 'main'), {
      status: 'hitl paused on main',
      text: 'Paused: waiting for input — Send the email? (tool call call_send)',
      className: 'run-paused',
      role: 'status',
      apiKey: false,
      restoreDraft: false,
    });
  });

  it('shows a failure and a Stop as errors, with the remedy when the failure needs a key', () => {
    const failed = failedRunView(failedBeforeWriting('f', 'tool', 'A tool failed.', 'Nothing was written.'), 'hitl', 'main');
    assert.deepEqual(failed, {
      status: 'hitl on main',
      text: 'Failed: A tool failed.',
      className: 'run-error failure-tool',
      role: 'alert',
      apiKey: false,
      restoreDraft: true,
    });
    const stopped = failedRunView(failedBeforeWriting('s', 'cancelled', 'The run was stopped.', 'Nothing was written.'), 'a', 'b');
    assert.equal(stopped.text, 'Stopped: The run was stopped.');
    assert.equal(stopped.className, 'run-error failure-cancelled');
    assert.equal(failedRunView(failedBeforeWriting('k', 'no-key', 'No API key is set.', 'Nothing.'), 'a', 'b').apiKey, true);
  });
});
