/**
 * TreeItem classes for each node kind. `contextValue` is the kind plus capability flags (`turn;canBranch`), which the
 * menus match with regular expressions, so adding a capability never breaks an existing `when` clause.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { callArguments, displayType, isRecord, itemPreview, oneLine } from '../shared/itemText';
import type { BranchNode, ItemEntry, SessionSummary, TurnEntry } from '../store';
import type { DatabaseEntry } from './databaseRegistry';
import { nodeId, type TreeNode } from './treeNodes';
import { forkLabel, turnCountLabel } from '../shared/forkLabel';
import { formatCost, type ModelPrice, type PriceTable } from '../shared/pricing';
import { builtinToolView, previewText } from '../shared/toolItems';

/** A function or custom tool call's arguments as the model wrote them. */
function callPreview(item: unknown): string | undefined {
  return isRecord(item) && (item.type === 'function_call' || item.type === 'custom_tool_call') ? callArguments(item) : undefined;
}

/** A built-in tool item's key fields (what it searched, ran or drew) on one line, or undefined for other items. */
function builtinPreview(item: unknown): string | undefined {
  const view = builtinToolView(item);
  if (!view) return undefined;
  const text = view.fields.map((f) => f.text).join(' · ');
  const images = view.images.length ? `[${view.images.length === 1 ? 'image' : `${view.images.length} images`}]` : '';
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

/** "1 item", "2 items" (English plurals; every noun here takes an s). */
function countLabel(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
}

function tokens(n: number | null | undefined): string {
  return n === null || n === undefined ? '' : countLabel(n, 'token');
}

/** What the tree knows of a server store beyond its entry: the session count (null = the store cannot tell) and filter. */
export interface StoreListing {
  sessionCount: number | null;
  filter: string | undefined;
}

export function databaseItem(node: TreeNode, entry: DatabaseEntry, listing?: StoreListing): vscode.TreeItem {
  if (entry.remote) return remoteStoreItem(node, entry, listing);
  const item = new vscode.TreeItem(basename(entry.path), entry.problem ? C.None : C.Collapsed);
  item.id = nodeId(node);
  item.resourceUri = vscode.Uri.file(entry.path);
  item.iconPath = new vscode.ThemeIcon(entry.problem ? 'error' : entry.readonly ? 'lock' : 'database');
  const mode = entry.readonly ? `read-only${entry.readonlyReason === 'file' ? ' (file)' : ''}` : '';
  item.description = entry.problem ? `⚠ ${oneLine(entry.problem, 60)}` : mode;
  item.tooltip = new vscode.MarkdownString();
  item.tooltip.appendText(entry.path);
  if (entry.problem) item.tooltip.appendText(`\n\n${entry.problem}`);
  else if (entry.readonly) item.tooltip.appendText(`\n\nOpen read-only (${entry.readonlyReason}): nothing is written to this file.`);
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
  const count = listing?.sessionCount;
  const parts = [kind, entry.readonly ? 'read-only' : 'writable'];
  if (count !== null && count !== undefined) parts.push(`${count.toLocaleString('en-US')} session${count === 1 ? '' : 's'}`);
  if (listing?.filter) parts.push(`filter: ${listing.filter}*`);
  item.description = entry.problem ? `⚠ ${oneLine(entry.problem, 60)}` : parts.join(' · ');
  item.tooltip = new vscode.MarkdownString();
  item.tooltip.appendText(`${kind} session store\n${entry.path}`);
  if (entry.problem) item.tooltip.appendText(`\n\n${entry.problem}`);
  else if (entry.readonly) item.tooltip.appendText('\n\nOpen read-only: nothing is written to this server.');
  if (entry.remote?.kind === 'redis')
    item.tooltip.appendText('\n\nRedis keeps no order across sessions: pages follow the key scan, each sorted newest first.');
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
  return moreItem(node, 'Load more sessions…');
}

export function sessionItem(node: TreeNode, s: SessionSummary, canWrite: boolean, remoteKind?: 'postgres' | 'redis'): vscode.TreeItem {
  const item = new vscode.TreeItem(s.sessionId, C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon('comment-discussion');
  const parts = [s.updatedAt ?? '', countLabel(s.messageCount, 'item'), tokens(s.usage?.totalTokens)].filter(Boolean);
  item.description = parts.join(' · ');
  const md = new vscode.MarkdownString();
  md.appendText(`Session ${s.sessionId}\n\nCreated: ${s.createdAt ?? 'unknown'} UTC\nUpdated: ${s.updatedAt ?? 'unknown'} UTC\n`);
  md.appendText(`Items: ${s.messageCount}, branches: ${s.branchCount}\n`);
  if (s.usage) {
    md.appendText(
      `Usage: ${s.usage.requests} requests, ${s.usage.inputTokens} input + ${s.usage.outputTokens} output = ${s.usage.totalTokens} tokens over ${s.usage.totalTurns} turns`,
    );
  } else if (remoteKind) md.appendText(`${remoteKind === 'postgres' ? 'PostgreSQL' : 'Redis'} sessions record no usage.`);
  else md.appendText('No usage recorded (the agent never called storeRunUsage).');
  item.tooltip = md;
  item.contextValue = contextValue('session', { canWrite: canWrite && s.structured, structured: s.structured, remote: !!remoteKind });
  return item;
}

export function branchItem(node: TreeNode, b: BranchNode, isCurrent: boolean, canWrite: boolean, structured: boolean): vscode.TreeItem {
  const item = new vscode.TreeItem(b.branchId, C.Collapsed);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon(
    isCurrent ? 'git-branch' : 'source-control',
    isCurrent ? new vscode.ThemeColor('charts.green') : undefined,
  );
  const fork = forkLabel(b);
  item.description = [isCurrent ? '● current' : '', turnCountLabel(b), fork].filter(Boolean).join(' · ');
  const md = new vscode.MarkdownString();
  md.appendText(
    `Branch ${b.branchId}${isCurrent ? ' (current)' : ''}\n\n${countLabel(b.messageCount, 'item')}, ${turnCountLabel(b)}\nCreated: ${b.createdAt ?? 'unknown'} UTC\n`,
  );
  if (fork) md.appendText(`Forked ${fork} (${countLabel(b.sharedItemCount, 'shared item')})`);
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
): vscode.TreeItem {
  const label = `Turn ${t.turn}`;
  const item = new vscode.TreeItem(label, C.Collapsed);
  item.id = nodeId(node);
  // Not the user item's icon: a turn holds the whole exchange.
  item.iconPath = new vscode.ThemeIcon(t.error ? 'warning' : 'comment');
  const total = shared ? shared.totalTokens : t.totalTokens;
  item.description = [
    t.preview !== null ? oneLine(previewText(t.preview), 60) : `unreadable: ${t.error ?? ''}`,
    tokens(total),
    shared ? `shared with ${shared.branchId}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const md = new vscode.MarkdownString();
  md.appendText(`Turn ${t.turn} · ${t.createdAt ?? 'unknown'} UTC\n\n${t.preview !== null ? previewText(t.preview) : (t.error ?? '')}\n\n`);
  if (shared) md.appendText(`Shared with ${shared.branchId}: run there, and its usage is recorded there.\n\n`);
  md.appendText(total === null ? 'No usage row for this turn.' : `${total} tokens`);
  item.tooltip = md;
  item.contextValue = contextValue('turn', { canBranch: canWrite && structured && t.branchTurnNumber !== null && t.error === null });
  return item;
}

const ROLE_TITLES: Record<string, string> = { user: 'User', assistant: 'Assistant', system: 'System', developer: 'Developer' };

/** Built-in tools by their call's type, as people name them (the stored type stays in the tooltip). */
const BUILTIN_TOOLS: Record<string, string> = {
  computer_call: 'computer',
  web_search_call: 'web search',
  file_search_call: 'file search',
  code_interpreter_call: 'code interpreter',
  image_generation_call: 'image generation',
  local_shell_call: 'shell',
  shell_call: 'shell',
  apply_patch_call: 'apply patch',
  mcp_call: 'MCP',
  mcp_list_tools: 'MCP tool list',
  mcp_approval_request: 'MCP approval request',
  mcp_approval_response: 'MCP approval',
};

const isOutputType = (type: string): boolean => type.endsWith('_output') || type.endsWith('_result');

/**
 * An item's label in the tree: who spoke or which tool ran, not the stored type name, which would take the narrow
 * sidebar's width (`function_call_output · get_w…`). The preview follows as the description.
 */
export function entryTitle(type: string, toolName: string | null): string {
  const role = ROLE_TITLES[type];
  if (role) return role;
  if (type === 'reasoning') return 'Reasoning';
  const callType = isOutputType(type) ? type.replace(/_(output|result)$/, '') : type;
  // The store names a built-in tool by its type (`computer_call`): the people's name is better.
  const builtin = BUILTIN_TOOLS[callType] ?? BUILTIN_TOOLS[type];
  // An MCP call's stored name is the server's tool (`deepwiki.ask_question`): keep it, marked as MCP.
  const tool = type === 'mcp_call' && toolName && toolName !== type ? `MCP ${toolName}` : (builtin ?? toolName);
  if (isOutputType(type)) return `${tool ?? 'tool'} result`;
  return tool ?? type.replace(/_/g, ' ');
}

function entryIcon(type: string): string {
  if (type === 'user') return 'account';
  if (type === 'assistant') return 'hubot';
  if (type === 'system' || type === 'developer') return 'settings-gear';
  if (type === 'reasoning') return 'lightbulb';
  if (isOutputType(type)) return 'output';
  if (type.endsWith('_call') || type in BUILTIN_TOOLS) return 'tools';
  return 'symbol-misc';
}

export function entryItem(node: TreeNode, e: ItemEntry): vscode.TreeItem {
  const type = displayType(e.type);
  const label = e.corrupt ? 'unreadable' : entryTitle(type, e.toolName);
  const item = new vscode.TreeItem(label, C.None);
  item.id = nodeId(node);
  item.iconPath = new vscode.ThemeIcon(e.corrupt ? 'warning' : entryIcon(type));
  // A built-in tool's preview is its key field (the query, the command), not its type again.
  // A call's label names the tool, so its description is just the arguments.
  item.description = e.corrupt
    ? oneLine(e.raw ?? e.error, 60)
    : oneLine(builtinPreview(e.item) ?? callPreview(e.item) ?? itemPreview(e.item));
  const md = new vscode.MarkdownString();
  md.appendText(`${label} · ${type} · #${e.sequenceNumber} · ${e.createdAt ?? 'unknown'} UTC\n\n`);
  md.appendText(e.corrupt ? `This row cannot be read: ${e.error}\n\n${e.raw ?? '(message row missing)'}` : itemPreview(e.item));
  item.tooltip = md;
  item.contextValue = contextValue('item', { corrupt: e.corrupt });
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
      ? `No price for model ${pricing.model}: run Set Pricing Model… to show costs.`
      : 'No pricing model: run Set Pricing Model… to show costs.';
  const what = kind === 'session' ? 'Cost (all branches)' : 'Cost (runs on this branch)';
  const at = `at ${pricing.model} prices of ${pricing.table.date}`;
  return cost === null ? `${what}: no usage recorded.` : `${what}: ${formatCost(cost)} ${at}`;
}

export function moreTurnsItem(node: TreeNode): vscode.TreeItem {
  return moreItem(node, 'Show more turns…');
}
