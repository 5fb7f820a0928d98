/**
 * A turn's timeline: a waterfall of its spans (logic/timelineRows.ts), one row each — kind, name, model and tokens on
 * a model request, the tool, an error marked — with a bar placed by start and duration. Rows are one Tab stop, walked
 * with the arrow keys (Home, End too); Enter or a click shows the span's attributes under it. Everything is text.
 */
import type { TimelineSpanView, TimelineView } from '../../../src/shared/protocol/conversationViews';
import { el, replaceChildren } from '../../shared/dom';
import { t } from '../../shared/l10n';
import { durationLabel, timelineRows, type TimelineRow } from '../logic/timelineRows';
import { timelineHintLead, timelineHints } from '../logic/timelineHints';
import { outcomeLabel } from '../logic/replayViews';
import { spanReplayOutcome } from '../logic/timelineRows';

const KIND_LABELS: Record<TimelineSpanView['kind'], () => string> = {
  agent: () => t('agent'),
  model: () => t('model'),
  tool: () => t('tool'),
  handoff: () => t('handoff'),
  guardrail: () => t('guardrail'),
  mcp: () => t('MCP'),
  other: () => t('step'),
};

function detailOf(s: TimelineSpanView): string {
  const parts: string[] = [];
  if (s.kind === 'model' && s.model && !s.name.includes(s.model)) parts.push(s.model);
  if (s.inputTokens !== null || s.outputTokens !== null)
    parts.push(t('{0} in / {1} out', (s.inputTokens ?? 0).toLocaleString('en-US'), (s.outputTokens ?? 0).toLocaleString('en-US')));
  if (s.toolName && !s.name.includes(s.toolName)) parts.push(s.toolName);
  return parts.join(' · ');
}

function attributesList(s: TimelineSpanView): HTMLElement {
  const list = el('dl', { class: 'span-attributes' });
  const add = (k: string, v: string): void => {
    list.appendChild(el('dt', {}, k));
    list.appendChild(el('dd', {}, v));
  };
  add(t('Span'), `${s.spanId} (${t('trace')} ${s.traceId})`);
  add(t('Source'), s.source);
  if (s.error) add(t('Error'), s.error);
  for (const [k, v] of s.attributes) add(k, v);
  if (s.truncated) list.appendChild(el('p', { class: 'span-truncated' }, t('Some of this span was cut when it was stored.')));
  return list;
}

/** A tool span's replay badge (docs/replay.md): the call got its recorded output, ran live, or matched nothing. */
function replayMark(s: TimelineSpanView): HTMLElement | null {
  const outcome = spanReplayOutcome(s);
  return outcome ? el('span', { class: `replay-badge replay-${outcome}` }, outcomeLabel(outcome)) : null;
}

function rowElement(row: TimelineRow, index: number): HTMLElement {
  const s = row.span;
  const detail = detailOf(s);
  const bar = el('span', { class: `span-bar kind-${s.kind}${s.status === 'error' ? ' failed' : ''}` });
  bar.style.left = `${row.leftPct}%`;
  bar.style.width = `${row.widthPct}%`;
  const name = el(
    'span',
    { class: 'span-name' },
    el('span', { class: `span-kind kind-${s.kind}` }, KIND_LABELS[s.kind]()),
    el('span', { class: 'span-label' }, s.name),
    detail ? el('span', { class: 'span-detail' }, detail) : null,
    s.status === 'error' ? el('span', { class: 'span-error', title: s.error ?? '' }, t('failed')) : null,
    replayMark(s),
  );
  name.style.paddingInlineStart = `${row.depth * 14}px`;
  const button = el(
    'button',
    {
      class: 'span-row',
      type: 'button',
      'aria-expanded': 'false',
      'data-index': index,
      'data-kind': s.kind,
      tabindex: index === 0 ? '0' : '-1',
      'aria-label': t(
        '{0} {1}, starts at {2}, takes {3}{4}',
        KIND_LABELS[s.kind](),
        s.name,
        durationLabel(s.startMs),
        durationLabel(s.durationMs),
        s.status === 'error' ? `, ${t('failed')}: ${s.error ?? ''}` : '',
      ),
    },
    name,
    el('span', { class: 'span-track' }, bar),
    el('span', { class: 'span-duration' }, durationLabel(s.durationMs)),
  );
  const li = el('li', { class: 'span-item' }, button);
  button.addEventListener('click', () => {
    const open = button.getAttribute('aria-expanded') === 'true';
    button.setAttribute('aria-expanded', open ? 'false' : 'true');
    const shown = li.querySelector('.span-attributes');
    if (open) shown?.remove();
    else li.appendChild(attributesList(s));
  });
  return li;
}

/** Arrow keys, Home and End move between rows (one Tab stop for the whole list). */
function keyboard(list: HTMLElement): void {
  list.addEventListener('keydown', (e) => {
    const rows = [...list.querySelectorAll<HTMLButtonElement>('.span-row')];
    const i = rows.indexOf(document.activeElement as HTMLButtonElement);
    if (i < 0) return;
    const to = e.key === 'ArrowDown' ? i + 1 : e.key === 'ArrowUp' ? i - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? rows.length - 1 : -1;
    if (to < 0 || to >= rows.length || to === i) return;
    e.preventDefault();
    rows[i]!.tabIndex = -1;
    rows[to]!.tabIndex = 0;
    rows[to]!.focus();
  });
}

/**
 * Draws the timeline (`undefined`: loading; a string: why it could not be read). `linkTrace`, when given, offers to
 * link a trace by hand on a turn that has none.
 */
export function renderTimeline(container: HTMLElement, view: TimelineView | string | undefined, linkTrace?: () => void): void {
  if (view === undefined) {
    replaceChildren(container, el('p', { class: 'placeholder' }, t('Loading the timeline…')));
    return;
  }
  if (typeof view === 'string') {
    replaceChildren(container, el('p', { class: 'error', role: 'alert' }, view));
    return;
  }
  if (view.state !== 'ok') {
    let link: HTMLElement | null = null;
    if (view.state === 'none' && linkTrace) {
      link = el('vscode-button', { appearance: 'secondary', class: 'link-trace' }, t('Link a trace to this turn…'));
      link.addEventListener('click', linkTrace);
    }
    if (view.state === 'off') {
      replaceChildren(container, el('p', { class: 'timeline-empty' }, t('Traces are not available here.')));
      return;
    }
    replaceChildren(
      container,
      el('p', { class: 'timeline-empty' }, timelineHintLead()),
      el('ul', { class: 'timeline-hints' }, ...timelineHints().map((h) => el('li', { 'data-run-kind': h.kind }, h.text))),
      link,
    );
    return;
  }
  const rows = timelineRows(view.spans, view.totalMs);
  const list = el('ol', { class: 'timeline-rows', 'aria-label': t('Spans of the turn') });
  rows.forEach((row, i) => list.appendChild(rowElement(row, i)));
  keyboard(list);
  const failed = view.spans.filter((s) => s.status === 'error').length;
  const summary = el(
    'p',
    { class: 'timeline-summary' },
    [
      t('{0} in all', durationLabel(view.totalMs)),
      t('{0} model requests', view.requests),
      view.traces > 1 ? t('{0} traces', view.traces) : null,
      failed > 0 ? t('{0} failed', failed) : null,
      view.omitted > 0 ? t('{0} more spans not shown', view.omitted.toLocaleString('en-US')) : null,
    ]
      .filter(Boolean)
      .join(' · '),
  );
  replaceChildren(container, summary, list);
}
