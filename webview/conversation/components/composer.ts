import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { el } from '../../shared/dom';
import { draftInput } from '../../shared/drafts';
import { errorMessage } from '../../../src/shared/errorMessage';
import { toolBadgeName } from '../../../src/shared/itemTitles';
import { t } from '../../shared/l10n';
import { needsApiKey } from '../logic/runRemedy';
import { failedRunView } from '../logic/runEnd';
import { tokenCountLabel } from '../logic/itemCount';
import { AgentPicker } from './agentPicker';
import { replayBadge } from './replayBadges';
import { runCallBadge } from '../logic/replayViews';
import { replaySummaryShown, replaySummaryText } from '../../shared/logic/replayText';
import { divergenceBlock } from '../../shared/replayDivergence';
import type { ReplaySummary } from '../../../src/shared/protocol/replay';

export interface ComposerCallbacks {
  /** `agent`: the picker's choice (undefined: the host's default). */
  send(input: string, agent: string | undefined): Promise<void>;
  /** The user picked another agent in the composer. */
  selectAgent(id: string): void;
  stop(): Promise<void>;
  /** Runs the host's *Set API Key* command (a run failed for want of a key). */
  setApiKey(): Promise<void>;
}

/**
 * The composer: a message box that continues the shown branch, and the live log of the run it starts (text as it
 * streams, tool calls and outputs as they happen, then what was written). Everything shown is text.
 */
export class Composer {
  readonly element: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly send: HTMLElement;
  private readonly stop: HTMLElement;
  private readonly log: HTMLElement;
  /** Which agent answers (hidden while the built-in agent is the only one). */
  readonly agents: AgentPicker;
  /** The runs shown, each in a block of its own: what-if runs on several models stream at the same time. */
  private readonly runs = new Map<
    string,
    {
      block: HTMLElement;
      status: HTMLElement;
      text: HTMLElement | undefined;
      /** The paragraph the run's reasoning streams into, until an answer or a tool call follows it. */
      reasoning: HTMLElement | undefined;
      active: boolean;
      /**
       * Ended in a failure, or paused by its agent waiting for input: its block stays, through other branches and runs,
       * until the user dismisses it.
       */
      failed: boolean;
      input: string;
      agentName: string;
    }
  >();
  private running = false;
  /** The branch the view showed at the last `setEnabled`. */
  private shownBranch: string | undefined;
  /** The message last sent from this box: put back if its run fails, so the user can send it again. */
  private draft: string | undefined;
  /** Lines for runs whose block is not drawn yet (a what-if's answer can arrive before its run/started). */
  private readonly notes = new Map<string, string>();

