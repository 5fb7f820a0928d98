/**
 * A turn's Context section (docs/context.md): what the model saw. Labelled *recorded* or *reconstructed* first; then
 * the tokenizer, the usage row's cached share and the notes; each model request as a share bar (tokens by kind) over
 * its items in the order sent, each with its tokens; and the stored items outside the window, greyed, with why.
 * Everything from the session goes in as text (`el()`).
 */
import type {
  ContextItemKind,
  ContextItemView,
  ContextNote,
  ContextRequestView,
  OutsideReason,
  TurnContextView,
} from '../../../src/shared/protocol/contextViews';
import type { TurnView } from '../../../src/shared/protocol/conversationViews';
import { el, replaceChildren } from '../../shared/dom';
import { t } from '../../shared/l10n';
import { itemCountLabel, tokenCountLabel } from '../logic/itemCount';

const KIND_LABELS: Record<ContextItemKind, () => string> = {
  instructions: () => t('Instructions'),
  'tool-definitions': () => t('Tool definitions'),
  user: () => t('User'),
  assistant: () => t('Assistant'),
  system: () => t('System'),
  'tool-call': () => t('Tool call'),
  'tool-output': () => t('Tool output'),
  reasoning: () => t('Reasoning'),
  compaction: () => t('Compaction summary'),
  other: () => t('Other'),
};

const REASON_LABELS: Record<OutsideReason, () => string> = {
  limit: () => t('older than the window (session limit)'),
  compaction: () => t('replaced by a compaction item'),
  'not-sent': () => t('not sent'),
};

const num = (n: number): string => n.toLocaleString('en-US');
const pct = (part: number, whole: number): string => (whole > 0 ? `${Math.round((part / whole) * 100)}%` : '–');

function noteText(n: ContextNote): string {
  switch (n.code) {
    case 'no-instructions':
      return t('Instructions and tool definitions are not items: a reconstruction does not know them.');
    case 'limit':
      return t("The session's limit ({0} items) was applied to the history.", n.limit);
    case 'compaction':
      return t('A compaction item is in the window: the items it replaced are no longer stored.');
    case 'recorded-unreadable':
      return t("{0} recorded inputs could not be read (cut by the trace store's limits, or not JSON).", n.requests);
    case 'estimated':
      return t('{0} older items are counted by an estimate (4 characters a token), not tokenized.', n.items);
    case 'media-uncounted':
      return n.items === 1
        ? t('{0} item holds an image, a file or audio: only its placeholder is counted, so the counts are approximate.', n.items)
        : t('{0} items hold an image, a file or audio: only their placeholder is counted, so the counts are approximate.', n.items);
    case 'unknown-model':
      return n.model
        ? t('The tokenizer does not know the model {0}: counts use o200k_base and are approximate.', n.model)
        : t('No model is known for this turn: counts use o200k_base and are approximate.');
    case 'requests-differ':
      return n.usageRequests === 1
        ? t('The usage row counts {0} request; the stored items show {1}.', n.usageRequests, n.shown)
        : t('The usage row counts {0} requests; the stored items show {1}.', n.usageRequests, n.shown);
  }
}

/** An item's title: the host's for stored items, ours for what is not an item. */
function titleOf(it: { kind: ContextItemKind; title: string }): string {
  return it.kind === 'instructions' || it.kind === 'tool-definitions' || it.kind === 'compaction' ? KIND_LABELS[it.kind]() : it.title;
}

