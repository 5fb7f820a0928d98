import type { AgentChoicesView, AgentStatusView } from '../../../src/shared/agentChoices';
import { el, replaceChildren } from '../../shared/dom';
import { t } from '../../shared/l10n';

/**
 * Which agent a run uses: the built-in agent, each of the user's agent commands, the agent URL (docs/agent-command.md).
 * Shown only when there is more than the built-in agent to choose from. Under the choice, the last run of the chosen
 * command: when it ended, how, and the tail of its stderr — so a failing command is diagnosed without opening a log.
 */
export class AgentPicker {
  readonly element: HTMLElement;
  private readonly select: HTMLSelectElement;
  private readonly status: HTMLElement;
  private view: AgentChoicesView | undefined;

  /**
   * `followSelection`: the composer's picker always shows the workspace's choice (another view or the palette may
   * change it); a what-if form's keeps what the user picked in it while it is open.
   */
  constructor(
    private readonly onSelect: (id: string) => void,
    private readonly followSelection = true,
  ) {
    this.select = el('select', { class: 'agent-select', 'aria-label': t('Agent that answers') });
    this.status = el('div', { class: 'agent-status', role: 'status' });
    this.element = el(
      'div',
      { class: 'agent-picker', hidden: true },
      el('label', { class: 'agent-label' }, t('Agent'), ' ', this.select),
      this.status,
    );
    this.select.addEventListener('change', () => {
      this.drawStatus();
      this.onSelect(this.select.value);
    });
  }

  /** The chosen agent's id (the built-in agent's until the choices are known). */
  get value(): string | undefined {
    return this.view ? this.select.value : undefined;
  }

  update(view: AgentChoicesView): void {
    const keep = this.view ? this.select.value : undefined;
    this.view = view;
    replaceChildren(this.select, ...view.choices.map((c) => el('option', { value: c.id, title: c.detail }, c.label)));
    // A picker of an open form keeps what the user chose in it; the selection of the workspace otherwise.
    const chosen = !this.followSelection && keep !== undefined && view.choices.some((c) => c.id === keep) ? keep : view.selected;
    this.select.value = chosen;
    this.element.hidden = view.choices.length < 2 && !view.note;
    this.drawStatus();
  }

  private drawStatus(): void {
    const view = this.view;
    if (!view) return;
    const choice = view.choices.find((c) => c.id === this.select.value);
    const parts: HTMLElement[] = [];
    if (view.note) parts.push(el('p', { class: 'agent-note' }, view.note));
    if (choice && choice.kind !== 'builtin') {
      parts.push(el('p', { class: 'agent-detail' }, choice.detail));
      if (choice.status) parts.push(...statusLines(choice.status));
      else parts.push(el('p', { class: 'agent-last' }, t('Not run yet in this window.')));
    }
    replaceChildren(this.status, ...parts);
  }
}

function statusLines(s: AgentStatusView): HTMLElement[] {
  const when = new Date(s.endedAt).toLocaleTimeString();
  const line = el('p', { class: `agent-last ${s.ok ? 'ok' : 'failed'}` }, t('Last run: {0} at {1}', s.summary, when));
  if (s.stderrTail.length === 0) return [line];
  return [
    line,
    el('details', { class: 'agent-stderr' }, el('summary', {}, t('stderr (last lines)')), el('pre', {}, s.stderrTail.join('\n'))),
  ];
}
