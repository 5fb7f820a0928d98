import { branchNameProblem, suggestedBranchName } from '../../../src/shared/branchNames';
import { displayType, isMessageItem, isRecord, messageText, outputText, prettyJson } from '../../../src/shared/itemText';
import type { CopyPart } from '../../../src/shared/protocol/conversation';
import { itemTitle } from '../../../src/shared/itemTitles';
import {
  builtinToolView,
  callIdOf,
  outputImages,
  pairToolItems,
  pairedToolName,
  toolRole,
  type ToolItemView,
} from '../../../src/shared/toolItems';
import type { ItemView, TimelineView, TurnView } from '../../../src/shared/protocol/conversationViews';
import { renderTimeline } from './timeline';
import { contextSection } from './context';
import type { TurnContextView } from '../../../src/shared/protocol/contextViews';
import { renderReviewBar, type ReviewBarState } from './reviewBar';
import type { TurnReviewChangeView } from '../../../src/shared/protocol/reviewViews';
import { el, replaceChildren } from '../../shared/dom';
import { draftInput } from '../../shared/drafts';
import { FORM_CLOSED_EVENT } from '../logic/detailRedraw';
import { localMemory, toggleKey, type ToggleMemory } from '../logic/detailState';
import { turnLabel } from '../logic/itemCount';
import { t } from '../../shared/l10n';
import { renderMarkdown } from './markdown';
import { whatIfActions, type WhatIfCallbacks } from './whatIfForm';
import { replayBadgeSlot } from './replayBadges';

/** Outputs longer than this are collapsed until the user expands them. */
const LONG_OUTPUT_CHARS = 1200;

export interface TurnDetailCallbacks {
  openLink(url: string): void;
  /** Creates a branch from this turn; resolves with an error message, or undefined on success. */
  branchHere(turn: TurnView, name: string): Promise<string | undefined>;
  /** Retry from here, Edit and resend, Retry with models (whatIfForm.ts). */
  whatIf: WhatIfCallbacks;
  /** Copies part of an item (`sequenceNumber`) or of the turn (null) through the host; resolves whether it did. */
  copy(turn: number, sequenceNumber: number | null, part: CopyPart): Promise<boolean>;
  /** Opens an item (or the turn, null) as JSON in an editor tab. */
  openJson(turn: number, sequenceNumber: number | null): void;
  /** The turn's timeline from the trace store (asked for when the Timeline section is opened). */
  timeline(turn: TurnView): Promise<TimelineView>;
  /** What the model saw in the turn (asked for when the Context section is opened; components/context.ts). */
  context(turn: TurnView): Promise<TurnContextView>;
  /** Links an unlinked trace to the turn (the host asks which); false when none was linked. */
  linkTrace(turn: TurnView): Promise<boolean>;
  /** The turn's review, the tags to offer, and a problem if reviews cannot be used. */
  reviewState(turn: TurnView): ReviewBarState;
  /** Changes the turn's review (only what `change` names). */
  review(turn: TurnView, change: TurnReviewChangeView): void;
  /** The correction of the turn's item at `itemIndex`, if one is kept. */
  correctionOf(turn: TurnView, itemIndex: number): string | undefined;
  /** Keeps (null: removes) a correction; rejects with the host's reason. */
  correct(turn: TurnView, itemIndex: number, text: string | null): Promise<void>;
  /** Hands the turn over to the chat (or, without one, copies the prompt); resolves with whether a chat took it. */
  askCopilot(turn: TurnView): Promise<boolean>;
  /** Makes a branch that continues from the kept correction (the host asks for its name) and shows it. */
  continueFromCorrection(turn: TurnView, itemIndex: number): Promise<void>;
}

/**
 * Under an assistant message: the correction kept for it (with Edit and Remove), or *Write the answer it should have
 * given…*; the form holds the detail's redraws while open, as Branch here does. `scope`: the branch and turn, which
 * with the item names the text's draft (shared/drafts.ts).
 */
