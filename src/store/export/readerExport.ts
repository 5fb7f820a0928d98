/**
 * The Markdown and JSONL exports, read through `SessionReader` a page at a time (so they work on any store the
 * inspector reads, and hold one page and one turn in memory whatever the session's size).
 */
import type { AgentInputItem } from '@openai/agents';
import { fromStoredItems } from '../format/itemShape';
import type { BranchNode, ItemEntry } from '../inspector/inspectorTypes';
import type { SessionReader } from '../inspector/sessionReader';
import { TransferError, throwIfCancelled } from './exportErrors';
import { inlineCode, inlineText, namedByItsCall, turnToMarkdown } from './markdown';
import type { ExportRequest, ExportSummary, TextSink } from './transferTypes';
import { ReviewsForTranscript, hasReviews, sessionReviewData } from './reviewsInExport';
import { sharedTurnRanges, turnOrigin } from '../../shared/turnOrigin';

const DEFAULT_PAGE = 500;

async function branchesToExport(reader: SessionReader, request: ExportRequest): Promise<{ tree: BranchNode[]; chosen: BranchNode[] }> {
  const tree = await reader.getBranchTree(request.sessionId);
  if (tree.length === 0) throw new TransferError('not-found', `There is no session '${request.sessionId}' (or it has no items).`);
  if (request.branchId === undefined || request.branchId === null) return { tree, chosen: tree };
  const one = tree.find((b) => b.branchId === request.branchId);
  if (!one) throw new TransferError('not-found', `Session '${request.sessionId}' has no branch '${request.branchId}'.`);
  return { tree, chosen: [one] };
}

/** A branch's items in order, a page at a time, skipping the first `skip`. */
async function* branchItems(reader: SessionReader, request: ExportRequest, branchId: string, skip = 0): AsyncGenerator<ItemEntry> {
  let after: number | null = null;
  let seen = 0;
  for (;;) {
    throwIfCancelled(request.signal);
    const page = await reader.getItemsPage(request.sessionId, branchId, { afterSequence: after, limit: request.pageSize ?? DEFAULT_PAGE });
    for (const entry of page.items) if (seen++ >= skip) yield entry;
    if (page.nextAfterSequence === null) return;
    after = page.nextAfterSequence;
  }
}

/**
 * A Markdown transcript of a branch, or of the whole session: a header, the branch tree, then each branch's turns
 * (a forked branch shows only the turns after the ones it shares with its parent, which appear above).
 */
