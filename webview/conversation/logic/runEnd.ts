/**
 * How the composer shows a run that ended without completing (`run/failed`): a failure, a Stop, or a run the agent
 * paused, waiting for input (kind `paused`, an agent command's AG-UI `interrupt` outcome), which is no error and is not
 * styled as one. Without the DOM, so it is unit-tested; every string is the caller's to put in as text.
 */
import type { RunFailedEvent } from '../../../src/shared/protocol/runEvents';
import { pausedRunText } from '../../../src/shared/pausedRun';
import { t } from '../../shared/l10n';
import { needsApiKey } from './runRemedy';

export interface FailedRunView {
  /** The run's status line (its agent and branch): "Agent paused on main", "Agent on main". */
  status: string;
  /** The line under it: "Paused: waiting for input — Send the email? (tool call call_send)", "Failed: …", "Stopped: …". */
  text: string;
  /** The line's class: `run-paused` for a pause, `run-error failure-<kind>` (error styling) for the others. */
  className: string;
  /** `status` for a pause, `alert` for a failure or a Stop. */
  role: 'status' | 'alert';
  /** Whether *Set API Key* is offered (the failure needs a key). */
  apiKey: boolean;
  /** Whether the sent message goes back into the box: not for a pause, which kept it as its turn. */
  restoreDraft: boolean;
}

/** What the composer shows of `e`; `agentName` and `branchId` name the run for its status line. */
export function failedRunView(e: RunFailedEvent, agentName: string, branchId: string): FailedRunView {
  if (e.failure === 'paused')
    return {
      status: t('{0} paused on {1}', agentName, branchId),
      text: pausedRunText(e.interrupts),
      className: 'run-paused',
      role: 'status',
      apiKey: false,
      restoreDraft: false,
    };
  return {
    status: t('{0} on {1}', agentName, branchId),
    text: e.failure === 'cancelled' ? t('Stopped: {0}', e.message) : t('Failed: {0}', e.message),
    className: `run-error failure-${e.failure}`,
    role: 'alert',
    apiKey: needsApiKey(e.failure, e.status, e.message),
    restoreDraft: true,
  };
}
