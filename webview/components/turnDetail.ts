import { branchNameProblem } from '../../src/shared/branchNames';
import { displayType, isMessageItem, isRecord, messageText, outputText, prettyJson } from '../../src/shared/itemText';
import type { ItemView, TurnView } from '../../src/shared/viewModels';
import { el, replaceChildren } from '../dom';
import { renderMarkdown } from './markdown';
import { whatIfActions, type WhatIfCallbacks } from './whatIfForm';

/** Outputs longer than this are collapsed until the user expands them. */
const LONG_OUTPUT_CHARS = 1200;

export interface TurnDetailCallbacks {
  openLink(url: string): void;
  /** Creates a branch from this turn; resolves with an error message, or undefined on success. */
  branchHere(turn: TurnView, name: string): Promise<string | undefined>;
  /** Retry from here, Edit and resend, Retry with models (whatIfForm.ts). */
  whatIf: WhatIfCallbacks;
}

function collapsible(text: string): HTMLElement {
  const pre = el('pre', { class: 'output' }, text.length > LONG_OUTPUT_CHARS ? text.slice(0, LONG_OUTPUT_CHARS) + '…' : text);
  if (text.length <= LONG_OUTPUT_CHARS) return pre;
  const toggle = el(
    'vscode-button',
    { appearance: 'secondary', class: 'expand' },
    `Show all (${text.length.toLocaleString('en-US')} characters)`,
  );
  let open = false;
  toggle.addEventListener('click', () => {
    open = !open;
    pre.textContent = open ? text : text.slice(0, LONG_OUTPUT_CHARS) + '…';
    toggle.textContent = open ? 'Collapse' : `Show all (${text.length.toLocaleString('en-US')} characters)`;
  });
  return el('div', {}, pre, toggle);
}

function itemBody(item: ItemView, cb: TurnDetailCallbacks): HTMLElement {
  if (item.corrupt) {
    return el(
      'div',
      { class: 'unreadable' },
      el('p', {}, `This row cannot be read: ${item.error}`),
      el('pre', { class: 'raw' }, item.raw ?? '(the message row is missing)'),
    );
  }
  const it = item.item;
  if (isMessageItem(it)) return renderMarkdown(messageText(it.content), cb.openLink);
  if (isRecord(it)) {
    switch (displayType(item.type)) {
      case 'function_call':
      case 'custom_tool_call':
        return el('pre', { class: 'arguments', 'aria-label': 'Arguments' }, prettyJson(it.arguments ?? it.input ?? ''));
      case 'function_call_output':
      case 'computer_call_output':
      case 'custom_tool_call_output':
        return collapsible(outputText(it.output, { pretty: true }));
      case 'reasoning': {
        const summary = Array.isArray(it.summary) ? messageText(it.summary) : messageText(it.content);
        return el('p', { class: 'reasoning' }, summary || '(no summary)');
      }
      default:
        break;
    }
  }
  return el('pre', { class: 'other' }, item.json);
}

/** The items of the selected turn, in order, with "Branch here" on its user message. */
export function renderTurnDetail(
  container: HTMLElement,
  turn: TurnView | undefined,
  items: ItemView[] | string | undefined,
  canBranch: boolean,
  usedIds: Set<string>,
  cb: TurnDetailCallbacks,
): void {
  if (!turn) {
    replaceChildren(container, el('p', { class: 'placeholder' }, 'Select a turn to see its items.'));
    return;
  }
  if (items === undefined) {
    replaceChildren(container, el('p', { class: 'placeholder' }, `Loading turn ${turn.turn}…`));
    return;
  }
  if (typeof items === 'string') {
    replaceChildren(container, el('p', { class: 'error', role: 'alert' }, items));
    return;
  }
  const list = el('ol', { class: 'items', 'aria-label': `Items of turn ${turn.turn}` });
  for (const item of items) {
    const type = item.corrupt ? 'unreadable' : displayType(item.type);
    const header = el(
      'div',
      { class: 'item-header' },
      el('span', { class: `item-type type-${type.replace(/[^a-z_]/g, '')}` }, type),
      item.toolName ? el('span', { class: 'tool-badge' }, item.toolName) : null,
      el('span', { class: 'item-time' }, item.createdAt ?? ''),
    );
    const body = el('div', { class: 'item-body' }, itemBody(item, cb));
    const rawToggle = el(
      'vscode-button',
      { appearance: 'icon', class: 'raw-toggle', 'aria-label': 'Show raw JSON', title: 'Raw JSON' },
      '{ }',
    );
    let raw = false;
    rawToggle.addEventListener('click', () => {
      raw = !raw;
      replaceChildren(body, raw ? el('pre', { class: 'raw' }, item.corrupt ? (item.raw ?? '') : item.json) : itemBody(item, cb));
      rawToggle.setAttribute('aria-pressed', raw ? 'true' : 'false');
    });
    header.appendChild(rawToggle);
    const li = el('li', { class: `item item-${type.replace(/[^a-z_]/g, '')}`, 'data-sequence': item.sequenceNumber }, header, body);
    if (!item.corrupt && type === 'user' && canBranch && turn.branchTurnNumber !== null) {
      li.appendChild(branchForm(turn, usedIds, cb));
      li.appendChild(whatIfActions(turn, isMessageItem(item.item) ? messageText(item.item.content) : '', cb.whatIf));
    }
    list.appendChild(li);
  }
  replaceChildren(container, el('h2', { class: 'turn-title' }, `Turn ${turn.turn}`), list);
}

function branchForm(turn: TurnView, usedIds: Set<string>, cb: TurnDetailCallbacks): HTMLElement {
  const wrap = el('div', { class: 'branch-here' });
  const open = el('vscode-button', { appearance: 'secondary', class: 'branch-here-button' }, 'Branch here');
  wrap.appendChild(open);
  open.addEventListener('click', () => {
    const field = el('vscode-text-field', {
      class: 'branch-name',
      placeholder: 'New branch name',
      'aria-label': 'New branch name',
    }) as HTMLElement & { value: string };
    const message = el('div', { class: 'validation', role: 'status' });
    const create = el('vscode-button', { class: 'branch-create', disabled: true }, 'Create branch');
    const cancel = el('vscode-button', { appearance: 'secondary' }, 'Cancel');
    const validate = (): string | undefined => {
      const problem = branchNameProblem(field.value ?? '', usedIds);
      message.textContent = field.value ? (problem ?? '') : '';
      if (problem) create.setAttribute('disabled', '');
      else create.removeAttribute('disabled');
      return problem;
    };
    field.addEventListener('input', validate);
    const submit = async (): Promise<void> => {
      if (validate()) return;
      create.setAttribute('disabled', '');
      const error = await cb.branchHere(turn, field.value);
      if (error) {
        message.textContent = error;
        create.removeAttribute('disabled');
      }
    };
    field.addEventListener('keydown', (ev) => {
      if ((ev as KeyboardEvent).key === 'Enter') void submit();
    });
    create.addEventListener('click', () => void submit());
    cancel.addEventListener('click', () => replaceChildren(wrap, open));
    replaceChildren(
      wrap,
      el('div', { class: 'branch-form' }, el('label', {}, `New branch from turn ${turn.branchTurnNumber}:`), field, create, cancel),
      message,
    );
    window.setTimeout(() => field.focus(), 0);
  });
  return wrap;
}