export async function writeMarkdownExport(reader: SessionReader, request: ExportRequest, sink: TextSink): Promise<ExportSummary> {
  const { tree, chosen } = await branchesToExport(reader, request);
  const whole = chosen.length === tree.length && (request.branchId === undefined || request.branchId === null);
  const total = chosen.reduce((n, b) => n + (whole ? b.messageCount - b.sharedItemCount : b.messageCount), 0);
  const sessions = await reader.listSessions();
  const summary = sessions.find((s) => s.sessionId === request.sessionId);
  const head = [`# Session ${inlineCode(request.sessionId)}${whole ? '' : ` — branch ${inlineCode(chosen[0]!.branchId)}`}`, ''];
  // The sessions table's times are the file's text: one line each, inert (markdown.ts).
  if (summary?.createdAt)
    head.push(`- Created: ${inlineText(summary.createdAt)}${summary.updatedAt ? `, updated: ${inlineText(summary.updatedAt)}` : ''}`);
  head.push(`- ${plural(total, 'item')}${whole ? `, ${plural(tree.length, 'branch', 'branches')}` : ''}`);
  // One branch's transcript says what that branch's conversation cost (its own turns and those it shares with the
  // branches it was forked from), as the view's Tokens table does; it said the whole session's before.
  let usage: { totalTokens: number | null; inputTokens: number | null; outputTokens: number | null } | undefined =
    summary?.usage ?? undefined;
  if (usage && !whole) {
    const branchId = chosen[0]!.branchId;
    const page = await reader.getUsagePage(request.sessionId, branchId, { limit: 1, shared: sharedTurnRanges(tree, branchId) });
    usage = page.rowCount > 0 ? page.totals : undefined;
  }
  if (usage) head.push(`- Tokens: ${usage.totalTokens ?? 0} (${usage.inputTokens ?? 0} in, ${usage.outputTokens ?? 0} out)`);
  if (whole && tree.length > 1) {
    head.push('', '## Branches', '');
    const depth = (b: BranchNode): number => {
      let d = 0;
      for (let p = b.parentBranchId; p !== null && d < tree.length; d++) p = tree.find((x) => x.branchId === p)?.parentBranchId ?? null;
      return d;
    };
    for (const b of tree) head.push(`${'  '.repeat(depth(b))}- ${inlineCode(b.branchId)}: ${plural(b.userTurns, 'turn')}${forkNote(b)}`);
  }
  await sink(`${head.join('\n')}\n`);
  const reviews = hasReviews(request.reviews) ? new ReviewsForTranscript(sessionReviewData(request.reviews, request.sessionId)) : null;
  let done = 0;
  let skipped = 0;
  // A session of one branch reads as that branch: no branch heading, turns one level up.
  const multi = whole && tree.length > 1;
  const level = multi ? 3 : 2;
  for (const branch of chosen) {
    const shared = multi && branch.parentBranchId !== null ? branch.sharedItemCount : 0;
    if (multi) {
      const lines = [`## Branch ${inlineCode(branch.branchId)}${forkNote(branch)}`];
      if (shared > 0)
        lines.push('', `_The first ${plural(shared, 'item')} are shared with ${inlineCode(branch.parentBranchId!)} (above)._`);
      await sink(`\n${lines.join('\n')}\n`);
    }
    let turn: number | null = null;
    let count = 0;
    let items: ItemEntry[] = [];
    const flush = async () => {
      if (items.length > 0) {
        // A shared turn (exported on a branch of its own) is reviewed on the branch that ran it.
        const t = turn ?? 0;
        const block = reviews?.turnBlock(turnOrigin(tree, branch.branchId, t), t, items) ?? '';
        await sink(`\n${turnToMarkdown(t, items, { headingLevel: level })}${block}`);
      }
      items = [];
    };
    // Outputs written by Python carry only their call's id, and stores without structure rows record no tool name
    // for them: name each by its call, seen earlier on the branch, as the view does.
    const callNames = new Map<string, string>();
    for await (const read of branchItems(reader, request, branch.branchId, shared)) {
      const entry = namedByItsCall(read, callNames);
      // Plain sessions record no turns: count user messages as the runner does.
      const isUser = entry.type === 'user';
      const entryTurn = entry.userTurnNumber ?? (isUser ? count + 1 : count);
      if (isUser) count = entryTurn;
      else count = Math.max(count, entryTurn);
      if (turn !== entryTurn) {
        await flush();
        turn = entryTurn;
      }
      if (entry.corrupt) skipped++;
      items.push(entry);
      if (++done % 200 === 0) request.onProgress?.(done, total);
    }
    await flush();
  }
  if (reviews) await sink(reviews.notShown());
  request.onProgress?.(done, total);
  return { items: done, branches: chosen.length, skipped };
}

function forkNote(b: BranchNode): string {
  if (b.parentBranchId === null) return '';
  return b.forkTurn !== null ? ` (from ${inlineCode(b.parentBranchId)} at turn ${b.forkTurn})` : ` (from ${inlineCode(b.parentBranchId)})`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * JSONL: one branch's items, one per line, as `@openai/agents` input items (`fromStoredItems`, what
 * `AdvancedSQLiteSession.getItems` returns), usable as a run's input or an eval set. A session has no single item
 * list, so without a branch this exports `main` (or the first branch). Items that do not decode are left out, as the
 * session API leaves them out.
 */
export async function writeJsonlExport(reader: SessionReader, request: ExportRequest, sink: TextSink): Promise<ExportSummary> {
  const { tree, chosen } = await branchesToExport(reader, request);
  const branch = request.branchId ? chosen[0]! : (tree.find((b) => b.branchId === 'main') ?? tree[0]!);
  // A tool output's name comes from its call (fromStoredItems pairs them by call_id): carry the calls not yet
  // answered into the next page, so a pair split across pages converts as it does in one list.
  const open = new Map<string, unknown>();
  let done = 0;
  let skipped = 0;
  let pending: unknown[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const carried = [...open.values()];
    const converted: AgentInputItem[] = fromStoredItems([...carried, ...pending]).slice(carried.length);
    for (const item of pending) trackCalls(open, item);
    await sink(converted.map((i) => `${JSON.stringify(i)}\n`).join(''));
    done += pending.length;
    pending = [];
    request.onProgress?.(done, branch.messageCount);
  };
  for await (const entry of branchItems(reader, request, branch.branchId)) {
    if (entry.corrupt) skipped++;
    else pending.push(entry.item);
    if (pending.length >= (request.pageSize ?? DEFAULT_PAGE)) await flush();
  }
  await flush();
  return { items: done, branches: 1, skipped };
}

function trackCalls(open: Map<string, unknown>, item: unknown): void {
  if (typeof item !== 'object' || item === null) return;
  const r = item as Record<string, unknown>;
  const id = r.call_id ?? r.callId;
  if (typeof id !== 'string') return;
  if (r.type === 'function_call' && typeof r.name === 'string')
    open.set(id, { type: 'function_call', call_id: id, name: r.name, arguments: '' });
  else open.delete(id);
}
