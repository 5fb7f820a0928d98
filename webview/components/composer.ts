import type { RunEvent } from '../../src/shared/runEvents';
import { el, replaceChildren } from '../dom';
import { errorMessage } from '../../src/shared/errorMessage';

export interface ComposerCallbacks {
  send(input: string): Promise<void>;
  stop(): Promise<void>;
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
  private text: HTMLElement | undefined;
  private running = false;

  constructor(private readonly cb: ComposerCallbacks) {
    this.input = el('textarea', {
      class: 'composer-input',
      rows: 3,
      placeholder: 'Message the agent on this branch (Ctrl+Enter to send)',
      'aria-label': 'Message to the agent',
    });
    this.send = el('vscode-button', { class: 'composer-send' }, 'Send');
    this.stop = el('vscode-button', { class: 'composer-stop', appearance: 'secondary', disabled: true }, 'Stop');
    this.log = el('div', { class: 'run-log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Agent run' });
    this.element = el(
      'section',
      { class: 'composer', 'aria-label': 'Continue this branch' },
      this.log,
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

  /** Read-only databases and plain sessions cannot be continued. */
  setEnabled(enabled: boolean, branchId: string, why?: string): void {
    this.input.disabled = !enabled;
    this.input.placeholder = enabled
      ? `Message the agent on '${branchId}' (Ctrl+Enter to send)`
      : (why ?? 'This session cannot be continued here.');
    if (enabled && !this.running) this.send.removeAttribute('disabled');
    else this.send.setAttribute('disabled', '');
    this.send.textContent = `Send to ${branchId}`;
  }

  private async submit(): Promise<void> {
    const value = this.input.value;
    if (this.running || value.trim() === '' || this.input.disabled) return;
    this.setRunning(true);
    replaceChildren(this.log, el('p', { class: 'run-status' }, 'Starting…'));
    try {
      await this.cb.send(value);
      this.input.value = '';
    } catch (err) {
      this.setRunning(false);
      replaceChildren(this.log, el('p', { class: 'run-error', role: 'alert' }, errorMessage(err)));
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

  /** Shows one event of the current run. */
  show(e: RunEvent): void {
    switch (e.kind) {
      case 'run/started':
        this.setRunning(true);
        replaceChildren(
          this.log,
          el(
            'p',
            { class: 'run-status' },
            `${e.agentName} is answering on ${e.branchId}${e.forkedFrom ? ` (forked from ${e.forkedFrom.branchId} @ turn ${e.forkedFrom.turn})` : ''}…`,
          ),
          el('p', { class: 'run-user' }, e.input),
          ...e.warnings.map((w) => el('p', { class: 'run-warning' }, w)),
        );
        this.text = undefined;
        return;
      case 'text/delta':
        if (!this.text) {
          this.text = el('p', { class: 'run-text' });
          this.log.appendChild(this.text);
        }
        this.text.textContent += e.delta;
        return;
      case 'tool/called':
        this.text = undefined;
        this.log.appendChild(el('p', { class: 'run-tool' }, `→ ${e.name}(${e.arguments})`));
        return;
      case 'tool/output':
        this.log.appendChild(
          el('pre', { class: 'run-tool-output' }, `← ${e.name}: ${e.output.length > 600 ? e.output.slice(0, 600) + '…' : e.output}`),
        );
        return;
      case 'item/added':
        return;
      case 'run/completed':
        this.setRunning(false);
        this.log.appendChild(
          el('p', { class: 'run-done' }, `Done · ${e.usage.totalTokens.toLocaleString('en-US')} tokens · ${e.written.summary}`),
        );
        return;
      case 'run/failed':
        this.setRunning(false);
        this.log.appendChild(
          el(
            'p',
            { class: `run-error failure-${e.failure}`, role: 'alert' },
            `${e.failure === 'cancelled' ? 'Stopped' : 'Failed'}: ${e.message}`,
          ),
        );
        this.log.appendChild(el('p', { class: 'run-written' }, e.written.summary));
        return;
    }
  }
}