function correctionBlock(turn: TurnView, itemIndex: number, answer: string, cb: TurnDetailCallbacks, scope: string): HTMLElement {
  const wrap = el('div', { class: 'correction' });
  const show = (): void => {
    const kept = cb.correctionOf(turn, itemIndex);
    if (kept === undefined) {
      const write = el('vscode-button', { appearance: 'secondary', class: 'correct-button' }, t('Write the answer it should have given…'));
      write.addEventListener('click', () => edit(answer));
      replaceChildren(wrap, write);
      return;
    }
    const editButton = el('vscode-button', { appearance: 'secondary', class: 'correction-edit' }, t('Edit'));
    editButton.addEventListener('click', () => edit(kept));
    const remove = el('vscode-button', { appearance: 'secondary', class: 'correction-remove' }, t('Remove'));
    remove.addEventListener('click', () => void cb.correct(turn, itemIndex, null).then(show, (err: unknown) => fail(err)));
    // Only a turn the store can fork before (it has a branch turn number) can be continued on a branch of its own.
    const branchButton =
      turn.branchTurnNumber === null
        ? null
        : el(
            'vscode-button',
            {
              appearance: 'secondary',
              class: 'correction-branch',
              title: t('A new branch with this turn again, ending with the corrected answer, to continue from'),
            },
            t('Continue from this answer…'),
          );
    branchButton?.addEventListener('click', () => void cb.continueFromCorrection(turn, itemIndex).catch((err: unknown) => fail(err)));
    replaceChildren(
      wrap,
      el('div', { class: 'correction-label' }, t('Correction (the answer it should have given)')),
      el('div', { class: 'correction-text' }, kept),
      el('div', { class: 'correction-buttons' }, editButton, remove, branchButton),
    );
  };
  const fail = (err: unknown): void => {
    wrap.appendChild(el('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
  };
  const edit = (start: string): void => {
    const text = el('textarea', {
      class: 'correction-input',
      rows: 4,
      'aria-label': t('The answer it should have given'),
    }) as HTMLTextAreaElement;
    draftInput(text, `correction ${scope} ${itemIndex}`, start);
    const save = el('vscode-button', { appearance: 'primary', class: 'correction-save' }, t('Save correction'));
    const cancel = el('vscode-button', { appearance: 'secondary', class: 'correction-cancel' }, t('Cancel'));
    const form = el('div', { class: 'correction-form' }, text, el('div', { class: 'correction-buttons' }, save, cancel));
    const close = (): void => {
      show();
      wrap.dispatchEvent(new Event(FORM_CLOSED_EVENT, { bubbles: true }));
    };
    save.addEventListener('click', () => {
      if (text.value.trim() === '') return;
      void cb.correct(turn, itemIndex, text.value).then(close, (err: unknown) => fail(err));
    });
    cancel.addEventListener('click', close);
    text.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save.click();
      else if (e.key === 'Escape') cancel.click();
    });
    replaceChildren(wrap, form);
    text.focus();
  };
  show();
  return wrap;
}

/** Draws the shown turn's review bar again (its review changed), leaving the rest of the detail as it is. */
export function redrawReviewBar(
  container: HTMLElement,
  turn: TurnView | undefined,
  cb: Pick<TurnDetailCallbacks, 'reviewState' | 'review'>,
): void {
  const bar = container.querySelector<HTMLElement>('.review-bar');
  if (bar && turn) renderReviewBar(bar, cb.reviewState(turn), (c) => cb.review(turn, c), bar.dataset.scope ?? '');
}

/** Sent to the Timeline section to read its turn again (the trace store changed). */
const RELOAD_TIMELINE = 'timeline-reload';

/** Reads the shown turn's Timeline again if it is open (`container`: the detail pane). */
export function reloadTimeline(container: HTMLElement): void {
  container.querySelector('.timeline-section')?.dispatchEvent(new Event(RELOAD_TIMELINE));
}

/** Whether the user keeps the Timeline open: the next turn shown opens it too. */
let timelineOpen = false;