/** The tokens by kind as one bar, each kind a segment as wide as its share, with a legend under it. */
function shareBar(r: ContextRequestView): HTMLElement {
  const bar = el('div', { class: 'context-bar', role: 'img', 'aria-label': t('Tokens by kind') });
  const legend = el('ul', { class: 'context-legend' });
  for (const s of r.shares) {
    const width = r.totalTokens > 0 ? (s.tokens / r.totalTokens) * 100 : 0;
    const segment = el('span', {
      class: `context-segment kind-${s.kind}`,
      title: `${KIND_LABELS[s.kind]()}: ${pct(s.tokens, r.totalTokens)}`,
    });
    segment.style.width = `${width}%`;
    bar.appendChild(segment);
    legend.appendChild(
      el(
        'li',
        {},
        el('span', { class: `context-swatch kind-${s.kind}` }),
        t('{0}: {1} ({2}), {3}', KIND_LABELS[s.kind](), tokenCountLabel(s.tokens), pct(s.tokens, r.totalTokens), itemCountLabel(s.items)),
      ),
    );
  }
  return el('div', { class: 'context-shares' }, bar, legend);
}

function itemRow(it: ContextItemView, n: number): HTMLElement {
  return el(
    'li',
    { class: `context-item kind-${it.kind}` },
    el('span', { class: 'context-index' }, String(n)),
    el('span', { class: `context-kind kind-${it.kind}` }, KIND_LABELS[it.kind]()),
    el('span', { class: 'context-title' }, titleOf(it)),
    el('span', { class: 'context-preview' }, it.preview),
    el('span', { class: 'context-tokens' }, tokenCountLabel(it.tokens)),
  );
}

function requestBlock(r: ContextRequestView, open: boolean): HTMLElement {
  const usage =
    r.inputTokens !== null
      ? t(
          'usage: {0} input tokens, {1} cached ({2})',
          num(r.inputTokens),
          num(r.cachedTokens ?? 0),
          pct(r.cachedTokens ?? 0, r.inputTokens),
        )
      : null;
  const summary = el(
    'summary',
    {},
    t('Request {0}: {1}, {2}', r.index, itemCountLabel(r.itemCount), tokenCountLabel(r.totalTokens)),
    r.model ? ` · ${r.model}` : null,
    usage ? ` · ${usage}` : null,
    r.cut ? el('span', { class: 'context-cut' }, ` · ${t('cut when recorded')}`) : null,
  );
  const list = el('ol', { class: 'context-items' });
  if (r.omittedItems > 0) list.appendChild(el('li', { class: 'context-omitted' }, t('{0} older items not listed', r.omittedItems)));
  r.items.forEach((it, i) => list.appendChild(itemRow(it, r.omittedItems + i + 1)));
  const block = el('details', { class: 'context-request' }, summary, shareBar(r), list);
  block.open = open;
  return block;
}

function outsideBlock(view: TurnContextView): HTMLElement | null {
  if (view.outsideCount === 0) return el('p', { class: 'context-line' }, t('Outside the window: nothing.'));
  const list = el('ol', { class: 'context-items context-outside-items' });
  for (const o of view.outside)
    list.appendChild(
      el(
        'li',
        { class: `context-item context-outside kind-${o.kind}` },
        el('span', { class: 'context-index' }, `#${o.sequence}`),
        el('span', { class: `context-kind kind-${o.kind}` }, KIND_LABELS[o.kind]()),
        el('span', { class: 'context-title' }, titleOf(o)),
        el('span', { class: 'context-preview' }, o.preview),
        el('span', { class: 'context-reason' }, REASON_LABELS[o.reason]()),
        el('span', { class: 'context-tokens' }, tokenCountLabel(o.tokens)),
      ),
    );
  const more = view.outsideCount > view.outside.length ? t('(the newest {0} listed)', view.outside.length) : null;
  return el(
    'details',
    { class: 'context-outside-block' },
    el('summary', {}, t('Outside the window: {0} stored items', view.outsideCount), more ? ` ${more}` : null),
    list,
  );
}

