/**
 * TreeItem classes for each node kind. `contextValue` is the kind plus capability flags (`turn;canBranch`), which the
 * menus match with regular expressions, so adding a capability never breaks an existing `when` clause.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { TurnReview } from '../../store/reviews/reviewTypes';
import { failedReason } from '../../store/search/itemMatch';
import { callArguments, displayType, isRecord, itemPreview, oneLine } from '../../shared/itemText';
import type { BeforeFirstTurn, BranchNode, ItemEntry, SessionSummary, TurnEntry } from '../../store';
import type { DatabaseEntry } from '../databases/databaseRegistry';
import { nodeId, type LatestTurnsNode, type TreeNode } from '../core/treeNodes';
import { visibleText } from '../../shared/unicodeText';
import { doctorUri } from '../doctor/doctorUris';
import { forkLabel, turnCountLabel } from '../../shared/forkLabel';
import { formatCost, type ModelPrice, type PriceTable } from '../../shared/pricing';
import { builtinToolName, isOutputType, itemTitle } from '../../shared/itemTitles';
import { builtinToolView, previewText } from '../../shared/toolItems';

/** A function or custom tool call's arguments as the model wrote them. */
function callPreview(item: unknown): string | undefined {
  return isRecord(item) && (item.type === 'function_call' || item.type === 'custom_tool_call') ? callArguments(item) : undefined;
}

/** A built-in tool item's key fields (what it searched, ran or drew) on one line, or undefined for other items. */
function builtinPreview(item: unknown): string | undefined {
  const view = builtinToolView(item);
  if (!view) return undefined;
  const text = view.fields.map((f) => f.text).join(' · ');
  const images = view.images.length
    ? `[${view.images.length === 1 ? vscode.l10n.t('image') : vscode.l10n.t('{0} images', view.images.length)}]`
    : '';
  return [text, images].filter(Boolean).join(' ') || undefined;
}

const C = vscode.TreeItemCollapsibleState;

function contextValue(kind: string, flags: Record<string, boolean>): string {
  return [
    kind,
    ...Object.entries(flags)
      .filter(([, on]) => on)
      .map(([f]) => f),
  ].join(';');
}

/** "1 item", "2 items": one message per count form, so each language words both its own way. */
const count = (n: number): string => n.toLocaleString('en-US');
const itemCount = (n: number): string => (n === 1 ? vscode.l10n.t('1 item') : vscode.l10n.t('{0} items', count(n)));

function tokens(n: number | null | undefined): string {
  if (n === null || n === undefined) return '';
  return n === 1 ? vscode.l10n.t('1 token') : vscode.l10n.t('{0} tokens', count(n));
}

/** What the tree knows of a server store beyond its entry: the session count (null = the store cannot tell) and filter. */
export interface StoreListing {
  /** Sessions (a server store's, under its filter; a file's rows in its sessions table), or null when unknown. */
  sessionCount: number | null;
  filter: string | undefined;
  /** A file's size in bytes. */
  size?: number | null;
}

/** 845 B, 12.3 KB, 785 MB, 1.2 GB (powers of 1024, as file managers count). */
export function fileSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function databaseItem(node: TreeNode, entry: DatabaseEntry, listing?: StoreListing): vscode.TreeItem {
  if (entry.remote) return remoteStoreItem(node, entry, listing);
  const item = new vscode.TreeItem(basename(entry.path), entry.problem ? C.None : C.Collapsed);
  item.id = nodeId(node);
  item.resourceUri = vscode.Uri.file(entry.path);
  item.iconPath = new vscode.ThemeIcon(entry.problem ? 'error' : entry.readonly ? 'lock' : 'database');
  const mode = entry.readonly ? (entry.readonlyReason === 'file' ? vscode.l10n.t('read-only (file)') : vscode.l10n.t('read-only')) : '';
  const sessions = listing?.sessionCount;
  const facts = [
    sessions === null || sessions === undefined
      ? ''
      : sessions === 1
        ? vscode.l10n.t('1 session')
        : vscode.l10n.t('{0} sessions', count(sessions)),
    listing?.size === null || listing?.size === undefined ? '' : fileSize(listing.size),
    mode,
  ].filter(Boolean);
  item.description = entry.problem ? `⚠ ${oneLine(entry.problem, 60)}` : facts.join(' · ');
  item.tooltip = new vscode.MarkdownString();
  item.tooltip.appendText(entry.path);
  if (entry.problem) item.tooltip.appendText(`\n\n${entry.problem}`);
  else if (entry.readonly)
    item.tooltip.appendText(`\n\n${vscode.l10n.t('Open read-only ({0}): nothing is written to this file.', entry.readonlyReason ?? '')}`);
  item.contextValue = contextValue('database', {
    canWrite: !entry.readonly && !entry.problem,
    hasProblem: !!entry.problem,
    readOnly: entry.readonly,
  });
  return item;
}

