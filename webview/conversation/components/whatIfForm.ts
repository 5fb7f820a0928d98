import type { TurnView } from '../../../src/shared/protocol/conversationViews';
import {
  MAX_WHAT_IF_MODELS,
  whatIfSelectionProblem,
  type WhatIfModelsView,
  type WhatIfStartedView,
} from '../../../src/shared/whatIfModels';
import { el, replaceChildren } from '../../shared/dom';
import { draftInput } from '../../shared/drafts';
import { FORM_CLOSED_EVENT } from '../logic/detailRedraw';
import { t } from '../../shared/l10n';
import { AgentPicker } from './agentPicker';
import type { AgentChoicesView } from '../../../src/shared/agentChoices';
import { TOOLS_MODES, type ReplayTableView, type ToolsMode } from '../../../src/shared/protocol/replay';
import { replayPreviewRows, toolsModeLabel } from '../logic/replayViews';

export interface WhatIfCallbacks {
  /** The models the host offers (the configured one first). */
  models(): Promise<WhatIfModelsView>;
  /**
   * Starts the runs (`editedText` null: the message as stored; `tools` undefined: the setting's mode); resolves with
   * them, or with the error text.
   */
  start(
    turn: TurnView,
    editedText: string | null,
    models: string[],
    agent: string | undefined,
    tools: ToolsMode | undefined,
  ): Promise<WhatIfStartedView | string>;
  /** The turn's recorded tool calls and the default tools mode (`replay/table`), for the form's preview. */
  replayTable(turn: TurnView): Promise<ReplayTableView>;
  /** Shows `text` with each started run (in the run's log, which stays in sight as the view moves to its branch). */
  note(started: WhatIfStartedView, text: string): void;
  /** The agent choices as last received (undefined before the first), for the form's picker. */
  agents(): AgentChoicesView | undefined;
  /** The workspace's choice of agent: what *Retry from here* (which has no form) runs with. */
  selectedAgent(): string | undefined;
  /** The user picked an agent in the form. */
  selectAgent(id: string): void;
}

/** What the editor is for: a new text (and models), or the same text on several models. */
type Mode = 'edit' | 'models';

function startedText(started: WhatIfStartedView): string {
  const names = started.runs.map((r) => r.branchId).join(', ');
  return started.runs.length > 1
    ? t('Running on {0}; the comparison opens when they finish.', names)
    : t('Running on {0}; the comparison opens when it finishes.', names);
}

/**
 * Which tools mode a what-if's runs use, by the setting's own word for it (`replay`, `strict`, `live`): *Retry from
 * here* (which has no form) runs in the default one and names it.
 */
function defaultToolsText(table: ReplayTableView | undefined): string {
  return table
    ? t('Tools mode: {0} (the default, agentSessions.replay.mode).', table.mode)
    : t('Tools mode: the default of agentSessions.replay.mode.');
}

/**
 * The what-if actions of a user message: *Retry from here* (the same message on a new branch, current settings),
 * *Edit and resend…* and *Retry with models…*, both through an inline editor: the message text (edit only) and the
 * models to run on, one new branch each, checked against the same limit as the host's.
 */
export function whatIfActions(turn: TurnView, userText: string, cb: WhatIfCallbacks, scope: string): HTMLElement {
  const retry = el('vscode-button', { appearance: 'secondary', class: 'retry-here' }, t('Retry from here'));
  const edit = el('vscode-button', { appearance: 'secondary', class: 'edit-resend' }, t('Edit and resend…'));
  const several = el('vscode-button', { appearance: 'secondary', class: 'retry-models' }, t('Retry with models…'));
  const buttons = el('div', { class: 'what-if-actions' }, retry, edit, several);
  const slot = el('div', { class: 'what-if-slot' });
  const status = el('div', { class: 'what-if-status', role: 'status' });
  const wrap = el('div', { class: 'what-if' }, buttons, slot, status);

  const busy = (on: boolean): void => {
    for (const b of [retry, edit, several]) {
      if (on) b.setAttribute('disabled', '');
      else b.removeAttribute('disabled');
    }
  };
  const models = async (): Promise<WhatIfModelsView | undefined> => {
    try {
      return await cb.models();
    } catch (err) {
      status.textContent = err instanceof Error ? err.message : String(err);
      return undefined;
    }
  };

  retry.addEventListener('click', () => {
    void (async () => {
      busy(true);
      status.textContent = '';
      // Only to say which mode it runs in: the host applies its default itself, so an unreadable table stops nothing.
      const [m, table] = await Promise.all([models(), cb.replayTable(turn).catch(() => undefined)]);
      const result = m ? await cb.start(turn, null, [m.configured], cb.selectedAgent(), undefined) : undefined;
      if (typeof result === 'object') cb.note(result, defaultToolsText(table));
      if (result !== undefined)
        status.textContent = typeof result === 'string' ? result : `${startedText(result)} ${defaultToolsText(table)}`;
      busy(false);
    })();
  });
  const open = (mode: Mode): void => {
    void (async () => {
      busy(true);
      status.textContent = '';
      const [m, table] = await Promise.all([
        models(),
        cb.replayTable(turn).catch((err: unknown) => (err instanceof Error ? err.message : String(err))),
      ]);
      if (!m) return busy(false);
      const close = (message?: string): void => {
        replaceChildren(slot);
        status.textContent = message ?? '';
        busy(false);
        wrap.dispatchEvent(new Event(FORM_CLOSED_EVENT, { bubbles: true }));
      };
      replaceChildren(slot, editor(mode, turn, userText, m, table, cb, close, scope));
    })();
  };
  edit.addEventListener('click', () => open('edit'));
  several.addEventListener('click', () => open('models'));
  return wrap;
}

