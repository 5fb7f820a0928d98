/**
 * A paused run for people: the `run/failed` outcome of kind `paused` (an agent command's RUN_FINISHED with outcome
 * `interrupt`, AG-UI 1.0), which is no error: the run waits for input, its turn kept for the run that resumes it.
 * "Paused: waiting for input — Send the email? (tool call call_send)". Shared by the conversation view, the host's
 * notifications and the CLI, localized with @vscode/l10n (English where no bundle is loaded, as in the CLI). The words
 * are the agent's: show them as text, never as HTML.
 */
import * as l10n from '@vscode/l10n';
import type { RunFailedEvent, RunInterruptView, RunOutcome } from './protocol/runEvents';

/** True for the outcome of a run the agent paused, waiting for input. */
export function isPausedRun(outcome: RunOutcome): outcome is RunFailedEvent & { failure: 'paused' } {
  return outcome.kind === 'run/failed' && outcome.failure === 'paused';
}

/** What one interrupt waits for: "Send the email? (tool call call_send)", or its text alone when it names no call. */
export function interruptText(i: RunInterruptView): string {
  return i.toolCallId !== null ? l10n.t('{0} (tool call {1})', i.text, i.toolCallId) : i.text;
}

/** The line of a paused run: "Paused: waiting for input — <each interrupt, separated by ;>". */
export function pausedRunText(interrupts: readonly RunInterruptView[] | undefined): string {
  const what = (interrupts ?? []).map(interruptText).join('; ');
  return what === '' ? l10n.t('Paused: waiting for input.') : l10n.t('Paused: waiting for input — {0}', what);
}
