/** Run outcomes for tests of what shows them (the CLI's exit code, the what-if report, the paused-run words). */
import { failedBeforeWriting, type RunInterruptView, type RunOutcome } from '../../src/shared/protocol/runEvents';

/** A run that completed, writing `turn`. */
export function completedRun(runId: string, summary = 'Saved the turn.', turn = 1): RunOutcome {
  return {
    kind: 'run/completed',
    runId,
    finalOutput: 'ok',
    usage: null,
    written: { summary, kept: [], removed: [], notSaved: [], turn, usageStored: false },
  };
}

/** A run its agent paused, waiting for `interrupts` (an AG-UI `interrupt` outcome). */
export function pausedRun(runId: string, summary: string, interrupts: RunInterruptView[]): RunOutcome {
  return { ...failedBeforeWriting(runId, 'paused', 'The agent paused the run.', summary), interrupts };
}