function editor(
  mode: Mode,
  turn: TurnView,
  userText: string,
  offered: WhatIfModelsView,
  /** The turn's replay table, or why it could not be read. */
  table: ReplayTableView | string,
  cb: WhatIfCallbacks,
  close: (message?: string) => void,
  /** The branch and turn: with the mode, the text's draft key (shared/drafts.ts). */
  scope: string,
): HTMLElement {
  const text =
    mode === 'edit'
      ? el('textarea', { class: 'what-if-text', rows: 3, 'aria-label': t("New text of turn {0}'s message", turn.turn) })
      : undefined;
  if (text) draftInput(text, `what-if-text ${scope}`, userText);
  // Editing starts on the configured model; several models start with as many as may run at once.
  const checks = offered.choices.map((model, i) => {
    const box = el('input', {
      type: 'checkbox',
      class: 'what-if-model',
      value: model,
      checked: mode === 'edit' ? i === 0 : i < MAX_WHAT_IF_MODELS,
    });
    return el(
      'label',
      { class: 'what-if-choice' },
      box,
      model,
      i === 0 ? el('span', { class: 'what-if-hint' }, ` ${t('(current settings)')}`) : null,
    );
  });
  const boxes = (): HTMLInputElement[] => checks.map((c) => c.querySelector('input') as HTMLInputElement);
  const message = el('div', { class: 'validation', role: 'status' });
  const submit = el('vscode-button', { class: 'what-if-submit' });
  const cancel = el('vscode-button', { appearance: 'secondary', class: 'what-if-cancel' }, t('Cancel'));

  const picked = (): string[] =>
    boxes()
      .filter((b) => b.checked)
      .map((b) => b.value);
  const validate = (): string | undefined => {
    const models = picked();
    const n = models.length;
    submit.textContent =
      mode === 'edit'
        ? n > 1
          ? t('Resend on {0} models', n)
          : t('Resend')
        : n === 1
          ? t('Retry on {0}', models[0] ?? '')
          : t('Retry on {0} models', n);
    const problem = whatIfSelectionProblem(models) ?? (text && text.value.trim() === '' ? t('The message is empty.') : undefined);
    message.textContent = problem ?? '';
    if (problem) submit.setAttribute('disabled', '');
    else submit.removeAttribute('disabled');
    return problem;
  };
  const send = async (): Promise<void> => {
    if (validate()) return;
    submit.setAttribute('disabled', '');
    const mode = tools.value();
    const result = await cb.start(turn, text ? text.value : null, picked(), agents.value, mode);
    if (typeof result !== 'string') cb.note(result, mode ? t('Tools mode: {0}.', mode) : defaultToolsText(undefined));
    if (typeof result === 'string') {
      message.textContent = result;
      submit.removeAttribute('disabled');
    } else close(startedText(result));
  };
  for (const b of boxes()) b.addEventListener('change', validate);
  text?.addEventListener('input', validate);
  text?.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      void send();
    }
  });
  submit.addEventListener('click', () => void send());
  cancel.addEventListener('click', () => close());
  // The form's own choice of agent, starting from the workspace's; picking one here also makes it the workspace's.
  const agents = new AgentPicker((id) => cb.selectAgent(id), false);
  const offeredAgents = cb.agents();
  if (offeredAgents) agents.update(offeredAgents);
  const tools = toolsChoice(table, scope, mode);
  validate();
  window.setTimeout(() => (text ?? boxes()[0])?.focus(), 0);
  return el(
    'div',
    { class: 'what-if-form', role: 'group', 'aria-label': mode === 'edit' ? t('Edit and resend') : t('Retry with models') },
    text ? el('label', { class: 'what-if-label' }, t('New message for a branch from turn {0}:', turn.branchTurnNumber ?? '')) : null,
    text,
    el(
      'fieldset',
      { class: 'what-if-models' },
      el('legend', {}, offered.choices.length > 1 ? t('Models (one new branch each, up to {0})', MAX_WHAT_IF_MODELS) : t('Model')),
      ...checks,
      // One model offered: say where more come from, or the form looks like it offers a choice it does not have.
      offered.choices.length === 1
        ? el(
            'p',
            { class: 'what-if-hint what-if-more-models' },
            t('List more models in the setting agentSessions.agent.models to compare them.'),
          )
        : null,
    ),
    agents.element,
    tools.element,
    el('div', { class: 'what-if-buttons' }, submit, cancel),
    message,
  );
}

