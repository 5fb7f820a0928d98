/**
 * A turn's context as plain English text, for the `turn_context` tool (a model reads it) and `agent-sessions context`
 * (a person does): what the view shows, line by line. The view words the same answer in the user's language itself.
 */
import type { ContextNote, ContextRequestView, OutsideReason, TurnContextView } from '../../shared/protocol/contextViews';
import { counted, countNoun } from '../../shared/countNoun';

const pct = (part: number, whole: number): string => (whole > 0 ? `${Math.round((part / whole) * 100)}%` : '–');

const REASONS: Record<OutsideReason, string> = {
  limit: 'older than the window (session limit)',
  compaction: 'replaced by a compaction item',
  'not-sent': 'not sent',
};

/**
 * Why an item is outside, worded for the answer's source: reconstructed, an item not sent is a call stored without its
 * output (or the reasoning before it), which the runner leaves out of the history it sends.
 */
function reasonText(view: TurnContextView, reason: OutsideReason): string {
  return reason === 'not-sent' && view.source === 'reconstructed'
    ? 'not sent (a call stored without its output, or the reasoning before one: the runner drops them)'
    : REASONS[reason];
}

/** A note as a sentence. */
export function noteText(note: ContextNote): string {
  switch (note.code) {
    case 'no-instructions':
      return 'Instructions and tool definitions are not items: a reconstruction does not know them.';
    case 'limit':
      return `The session's limit (${counted(note.limit, 'item')}) was applied to the history.`;
    case 'compaction':
      return 'A compaction item is in the window: the items it replaced are no longer stored.';
    case 'recorded-unreadable':
      return `${counted(note.requests, 'recorded input')} could not be read (cut by the trace store's limits, or not JSON).`;
    case 'estimated':
      return `${counted(note.items, 'older item')} ${note.items === 1 ? 'is' : 'are'} counted by an estimate (4 characters a token), not tokenized.`;
    case 'media-uncounted':
      return `${counted(note.items, 'item')} ${note.items === 1 ? 'holds' : 'hold'} an image, a file or audio: only ${note.items === 1 ? 'its' : 'their'} placeholder is counted, so the counts are approximate.`;
    case 'unknown-model':
      return `${note.model ? `The model ${JSON.stringify(note.model)} is not` : 'No model is'} known to the tokenizer: counts use o200k_base and are approximate.`;
    case 'requests-differ':
      return `The usage row counts ${counted(note.usageRequests, 'request')}; the stored items show ${note.shown}.`;
  }
}

/**
 * How many requests the turn made, and which are not listed: a turn of more than `CONTEXT_MAX_REQUESTS` lists its last
 * ones, numbered as they were made, so the first listed one's number tells how many came before it.
 */
function requestsText(view: TurnContextView): string {
  const total = view.requests.at(-1)?.index ?? 0;
  const skipped = (view.requests[0]?.index ?? 1) - 1;
  return `${counted(total, 'model request')}${skipped > 0 ? ` (requests 1–${skipped} not listed: only the last ${view.requests.length} are)` : ''}`;
}

/** The header of the answer: source, encoding, usage and notes. */
export function contextHeader(view: TurnContextView): string {
  const lines = [
    `Turn ${view.turn} of branch ${JSON.stringify(view.branchId)}${view.ranOn !== view.branchId ? ` (run on ${JSON.stringify(view.ranOn)})` : ''}: ${requestsText(view)}, ${view.source.toUpperCase()}${view.source === 'reconstructed' ? ' from the stored items (not what was recorded)' : ' by the run'}.`,
    `Tokens counted with ${view.encoding}${view.model ? ` for ${view.model}` : ''}${view.approximate ? ' (approximate)' : ''}.`,
  ];
  if (view.usage)
    lines.push(
      `Usage row: ${view.usage.requests ?? '–'} ${countNoun(view.usage.requests ?? 0, 'request')}, ${view.usage.inputTokens ?? '–'} input ${countNoun(view.usage.inputTokens ?? 0, 'token')}, ${view.usage.cachedTokens ?? '–'} cached (${pct(view.usage.cachedTokens ?? 0, view.usage.inputTokens ?? 0)}).`,
    );
  for (const n of view.notes) lines.push(`Note: ${noteText(n)}`);
  return `${lines.join('\n')}\n`;
}

/** One request's summary line: its items, tokens and the share of each kind. */
export function requestLine(r: ContextRequestView): string {
  const shares = r.shares.map((s) => `${s.kind} ${s.tokens} (${pct(s.tokens, r.totalTokens)})`).join(', ');
  const usage =
    r.inputTokens !== null
      ? `; usage ${counted(r.inputTokens, 'input token')}, ${r.cachedTokens ?? 0} cached (${pct(r.cachedTokens ?? 0, r.inputTokens)})`
      : '';
  return `Request ${r.index}${r.model ? ` (${r.model})` : ''}: ${counted(r.itemCount, 'item')}, ${counted(r.totalTokens, 'token')}${r.cut ? ', CUT when recorded' : ''}${usage}. Shares: ${shares || '–'}.\n`;
}

/** The item lines of a request, each a block of its own (the tool's budget takes whole lines). */
export function itemLines(r: ContextRequestView): string[] {
  const lines = r.omittedItems > 0 ? [`  … ${counted(r.omittedItems, 'older item')} not listed\n`] : [];
  return [
    ...lines,
    ...r.items.map(
      (it, i) =>
        `  ${r.omittedItems + i + 1}. [${it.kind}] ${it.title}: ${counted(it.tokens, 'token')}${it.sequence !== null ? ` (stored #${it.sequence})` : ''}${it.preview ? ` — ${it.preview}` : ''}\n`,
    ),
  ];
}

/** The outside items' lines. */
export function outsideLines(view: TurnContextView): string[] {
  if (view.outsideCount === 0) return ['Outside the window: nothing.\n'];
  const head = `Outside the window: ${counted(view.outsideCount, 'stored item')}${view.outsideCount > view.outside.length ? ` (the newest ${view.outside.length} listed)` : ''}:\n`;
  return [
    head,
    ...view.outside.map(
      (o) =>
        `  - #${o.sequence} [${o.kind}] ${o.title}: ${counted(o.tokens, 'token')}, ${reasonText(view, o.reason)}${o.preview ? ` — ${o.preview}` : ''}\n`,
    ),
  ];
}