/** The Timeline section of a turn: closed until asked for, then loaded and drawn (components/timeline.ts). */
function timelineSection(turn: TurnView, cb: TurnDetailCallbacks): HTMLElement {
  const body = el('div', { class: 'timeline-body' });
  const section = el('details', { class: 'timeline-section' }, el('summary', { 'data-focus': 'timeline' }, t('Timeline')), body);
  let loaded = false;
  let drawn = false;
  const load = (): void => {
    if (loaded) return;
    loaded = true;
    // Read again (new spans): the rows drawn stay until the new ones replace them, rather than blinking away.
    if (!drawn) renderTimeline(body, undefined);
    const asked = performance.now();
    cb.timeline(turn).then(
      (view) => {
        renderTimeline(body, view, () => {
          cb.linkTrace(turn).then(
            () => undefined,
            (err: unknown) => renderTimeline(body, err instanceof Error ? err.message : String(err)),
          );
        });
        // From the request to the rows in the DOM (npm run bench:view reads it; target 150 ms at 500 spans).
        body.dataset.drawnMs = String(Math.round(performance.now() - asked));
        drawn = true;
      },
      (err: unknown) => {
        loaded = false;
        renderTimeline(body, err instanceof Error ? err.message : String(err));
      },
    );
  };
  section.addEventListener('toggle', () => {
    timelineOpen = section.open;
    if (section.open) load();
  });
  section.addEventListener(RELOAD_TIMELINE, () => {
    loaded = false;
    if (section.open) load();
  });
  if (timelineOpen) section.open = true;
  return section;
}

/**
 * A text cut to its first `LONG_OUTPUT_CHARS` with *Show all* (and *Collapse*); whether it is expanded is kept in
 * `memory` under `key` (logic/detailState.ts), so a redraw of the turn leaves it as the user set it.
 */
function collapsible(text: string, cls: string, memory: ToggleMemory, key: string): HTMLElement {
  const cut = (): string => text.slice(0, LONG_OUTPUT_CHARS) + '…';
  if (text.length <= LONG_OUTPUT_CHARS) return el('pre', { class: cls }, text);
  let open = memory.isOn(key);
  const pre = el('pre', { class: cls }, open ? text : cut());
  const showAll = (): string => t('Show all ({0} characters)', text.length.toLocaleString('en-US'));
  const toggle = el(
    'vscode-button',
    { appearance: 'secondary', class: 'expand', 'aria-expanded': open ? 'true' : 'false', 'data-focus': key },
    open ? t('Collapse') : showAll(),
  );
  toggle.addEventListener('click', () => {
    open = !open;
    memory.set(key, open);
    pre.textContent = open ? text : cut();
    toggle.textContent = open ? t('Collapse') : showAll();
    toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
  });
  return el('div', {}, pre, toggle);
}

/** Images from a tool (data URLs only, checked by `imageDataUrl`), shown no larger than the stylesheet allows. */
function images(urls: readonly string[], note: string | undefined): HTMLElement | null {
  if (urls.length === 0 && !note) return null;
  return el(
    'div',
    { class: 'tool-images' },
    ...urls.map((src, i) => {
      const img = el('img', { class: 'tool-image', src, alt: t('Image {0} from the tool', i + 1), loading: 'lazy' });
      // Well-formed base64 that is not a picture the browser can decode: say so instead of a broken-image icon.
      img.addEventListener('error', () =>
        img.replaceWith(
          el('p', { class: 'image-note image-broken' }, t('Image {0} could not be shown: its data is not a valid image.', i + 1)),
        ),
      );
      return img;
    }),
    note ? el('p', { class: 'image-note' }, note) : null,
  );
}

/**
 * A built-in tool item's key fields (src/shared/toolItems.ts) as a definition list, and its images. `sequenceNumber`:
 * the item's, which with a field's place names its expanded state in `memory`.
 */
function toolFields(view: ToolItemView, memory: ToggleMemory, sequenceNumber: number): HTMLElement {
  const list = el('dl', { class: 'tool-fields' });
  view.fields.forEach((f, i) => {
    list.appendChild(el('dt', {}, f.label));
    list.appendChild(
      el('dd', {}, f.code ? collapsible(f.text, 'field-code', memory, toggleKey('expanded', sequenceNumber, `field-${i}`)) : f.text),
    );
  });
  return el('div', { class: 'tool-view' }, view.fields.length ? list : null, images(view.images, view.imageNote));
}