/** A PostgreSQL or Redis store: its address (never a password), read-only state, session count and filter. */
function remoteStoreItem(node: TreeNode, entry: DatabaseEntry, listing: StoreListing | undefined): vscode.TreeItem {
  const kind = entry.remote?.kind === 'postgres' ? 'PostgreSQL' : 'Redis';
  const label = entry.db && 'label' in entry.db ? entry.db.label : entry.path.replace(/^[a-z]+:\/\//i, '');
  const item = new vscode.TreeItem(label, entry.problem ? C.None : C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon(entry.problem ? 'error' : entry.readonly ? 'lock' : 'server');
  const sessions = listing?.sessionCount;
  const parts = [kind, entry.readonly ? vscode.l10n.t('read-only') : vscode.l10n.t('writable')];
  if (sessions !== null && sessions !== undefined)
    parts.push(sessions === 1 ? vscode.l10n.t('1 session') : vscode.l10n.t('{0} sessions', count(sessions)));
  if (listing?.filter) parts.push(vscode.l10n.t('filter: {0}*', listing.filter));
  item.description = entry.problem ? `⚠ ${oneLine(entry.problem, 60)}` : parts.join(' · ');
  item.tooltip = new vscode.MarkdownString();
  item.tooltip.appendText(`${vscode.l10n.t('{0} session store', kind)}\n${entry.path}`);
  if (entry.problem) item.tooltip.appendText(`\n\n${entry.problem}`);
  else if (entry.readonly) item.tooltip.appendText(`\n\n${vscode.l10n.t('Open read-only: nothing is written to this server.')}`);
  if (entry.remote?.kind === 'redis')
    item.tooltip.appendText(
      `\n\n${vscode.l10n.t('Redis keeps no order across sessions: pages follow the key scan, each sorted newest first.')}`,
    );
  item.contextValue = contextValue('database', {
    remote: true,
    canWrite: !entry.readonly && !entry.problem,
    hasProblem: !!entry.problem,
    readOnly: entry.readonly,
  });
  return item;
}

/** "Show more": a node whose children are the next page of its parent's list. */
function moreItem(node: TreeNode, label: string): vscode.TreeItem {
  const item = new vscode.TreeItem(label, C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon('ellipsis');
  item.contextValue = node.kind;
  return item;
}

export function moreSessionsItem(node: TreeNode): vscode.TreeItem {
  return moreItem(node, vscode.l10n.t('Load more sessions…'));
}

export function sessionItem(node: TreeNode, s: SessionSummary, canWrite: boolean, remoteKind?: 'postgres' | 'redis'): vscode.TreeItem {
  const item = new vscode.TreeItem(s.sessionId, C.Collapsed);
  item.id = nodeId(node);
  // The address of the session's doctor report: its findings' count badge (doctor/doctorResults.ts) finds it there.
  item.resourceUri = doctorUri({ dbPath: node.dbPath, sessionId: s.sessionId });
  item.iconPath = new vscode.ThemeIcon('comment-discussion');
  const parts = [s.updatedAt ?? '', itemCount(s.messageCount), tokens(s.usage?.totalTokens)].filter(Boolean);
  item.description = parts.join(' · ');
  const md = new vscode.MarkdownString();
  const unknown = vscode.l10n.t('unknown');
  md.appendText(`${vscode.l10n.t('Session {0}', s.sessionId)}\n\n`);
  md.appendText(
    `${vscode.l10n.t('Created: {0} UTC', s.createdAt ?? unknown)}\n${vscode.l10n.t('Updated: {0} UTC', s.updatedAt ?? unknown)}\n`,
  );
  md.appendText(`${vscode.l10n.t('Items: {0}, branches: {1}', s.messageCount, s.branchCount)}\n`);
  if (s.usage) {
    md.appendText(
      vscode.l10n.t(
        'Usage: {0} requests, {1} input + {2} output = {3} tokens over {4} turns',
        s.usage.requests,
        s.usage.inputTokens,
        s.usage.outputTokens,
        s.usage.totalTokens,
        s.usage.totalTurns,
      ),
    );
  } else if (remoteKind) md.appendText(vscode.l10n.t('{0} sessions record no usage.', remoteKind === 'postgres' ? 'PostgreSQL' : 'Redis'));
  else md.appendText(vscode.l10n.t('No usage recorded (the agent never called storeRunUsage).'));
  item.tooltip = md;
  item.contextValue = contextValue('session', { canWrite: canWrite && s.structured, structured: s.structured, remote: !!remoteKind });
  return item;
}

export function branchItem(node: TreeNode, b: BranchNode, isCurrent: boolean, canWrite: boolean, structured: boolean): vscode.TreeItem {
  // Shown as read: a name another writer stored may hide characters (`main` and a zero-width space).
  const item = new vscode.TreeItem(visibleText(b.branchId), C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon(
    isCurrent ? 'git-branch' : 'source-control',
    isCurrent ? new vscode.ThemeColor('charts.green') : undefined,
  );
  const fork = forkLabel(b);
  item.description = [isCurrent ? `● ${vscode.l10n.t('current')}` : '', turnCountLabel(b), fork].filter(Boolean).join(' · ');
  const md = new vscode.MarkdownString();
  md.appendText(
    `${isCurrent ? vscode.l10n.t('Branch {0} (current)', b.branchId) : vscode.l10n.t('Branch {0}', b.branchId)}\n\n` +
      `${itemCount(b.messageCount)}, ${turnCountLabel(b)}\n${vscode.l10n.t('Created: {0} UTC', b.createdAt ?? vscode.l10n.t('unknown'))}\n`,
  );
  if (fork)
    md.appendText(
      b.sharedItemCount === 1
        ? vscode.l10n.t('Forked {0} (1 shared item)', fork)
        : vscode.l10n.t('Forked {0} ({1} shared items)', fork, count(b.sharedItemCount)),
    );
  item.tooltip = md;
  item.contextValue = contextValue('branch', {
    canWrite: canWrite && structured,
    canSwitch: structured && !isCurrent,
    canDelete: canWrite && structured && b.branchId !== 'main',
  });
  return item;
}

/**
 * A turn of a branch. `shared`: the turn was run on an ancestor branch (before this branch's fork turn), whose usage
 * row it shows (branching copies no usage rows).
 */
export function turnItem(
  node: TreeNode,
  t: TurnEntry,
  canWrite: boolean,
  structured: boolean,
  shared?: { branchId: string; totalTokens: number | null },
  review?: Pick<TurnReview, 'verdict' | 'tags' | 'note'>,
): vscode.TreeItem {
  const mark = review?.verdict === 'good' ? ' ✓' : review?.verdict === 'bad' ? ' ✗' : '';
  const label = vscode.l10n.t('Turn {0}', t.turn) + mark;
  const item = new vscode.TreeItem(label, C.Collapsed);
  item.id = nodeId(node);
  // Not the user item's icon: a turn holds the whole exchange.
  item.iconPath = new vscode.ThemeIcon(t.error ? 'warning' : 'comment');
  const total = shared ? shared.totalTokens : t.totalTokens;
  item.description = [
    t.preview !== null ? oneLine(previewText(t.preview), 60) : vscode.l10n.t('unreadable: {0}', t.error ?? ''),
    tokens(total),
    shared ? vscode.l10n.t('shared with {0}', shared.branchId) : '',
    review && review.tags.length > 0 ? review.tags.map((tag) => `#${tag}`).join(' ') : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const md = new vscode.MarkdownString();
  md.appendText(
    `${label} · ${t.createdAt ?? vscode.l10n.t('unknown')} UTC\n\n${t.preview !== null ? previewText(t.preview) : (t.error ?? '')}\n\n`,
  );
  if (shared) md.appendText(`${vscode.l10n.t('Shared with {0}: run there, and its usage is recorded there.', shared.branchId)}\n\n`);
  md.appendText(total === null ? vscode.l10n.t('No usage row for this turn.') : tokens(total));
  if (review) md.appendText(`\n\n${reviewLine(review)}`);
  item.tooltip = md;
  item.contextValue = contextValue('turn', { canBranch: canWrite && structured && t.branchTurnNumber !== null && t.error === null });
  return item;
}

/** A review in words, for a tooltip: "Reviewed: bad · wrong-tool · the note". */
function reviewLine(review: Pick<TurnReview, 'verdict' | 'tags' | 'note'>): string {
  const verdict =
    review.verdict === 'good' ? vscode.l10n.t('good') : review.verdict === 'bad' ? vscode.l10n.t('bad') : vscode.l10n.t('no verdict');
  return vscode.l10n.t('Reviewed: {0}', [verdict, ...review.tags, review.note].filter(Boolean).join(' · '));
}

/**
 * Turn 0: the items stored before the first user message (the agent's instructions, as a rule). Expands to them like a
 * turn; nothing branches from it (no user message to branch before).
 */
export function beforeFirstTurnItem(node: TreeNode, before: BeforeFirstTurn): vscode.TreeItem {
  const label = vscode.l10n.t('Before the first turn');
  const item = new vscode.TreeItem(label, C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon('note');
  const first = before.first;
  const preview = first && !first.corrupt ? oneLine(itemPreview(first.item), 60) : '';
  item.description = [preview, before.itemCount === 1 ? vscode.l10n.t('1 item') : vscode.l10n.t('{0} items', before.itemCount)]
    .filter(Boolean)
    .join(' · ');
  item.tooltip = vscode.l10n.t('Items stored before the first user message: the instructions or context the agent started with.');
  item.contextValue = 'turn';
  return item;
}

function entryIcon(type: string): string {
  if (type === 'user') return 'account';
  if (type === 'assistant') return 'hubot';
  if (type === 'system' || type === 'developer') return 'settings-gear';
  if (type === 'reasoning') return 'lightbulb';
  if (isOutputType(type)) return 'output';
  if (type.endsWith('_call') || builtinToolName(type) !== undefined) return 'tools';
  return 'symbol-misc';
}

export function entryItem(node: TreeNode, e: ItemEntry): vscode.TreeItem {
  const type = displayType(e.type);
  // Who spoke or which tool ran, not the stored type, which would take the narrow sidebar's width
  // (`function_call_output · get_w…`); the type stays in the tooltip.
  const label = e.corrupt ? vscode.l10n.t('unreadable') : itemTitle(type, e.toolName, e.item);
  const item = new vscode.TreeItem(label, C.None);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon(e.corrupt ? 'warning' : entryIcon(type));
  // A built-in tool's preview is its key field (the query, the command), not its type again.
  // A call's label names the tool, so its description is just the arguments.
  item.description = e.corrupt
    ? oneLine(e.raw ?? e.error, 60)
    : oneLine(builtinPreview(e.item) ?? callPreview(e.item) ?? itemPreview(e.item));
  const md = new vscode.MarkdownString();
  md.appendText(`${label} · ${type} · #${e.sequenceNumber} · ${e.createdAt ?? vscode.l10n.t('unknown')} UTC\n\n`);
  md.appendText(
    e.corrupt
      ? `${vscode.l10n.t('This row cannot be read: {0}', e.error ?? '')}\n\n${e.raw ?? vscode.l10n.t('(message row missing)')}`
      : itemPreview(e.item),
  );
  item.tooltip = md;
  // `failed`: a failed tool call or output, which *Explain the Failure* hands to the chat.
  item.contextValue = contextValue('item', { corrupt: e.corrupt, failed: !e.corrupt && failedReason(e.item) !== null });
  return item;
}

/**
 * The cost line of a session's or branch's tooltip: what its runs cost at the session's pricing model, or why there
 * is no cost (no price for the model: the hint names the command that sets it).
 */
export function costTooltipLine(
  kind: 'session' | 'branch',
  pricing: { model: string | null; price: ModelPrice | null; table: PriceTable },
  cost: number | null,
): string {
  if (!pricing.price)
    return pricing.model
      ? vscode.l10n.t('No price for model {0}: run Set Pricing Model… to show costs.', pricing.model)
      : vscode.l10n.t('No pricing model: run Set Pricing Model… to show costs.');
  const what = kind === 'session' ? vscode.l10n.t('Cost (all branches)') : vscode.l10n.t('Cost (runs on this branch)');
  return cost === null
    ? vscode.l10n.t('{0}: no usage recorded.', what)
    : vscode.l10n.t('{0}: {1} at {2} prices of {3}', what, formatCost(cost), pricing.model ?? '', pricing.table.date);
}

export function moreTurnsItem(node: TreeNode): vscode.TreeItem {
  return moreItem(node, vscode.l10n.t('Show more turns…'));
}

/** A long branch's last page of turns, collapsed: its latest turn is two clicks from the branch, not fifty pages. */
export function latestTurnsItem(node: LatestTurnsNode): vscode.TreeItem {
  const item = new vscode.TreeItem(vscode.l10n.t('Latest turns (from turn {0})', node.fromTurn), C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon('arrow-down');
  item.contextValue = 'latestTurns';
  return item;
}
