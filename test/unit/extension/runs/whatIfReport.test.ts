/**
 * The notification of a what-if whose runs have ended (src/extension/runs/whatIfReport.ts): failed runs as before, and
 * runs the agent paused, waiting for input, said apart (what each waits for), never counted as failures: alone, they
 * are information, not an error.
 */
import { strict as assert } from 'node:assert';
import { failedBeforeWriting } from '../../../../src/shared/protocol/runEvents';
import { completedRun, pausedRun } from '../../../support/runOutcomes';
import { whatIfReport } from '../../../../src/extension/runs/whatIfReport';

const done = completedRun('a', 'Saved turn 2.', 2);
const paused = pausedRun('b', "Kept your message as turn 2 on branch 'retry-b'.", [{ text: 'Send the email?', toolCallId: 'call_send' }]);
const failed = failedBeforeWriting('c', 'http', 'The model server answered HTTP 400.', 'Nothing was written.', 400);

describe('what-if: the report of its runs', () => {
  it('says nothing when every run completed', () => {
    assert.equal(whatIfReport('Retry from Here', [{ branchId: 'retry-a', label: 'gpt-4.1', outcome: done }], true), undefined);
  });

  it('reports a paused run as paused, with what it waits for, as information', () => {
    assert.deepEqual(whatIfReport('Retry from Here', [{ branchId: 'retry-b', label: 'gpt-4.1', outcome: paused }], false), {
      text:
        'Retry from Here: the agent paused the run, waiting for input. retry-b (gpt-4.1): Paused: waiting for input — ' +
        "Send the email? (tool call call_send) Kept your message as turn 2 on branch 'retry-b'.",
      severity: 'information',
    });
  });

  it('counts only the failures as failed; a pause beside them is said apart', () => {
    const report = whatIfReport(
      'Retry with Several Models',
      [
        { branchId: 'retry-a', label: 'gpt-4.1', outcome: done },
        { branchId: 'retry-b', label: 'o4-mini', outcome: paused },
        { branchId: 'retry-c', label: 'broken', outcome: failed },
      ],
      true,
    );
    assert.equal(report?.severity, 'warning');
    assert.match(
      report?.text ?? '',
      /^Retry with Several Models: 1 of 3 runs failed; comparing the others\. retry-c \(broken\): .*HTTP 400/,
    );
    assert.match(report?.text ?? '', /the agent paused 1 of 3 runs, waiting for input\. retry-b \(o4-mini\): Paused: waiting for input — /);
    assert.equal(whatIfReport('Edit and Resend', [{ branchId: 'retry-c', label: 'broken', outcome: failed }], false)?.severity, 'error');
  });
});