  constructor(private readonly cb: ComposerCallbacks) {
    // Registered with the drafts of the view's redraws (shared/drafts.ts), as every inline input is.
    this.input = draftInput(
      el('textarea', {
        class: 'composer-input',
        rows: 3,
        placeholder: t('Message the agent on this branch (Ctrl+Enter to send)'),
        'aria-label': t('Message to the agent'),
      }),
      'composer',
    );
    // A long branch name in its label is cut with an ellipsis (main.css; the button's title and accessible name hold
    // it whole), so the button never pushes Stop out of the column.
    this.send = el('vscode-button', { class: 'composer-send' }, t('Send'));
    this.stop = el('vscode-button', { class: 'composer-stop', appearance: 'secondary', disabled: true }, t('Stop'));
    this.log = el('div', { class: 'run-log', role: 'log', 'aria-live': 'polite', 'aria-label': t('Agent run') });
    this.agents = new AgentPicker((id) => cb.selectAgent(id));
    this.element = el(
      'section',
      { class: 'composer', 'aria-label': t('Continue this branch') },
      this.log,
      this.agents.element,
      this.input,
      el('div', { class: 'composer-actions' }, this.send, this.stop),
    );
    this.send.addEventListener('click', () => void this.submit());
    this.stop.addEventListener('click', () => void this.cb.stop());
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
        ev.preventDefault();
        void this.submit();
      }
    });
  }

  /**
   * Read-only databases and plain sessions cannot be continued. Showing another branch clears what ended runs and
   * refused starts left in the log: they were about the branch shown then (a run still going keeps its block).
   */
  setEnabled(enabled: boolean, branchId: string, why?: string): void {
    if (this.shownBranch !== undefined && branchId !== this.shownBranch) this.clearEnded();
    this.shownBranch = branchId;
    this.input.disabled = !enabled;
    this.input.placeholder = enabled
      ? t("Message the agent on '{0}' (Ctrl+Enter to send)", branchId)
      : (why ?? t('This session cannot be continued here.'));
    if (enabled && !this.running) this.send.removeAttribute('disabled');
    else this.send.setAttribute('disabled', '');
    const label = t('Send to {0}', branchId);
    this.send.textContent = label;
    this.send.setAttribute('title', label);
    this.send.setAttribute('aria-label', label);
  }

  /**
   * Removes everything in the log but the blocks of runs still going and of runs that failed: a failure is read where
   * the run was started (a what-if's fork is deleted, and the view returns from it) and stays until dismissed.
   */
  private clearEnded(): void {
    for (const [runId, run] of this.runs) if (!run.active && !run.failed) this.runs.delete(runId);
    const keep = new Set([...this.runs.values()].map((r) => r.block));
    for (const child of Array.from(this.log.children)) if (!keep.has(child as HTMLElement)) child.remove();
  }

  private async submit(): Promise<void> {
    const value = this.input.value;
    if (this.running || value.trim() === '' || this.input.disabled) return;
    this.setRunning(true);
    this.clearEnded();
    this.log.appendChild(el('p', { class: 'run-status' }, t('Starting…')));
    try {
      this.draft = value;
      await this.cb.send(value, this.agents.value);
      // A run that failed before this answer arrived has put the draft back already.
      if (this.draft === value && this.input.value === value) this.input.value = '';
    } catch (err) {
      this.setRunning(false);
      const message = errorMessage(err);
      this.clearEnded();
      this.log.appendChild(el('p', { class: 'run-error', role: 'alert' }, message));
      const button = this.apiKeyButton(needsApiKey('other', undefined, message));
      if (button) this.log.appendChild(button);
    }
  }

  private setRunning(running: boolean): void {
    this.running = running;
    if (running) {
      this.send.setAttribute('disabled', '');
      this.stop.removeAttribute('disabled');
    } else {
      if (!this.input.disabled) this.send.removeAttribute('disabled');
      this.stop.setAttribute('disabled', '');
    }
  }

  /** Shows one event of a run: in its own block, so runs that overlap (a retry on several models) never mix. */
  show(e: RunEvent): void {
    if (e.kind === 'run/started') {
      // A new run clears the log unless others are still running beside it; failures stay until dismissed.
      if (![...this.runs.values()].some((r) => r.active)) this.clearEnded();
      const status = el(
        'p',
        { class: 'run-status' },
        e.forkedFrom
          ? t(
              '{0} is answering on {1} (forked from {2} @ turn {3})…',
              e.agentName || t('The agent'),
              e.branchId,
              e.forkedFrom.branchId,
              e.forkedFrom.turn,
            )
          : t('{0} is answering on {1}…', e.agentName || t('The agent'), e.branchId),
      );
      const block = el(
        'div',
        { class: 'run-block', 'data-branch': e.branchId },
        status,
        el('p', { class: 'run-user' }, e.input),
        ...e.warnings.map((w) => el('p', { class: 'run-warning' }, w)),
      );
      this.runs.set(e.runId, {
        block,
        status,
        text: undefined,
        reasoning: undefined,
        active: true,
        failed: false,
        input: e.input,
        agentName: e.agentName,
      });
      const note = this.notes.get(e.runId);
      if (note !== undefined) {
        this.notes.delete(e.runId);
        block.appendChild(el('p', { class: 'run-note' }, note));
      }
      this.log.appendChild(block);
      this.setRunning(true);
      return;
    }
    const run = this.runs.get(e.runId);
    if (!run) {
      // A run the host refused before it started has no run/started; one this page never saw start is not shown.
      if (e.kind === 'run/failed') {
        const shown = failedRunView(e, '', '');
        this.log.appendChild(el('p', { class: shown.className, role: shown.role }, shown.text));
        const button = this.apiKeyButton(shown.apiKey);
        if (button) this.log.appendChild(button);
        if (shown.restoreDraft) this.restoreDraft(undefined);
      }
      if (e.kind === 'run/failed' || e.kind === 'run/completed') this.setRunning([...this.runs.values()].some((r) => r.active));
      return;
    }
    const add = (node: HTMLElement): void => void run.block.appendChild(node);
    switch (e.kind) {
      case 'text/delta':
        run.reasoning = undefined;
        if (!run.text) add((run.text = el('p', { class: 'run-text' })));
        run.text.textContent += e.delta;
        return;
      case 'reasoning/delta':
        // Reasoning streams in a paragraph of its own, set apart from the answer; the answer after it starts anew.
        run.text = undefined;
        if (!run.reasoning) add((run.reasoning = el('p', { class: 'run-reasoning' })));
        run.reasoning.textContent += e.delta;
        return;
      case 'tool/called':
        run.text = undefined;
        run.reasoning = undefined;
        // A hosted tool by its people name ("web search"), as the turn list and the cards name it.
        add(el('p', { class: 'run-tool' }, `→ ${toolBadgeName(e.name)}(${e.arguments})`));
        return;
      case 'tool/output': {
        // Replayed or live as the run decided it (docs/replay.md); the kept marks, with links, are on the turn's cards.
        const badge = runCallBadge(e.replay);
        add(
          el(
            'pre',
            { class: 'run-tool-output' },
            badge ? replayBadge(badge) : null,
            badge ? ' ' : null,
            `← ${toolBadgeName(e.name)}: ${e.output.length > 600 ? e.output.slice(0, 600) + '…' : e.output}`,
          ),
        );
        return;
      }
      case 'item/added':
        return;
      case 'run/completed':
        // The status said the run was going on: now it says who answered, and the line under it what was written.
        run.status.textContent = t('{0} answered on {1}', run.agentName || t('The agent'), run.block.getAttribute('data-branch') ?? '');
        if (this.draft === run.input) this.draft = undefined;
        add(
          el(
            'p',
            { class: 'run-done' },
            `${t('Done')} · ${e.usage ? tokenCountLabel(e.usage.totalTokens) : t('no usage recorded')} · ${e.written.summary}`,
          ),
        );
        if (e.replay && replaySummaryShown(e.replay)) add(replaySummaryBlock(e.replay));
        break;
      case 'run/failed': {
        // A failure, a Stop, or a pause (the agent waits for input: no error, and its message is kept as its turn).
        const shown = failedRunView(e, run.agentName, run.block.getAttribute('data-branch') ?? '');
        // A run that failed before its agent was known (no key, a locked file) never answered: no status line.
        if (run.agentName) run.status.textContent = shown.status;
        else run.status.remove();
        add(el('p', { class: shown.className, role: shown.role }, shown.text));
        const button = this.apiKeyButton(shown.apiKey);
        if (button) add(button);
        add(el('p', { class: 'run-written' }, e.written.summary));
        // What the run did with its tools before it failed (a strict refusal names the call in the message above).
        if (e.replay && replaySummaryShown(e.replay)) add(replaySummaryBlock(e.replay));
        const dismiss = el('vscode-button', { appearance: 'secondary', class: 'run-dismiss' }, t('Dismiss'));
        dismiss.addEventListener('click', () => {
          run.block.remove();
          this.runs.delete(e.runId);
        });
        add(dismiss);
        run.failed = true;
        if (shown.restoreDraft) this.restoreDraft(run.input);
        else if (this.draft === run.input) this.draft = undefined;
        break;
      }
    }
    run.active = false;
    this.setRunning([...this.runs.values()].some((r) => r.active));
  }

  /** Puts the message sent from this box back when its run (`input`; undefined: unknown) failed and the box is empty. */
  private restoreDraft(input: string | undefined): void {
    const draft = this.draft;
    if (draft === undefined || (input !== undefined && input !== draft)) return;
    this.draft = undefined;
    if (this.input.value === '') this.input.value = draft;
  }

  /** *Set API Key*, when that is what the failure needs. */
  private apiKeyButton(needed: boolean): HTMLElement | null {
    if (!needed) return null;
    const button = el('vscode-button', { class: 'set-api-key' }, t('Set API Key'));
    button.addEventListener('click', () => void this.cb.setApiKey().catch(() => undefined));
    return el('div', { class: 'run-remedy' }, button);
  }

  /**
   * A line under a run's status, from whoever started it: a what-if says which tools mode its runs use, where it stays
   * in sight (the view moves to the run's new branch, away from the form that started it).
   */
  note(runId: string, text: string): void {
    const run = this.runs.get(runId);
    if (run) run.status.after(el('p', { class: 'run-note' }, text));
    else if (this.notes.size < 20) this.notes.set(runId, text);
  }

  /** Shows a problem that kept a run from starting (the host refused it). */
  showError(message: string): void {
    this.clearEnded();
    this.log.appendChild(el('p', { class: 'run-error', role: 'alert' }, message));
  }
}

/**
 * A run's tool calls in its summary: "3 tool calls replayed, 1 ran live (send_email)." and, when it left the recorded
 * sequence, the step with the recorded and the actual call and one line per differing argument.
 */
function replaySummaryBlock(summary: ReplaySummary): HTMLElement {
  return el(
    'div',
    { class: 'run-replay' },
    el('p', { class: 'run-replay-summary' }, replaySummaryText(summary)),
    summary.divergence ? divergenceBlock(summary.divergence) : null,
  );
}