/** An item's body as drawn for people; `memory`: where its long texts keep whether they are expanded. */
function itemBody(item: ItemView, cb: Pick<TurnDetailCallbacks, 'openLink'>, memory: ToggleMemory): HTMLElement {
  if (item.corrupt) {
    return el(
      'div',
      { class: 'unreadable' },
      el('p', {}, t('This row cannot be read: {0}', item.error)),
      el('pre', { class: 'raw' }, item.raw ?? t('(the message row is missing)')),
    );
  }
  const it = item.item;
  if (isMessageItem(it)) return renderMarkdown(messageText(it.content), cb.openLink);
  if (isRecord(it)) {
    const builtin = builtinToolView(it);
    if (builtin) return toolFields(builtin, memory, item.sequenceNumber);
    switch (displayType(item.type)) {
      case 'function_call':
        return el('pre', { class: 'arguments', 'aria-label': t('Arguments') }, prettyJson(it.arguments ?? it.input ?? ''));
      case 'custom_tool_call':
        // A custom tool's input is free text (a grammar's output, a patch, code), shown as written.
        return el(
          'pre',
          { class: 'arguments', 'aria-label': t('Input') },
          typeof it.input === 'string' ? it.input : prettyJson(it.input ?? ''),
        );
      case 'custom_tool_call_output':
      case 'function_call_output': {
        const shown = outputImages(it.output);
        const text = outputText(it.output, { pretty: true });
        const key = toggleKey('expanded', item.sequenceNumber, 'output');
        return el('div', { class: 'output-view' }, collapsible(text, 'output', memory, key), images(shown.images, shown.note));
      }
      case 'reasoning': {
        const summary = Array.isArray(it.summary) ? messageText(it.summary) : messageText(it.content);
        return el('p', { class: 'reasoning' }, summary || t('(no summary)'));
      }
      default:
        break;
    }
  }
  return el('pre', { class: 'other' }, item.json);
}

/** What a copy button on an item copies: a message's text, a call's arguments, a tool's output. */
function copyPart(item: ItemView): CopyPart | undefined {
  if (item.corrupt) return undefined;
  if (isMessageItem(item.item)) return 'text';
  const type = displayType(item.type);
  if (type === 'function_call' || type === 'custom_tool_call') return 'arguments';
  if (toolRole(item.item) === 'output') return 'output';
  return undefined;
}

const COPY_LABELS: Record<CopyPart, () => string> = {
  text: () => t('Copy'),
  arguments: () => t('Copy arguments'),
  output: () => t('Copy output'),
  json: () => t('Copy JSON'),
  markdown: () => t('Copy Turn as Markdown'),
};

/**
 * A button that copies through the host, then says "Copied" (or why not) for a moment. `focusKey`: what names it in
 * the detail, so a redraw gives it the focus back.
 */