/**
 * The form's tools mode (docs/replay.md), starting on the default the host said, and the preview of what replay gives
 * back: the turn's recorded calls (arguments and output cut short), and the calls the provider ran, which no re-run
 * can replay. The radios are not drafts (shared/drafts.ts keeps typed text): the open form holds the detail's
 * redraws, so they are never drawn again under the user.
 */
function toolsChoice(
  table: ReplayTableView | string,
  scope: string,
  formMode: Mode,
): { element: HTMLElement; value(): ToolsMode | undefined } {
  const hints: Record<ToolsMode, string> = {
    replay: t('A call that matches a recorded one gets its recorded output; the tool does not run. Any other call runs live.'),
    strict: t('A call that matches no recorded one fails the run before the tool runs; nothing is written.'),
    live: t('Every tool runs again, as it did then.'),
  };
  const name = `what-if-tools ${formMode} ${scope}`;
  const radios = TOOLS_MODES.map((m) =>
    el('input', { type: 'radio', class: 'what-if-tools-mode', name, value: m, checked: typeof table !== 'string' && table.mode === m }),
  );
  const choices = TOOLS_MODES.map((m, i) =>
    el('label', { class: 'what-if-choice', title: hints[m] }, radios[i] ?? null, toolsModeLabel(m)),
  );
  const element = el('fieldset', { class: 'what-if-tools' }, el('legend', {}, t('Tool calls')), ...choices, replayPreview(table));
  return { element, value: () => (radios.find((r) => r.checked)?.value as ToolsMode | undefined) ?? undefined };
}

function replayPreview(table: ReplayTableView | string): HTMLElement {
  if (typeof table === 'string')
    return el(
      'p',
      { class: 'what-if-hint replay-preview-error', role: 'status' },
      t('The recorded tool calls could not be read: {0}', table),
    );
  const rows = replayPreviewRows(table);
  if (rows.length === 0) return el('p', { class: 'what-if-hint replay-preview-empty' }, t('This turn called no tools: nothing to replay.'));
  const body = el('tbody');
  for (const row of rows) {
    if (row.kind === 'hosted') {
      body.appendChild(
        el(
          'tr',
          { class: 'replay-hosted' },
          el('td', { class: 'replay-tool' }, row.name),
          el('td', { colspan: 2, class: 'replay-not-replayable' }, t('run by the provider: cannot be replayed')),
        ),
      );
      continue;
    }
    body.appendChild(
      el(
        'tr',
        { class: 'replay-call', title: row.callId },
        el('td', { class: 'replay-tool' }, row.name),
        el('td', { class: 'replay-arguments' }, row.arguments),
        row.output === null
          ? el('td', { class: 'replay-output replay-no-output' }, t('no output recorded'))
          : el('td', { class: 'replay-output' }, row.output),
      ),
    );
  }
  return el(
    'div',
    { class: 'replay-preview' },
    el(
      'table',
      { class: 'replay-table', 'aria-label': t('Recorded tool calls of turn {0}', table.turn) },
      el('thead', {}, el('tr', {}, el('th', {}, t('Tool')), el('th', {}, t('Arguments')), el('th', {}, t('Recorded output')))),
      body,
    ),
    table.nameOnly.length > 0 ? el('p', { class: 'what-if-hint' }, t('Matched by name alone: {0}', table.nameOnly.join(', '))) : null,
  );
}