/** Draws a turn's context into `body`: undefined while loading, a string for an error. */
export function renderContext(body: HTMLElement, view: TurnContextView | string | undefined): void {
  if (view === undefined) return replaceChildren(body, el('p', { class: 'context-line' }, t('Loading…')));
  if (typeof view === 'string') return replaceChildren(body, el('p', { class: 'context-line error' }, view));
  const recorded = view.source === 'recorded';
  const label = el(
    'p',
    { class: 'context-source' },
    el('span', { class: `context-badge ${recorded ? 'recorded' : 'reconstructed'}` }, recorded ? t('Recorded') : t('Reconstructed')),
    ' ',
    recorded
      ? t('The inputs the run recorded in the trace store.')
      : t('Rebuilt from the stored items by the session’s rules, not recorded: what the model received may differ.'),
  );
  const tokenizer = el(
    'p',
    { class: 'context-line' },
    view.model ? t('Tokens counted with {0} for {1}', view.encoding, view.model) : t('Tokens counted with {0}', view.encoding),
    view.approximate ? ` (${t('approximate')})` : null,
    view.ranOn !== view.branchId ? ` · ${t('run on branch {0}', view.ranOn)}` : null,
  );
  const usage = view.usage
    ? el('p', { class: 'context-line' }, usageRowText(view.usage))
    : el('p', { class: 'context-line' }, t('No usage row for this turn.'));
  const notes = view.notes.length > 0 ? el('ul', { class: 'context-notes' }, ...view.notes.map((n) => el('li', {}, noteText(n)))) : null;
  // A turn of more requests than are listed keeps its last ones, numbered as made: say which are not listed.
  const skipped = (view.requests[0]?.index ?? 1) - 1;
  const notListed =
    skipped > 0
      ? el('p', { class: 'context-line' }, t('Requests 1–{0} are not listed: only the last {1} are.', skipped, view.requests.length))
      : null;
  const requests = view.requests.map((r, i) => requestBlock(r, i === view.requests.length - 1));
  replaceChildren(body, label, tokenizer, usage, notes, notListed, ...requests, outsideBlock(view));
}

/** The turn's usage row in a sentence; "1 request" in the singular (the key must be a literal, so two calls). */
function usageRowText(u: NonNullable<TurnContextView['usage']>): string {
  const args = [
    u.requests ?? '–',
    num(u.inputTokens ?? 0),
    num(u.cachedTokens ?? 0),
    pct(u.cachedTokens ?? 0, u.inputTokens ?? 0),
  ] as const;
  return u.requests === 1
    ? t('Usage row: {0} request, {1} input tokens, {2} cached ({3})', ...args)
    : t('Usage row: {0} requests, {1} input tokens, {2} cached ({3})', ...args);
}

/** Sent to the Context section to read its turn again (the trace store changed). */
const RELOAD_CONTEXT = 'context-reload';

/** Reads the shown turn's Context again if it is open (`container`: the detail pane). */
export function reloadContext(container: HTMLElement): void {
  container.querySelector('.context-section')?.dispatchEvent(new Event(RELOAD_CONTEXT));
}

/** Whether the user keeps the Context open: the next turn shown opens it too. */
let contextOpen = false;

/** The Context section of a turn: closed until asked for, then loaded and drawn. */
export function contextSection(turn: TurnView, load: (turn: TurnView) => Promise<TurnContextView>): HTMLElement {
  const body = el('div', { class: 'context-body' });
  const section = el('details', { class: 'context-section' }, el('summary', { 'data-focus': 'context' }, t('Context')), body);
  let loaded = false;
  const read = (): void => {
    if (loaded) return;
    loaded = true;
    if (!body.firstChild) renderContext(body, undefined);
    const asked = performance.now();
    load(turn).then(
      (view) => {
        renderContext(body, view);
        body.dataset.drawnMs = String(Math.round(performance.now() - asked));
      },
      (err: unknown) => {
        loaded = false;
        renderContext(body, err instanceof Error ? err.message : String(err));
      },
    );
  };
  section.addEventListener('toggle', () => {
    contextOpen = section.open;
    if (section.open) read();
  });
  section.addEventListener(RELOAD_CONTEXT, () => {
    loaded = false;
    if (section.open) read();
  });
  if (contextOpen) section.open = true;
  return section;
}