export function copyButton(
  part: CopyPart,
  copy: () => Promise<boolean>,
  appearance: 'icon' | 'secondary' = 'icon',
  focusKey?: string,
): HTMLElement {
  const label = COPY_LABELS[part]();
  const button = el(
    'vscode-button',
    { appearance, class: `copy copy-${part}`, title: label, 'aria-label': label, 'data-focus': focusKey },
    appearance === 'icon' ? t('Copy') : label,
  );
  const status = el('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  let timer: number | undefined;
  button.addEventListener('click', () => {
    void copy()
      .catch(() => false)
      .then((copied) => {
        status.textContent = copied ? t('Copied') : t('Not copied');
        status.classList.toggle('failed', !copied);
        window.clearTimeout(timer);
        timer = window.setTimeout(() => (status.textContent = ''), 1800);
      });
  });
  return el('span', { class: 'copy-wrap' }, button, status);
}

/** *Ask Copilot*: the turn handed over to the chat with the tool that reads it (the host says when no chat can). */
function askButton(turn: TurnView, cb: TurnDetailCallbacks): HTMLElement {
  const label = t('Ask Copilot about This Turn');
  const b = el(
    'vscode-button',
    { appearance: 'secondary', class: 'ask-copilot', title: label, 'aria-label': label, 'data-focus': 'ask-copilot' },
    t('Ask Copilot'),
  );
  b.addEventListener('click', () => void cb.askCopilot(turn).catch(() => false));
  return b;
}

function openJsonButton(open: () => void, focusKey: string, label = t('Open as JSON')): HTMLElement {
  // "JSON ↗" opens an editor tab; "Raw" (beside it) shows the same JSON in place: their faces say which is which.
  const b = el(
    'vscode-button',
    { appearance: 'icon', class: 'open-json', title: label, 'aria-label': label, 'data-focus': focusKey },
    'JSON ↗',
  );
  b.addEventListener('click', open);
  return b;
}

/**
 * One item as a card: its title (who spoke, which tool ran: src/shared/itemTitles.ts), time, stored type (small, for
 * people debugging the format), copy and JSON buttons, and its body (raw JSON one click away). `toolName` is the
 * store's, or the call's for an output that stores none, so both halves of a pair name the tool. Its toggles keep
 * their state in `memory`, its buttons are named for the focus (`data-focus`) by the item's sequence number: a
 * redraw of the turn gives both back.
 */
function itemCard(
  turn: TurnView,
  item: ItemView,
  cb: TurnDetailCallbacks,
  toolName: string | null,
  tag: 'li' | 'div',
  memory: ToggleMemory,
): HTMLElement {
  const type = item.corrupt ? 'unreadable' : displayType(item.type);
  const cls = type.replace(/[^a-z_]/g, '');
  const title = item.corrupt ? t('unreadable') : itemTitle(type, toolName, item.item);
  const part = copyPart(item);
  const body = el('div', { class: 'item-body' }, itemBody(item, cb, memory));
  const rawToggle = rawToggleFor(item, body, cb, memory);
  const seq = item.sequenceNumber;
  // A call's replay badge (components/replayBadges.ts) goes in this slot when its marks arrive.
  const callId = item.corrupt || toolRole(item.item) !== 'call' ? undefined : callIdOf(item.item);
  const header = el(
    'div',
    { class: 'item-header' },
    el('span', { class: `item-title type-${cls}`, title: `${title} (${item.type})` }, title),
    callId !== undefined ? replayBadgeSlot(callId) : null,
    el('span', { class: 'item-time', title: item.createdAt ?? '' }, item.createdAt ?? ''),
    el(
      'span',
      { class: 'item-buttons' },
      // A message's stored type only repeats its role: it stays in the title's tooltip.
      item.corrupt || !isMessageItem(item.item)
        ? el('span', { class: 'item-type', title: t('Stored type: {0}', item.type) }, item.type)
        : null,
      part ? copyButton(part, () => cb.copy(turn.turn, seq, part), 'icon', `copy ${seq}`) : null,
      item.corrupt ? null : openJsonButton(() => cb.openJson(turn.turn, seq), `json ${seq}`),
      rawToggle,
    ),
  );
  return el(tag, { class: `item item-${cls}`, 'data-sequence': item.sequenceNumber }, header, body);
}

/**
 * The *Raw* button of an item card: swaps `body` between the rendered item and its stored JSON (as text, never HTML);
 * which one it shows is kept in `memory`.
 */
function rawToggleFor(item: ItemView, body: HTMLElement, cb: Parameters<typeof itemBody>[1], memory: ToggleMemory): HTMLElement {
  const key = toggleKey('raw', item.sequenceNumber);
  let raw = memory.isOn(key);
  const toggle = el(
    'vscode-button',
    {
      appearance: 'icon',
      class: 'raw-toggle',
      'aria-label': t('Show raw JSON'),
      title: t('Show the stored JSON here'),
      'aria-pressed': raw ? 'true' : 'false',
      'data-focus': key,
    },
    t('Raw'),
  );
  const draw = (): void =>
    replaceChildren(body, raw ? el('pre', { class: 'raw' }, item.corrupt ? (item.raw ?? '') : item.json) : itemBody(item, cb, memory));
  if (raw) draw();
  toggle.addEventListener('click', () => {
    raw = !raw;
    memory.set(key, raw);
    draw();
    toggle.setAttribute('aria-pressed', raw ? 'true' : 'false');
  });
  return toggle;
}

/**
 * An item that is no row of the session (a history guard layer's, components/historyLayers.ts): titled and drawn as
 * `itemCard` draws a branch's item, with its raw JSON one click away and `badge` after the title, but no copy, JSON or
 * branch buttons: those read the session file, which no longer holds it.
 */
export function readOnlyItemCard(item: ItemView, openLink: (url: string) => void, badge: HTMLElement | null): HTMLElement {
  const type = item.corrupt ? 'unreadable' : displayType(item.type);
  const cls = type.replace(/[^a-z_]/g, '');
  const title = item.corrupt ? t('unreadable') : itemTitle(type, item.toolName, item.item);
  const cb = { openLink };
  // No row of the session: its toggles keep their state in the card, for as long as the layer is shown.
  const memory = localMemory();
  const body = el('div', { class: 'item-body' }, itemBody(item, cb, memory));
  const rawToggle = rawToggleFor(item, body, cb, memory);
  const header = el(
    'div',
    { class: 'item-header' },
    el('span', { class: `item-title type-${cls}`, title: `${title} (${item.type})` }, title),
    badge,
    el(
      'span',
      { class: 'item-buttons' },
      el('span', { class: 'item-type', title: t('Stored type: {0}', item.type) }, item.type),
      rawToggle,
    ),
  );
  return el('li', { class: `item item-${cls}`, 'data-sequence': item.sequenceNumber }, header, body);
}

/** What *Branch here* needs: the branch shown, whether it may branch, and every name the session ever used. */
export interface Branching {
  branchId: string;
  allowed: boolean;
  usedIds: ReadonlySet<string>;
}

/**
 * The items of the selected turn, in order, calls and their outputs paired, with "Branch here" on its user message.
 * `memory`: where the cards' toggles keep their state (logic/detailState.ts), so a redraw of the turn keeps it.
 */
export function renderTurnDetail(
  container: HTMLElement,
  turn: TurnView | undefined,
  items: ItemView[] | string | undefined,
  branching: Branching,
  cb: TurnDetailCallbacks,
  memory: ToggleMemory,
): void {
  const { allowed: canBranch } = branching;
  // What the turn's inputs are for, in their draft keys: a redraw of this turn gives them back what was typed.
  const scope = turn ? `${branching.branchId} ${turn.turn}` : '';
  if (!turn) {
    replaceChildren(container, el('p', { class: 'placeholder' }, t('Select a turn to see its items.')));
    return;
  }
  if (items === undefined) {
    replaceChildren(container, el('p', { class: 'placeholder' }, t('Loading turn {0}…', turn.turn)));
    return;
  }
  if (typeof items === 'string') {
    replaceChildren(container, el('p', { class: 'error', role: 'alert' }, items));
    return;
  }
  const list = el('ol', {
    class: 'items',
    'aria-label': turn.turn === 0 ? t('Items before the first turn') : t('Items of turn {0}', turn.turn),
  });
  for (const entry of pairToolItems(items, (v) => (v.corrupt ? undefined : v.item))) {
    if (entry.kind === 'pair') {
      const { call, output } = entry;
      const name = pairedToolName(call.corrupt ? undefined : call.item, output.corrupt ? undefined : output.item, {
        call: call.toolName,
        output: output.toolName,
      });
      list.appendChild(
        el(
          'li',
          { class: 'item-pair', 'aria-label': t('{0}: call and output', name ?? t('tool')) },
          itemCard(turn, call, cb, name, 'div', memory),
          itemCard(turn, output, cb, name, 'div', memory),
        ),
      );
      continue;
    }
    const item = entry.item;
    const toolName = item.toolName ?? (item.corrupt ? null : (builtinToolView(item.item)?.tool ?? null));
    const li = itemCard(turn, item, cb, toolName, 'li', memory);
    if (!item.corrupt && turn.turn > 0 && isMessageItem(item.item) && (item.item as { role?: unknown }).role === 'assistant')
      li.appendChild(correctionBlock(turn, items.indexOf(item), messageText(item.item.content), cb, scope));
    const type = item.corrupt ? 'unreadable' : displayType(item.type);
    if (!item.corrupt && type === 'user' && canBranch && turn.branchTurnNumber !== null) {
      li.appendChild(branchForm(turn, branching, cb));
      li.appendChild(whatIfActions(turn, isMessageItem(item.item) ? messageText(item.item.content) : '', cb.whatIf, scope));
    }
    list.appendChild(li);
  }
  const title = el(
    'div',
    { class: 'turn-title-row' },
    el('h2', { class: 'turn-title' }, turnLabel(turn.turn)),
    el(
      'span',
      { class: 'turn-buttons' },
      copyButton('markdown', () => cb.copy(turn.turn, null, 'markdown'), 'secondary', 'copy turn'),
      turn.turn !== 0 ? askButton(turn, cb) : null,
      openJsonButton(() => cb.openJson(turn.turn, null), 'json turn', t('Open Turn as JSON')),
    ),
  );
  let reviewBar: HTMLElement | null = null;
  if (turn.turn !== 0) {
    reviewBar = el('section', { class: 'review-bar', 'aria-label': t('Review of turn {0}', turn.turn), 'data-scope': scope });
    renderReviewBar(reviewBar, cb.reviewState(turn), (c) => cb.review(turn, c), scope);
  }
  replaceChildren(
    container,
    title,
    reviewBar,
    turn.turn === 0 ? null : timelineSection(turn, cb),
    turn.turn === 0 ? null : contextSection(turn, cb.context),
    list,
  );
}

/** Whether an inline form (Branch here, Edit and resend, Retry with models) is open in `container`. */
export function hasOpenForm(container: HTMLElement): boolean {
  return container.querySelector('.branch-form, .what-if-form, .correction-form') !== null;
}

function branchForm(turn: TurnView, { branchId, usedIds }: Branching, cb: TurnDetailCallbacks): HTMLElement {
  const wrap = el('div', { class: 'branch-here' });
  const open = el('vscode-button', { appearance: 'secondary', class: 'branch-here-button' }, t('Branch here'));
  wrap.appendChild(open);
  open.addEventListener('click', () => {
    const field = el('vscode-text-field', {
      class: 'branch-name',
      placeholder: t('New branch name'),
      'aria-label': t('New branch name'),
      // The name the tree's Branch from Turn offers too; selected, so typing replaces it.
      value: suggestedBranchName(branchId, turn.branchTurnNumber ?? turn.turn, usedIds),
    }) as HTMLElement & { value: string };
    const message = el('div', { class: 'validation', role: 'status' });
    const create = el('vscode-button', { class: 'branch-create', disabled: true }, t('Create branch'));
    const cancel = el('vscode-button', { appearance: 'secondary' }, t('Cancel'));
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
    cancel.addEventListener('click', () => {
      replaceChildren(wrap, open);
      wrap.dispatchEvent(new Event(FORM_CLOSED_EVENT, { bubbles: true }));
    });
    replaceChildren(
      wrap,
      el(
        'div',
        { class: 'branch-form' },
        el('label', {}, t('New branch from turn {0}:', turn.branchTurnNumber ?? '')),
        field,
        create,
        cancel,
      ),
      message,
    );
    validate();
    const suggested = field.value;
    window.setTimeout(() => {
      // The suggestion is selected so that typing replaces it; but on a busy machine this comes after the user has
      // begun to type, and selecting then would make their next key replace what they typed.
      if (field.value !== suggested) return;
      field.focus();
      field.shadowRoot?.querySelector('input')?.select();
    }, 0);
  });
  return wrap;
}
