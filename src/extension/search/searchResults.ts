/**
 * The "Search Results" view: hits grouped by database, then session, filled in as the worker finds them. A hit's label
 * is its snippet with the match highlighted; its description says where it is (branch, turn, kind) and whether the
 * turn is shared with other branches. Selecting a hit opens that turn of that branch in the conversation view.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { SearchHit } from '../../store';

export interface HitNode {
  kind: 'hit';
  dbPath: string;
  hit: SearchHit;
}
export interface SessionGroupNode {
  kind: 'session';
  dbPath: string;
  sessionId: string;
  hits: HitNode[];
}
export interface DatabaseGroupNode {
  kind: 'database';
  dbPath: string;
  /** The file's name, or a server store's `user@host:port/db`. */
  label: string;
  sessions: Map<string, SessionGroupNode>;
  hitCount: number;
  /** Why the file could not be searched, if it could not. */
  error?: string;
  /** Why the file was not searched (the hit limit was reached before it), if it was not. */
  skipped?: string;
}
export interface NoteNode {
  kind: 'note';
  text: string;
}
/** The last row of a search that stopped at its hit limit: selecting it searches again with a higher one. */
export interface MoreNode {
  kind: 'more';
  query: string;
  maxHits: number;
}
export type SearchNode = DatabaseGroupNode | SessionGroupNode | HitNode | NoteNode | MoreNode;

/** Tree refreshes while hits stream in are coalesced to this interval. */
const REFRESH_MS = 150;

/** The results of the last search, as a tree. */
export class SearchResultsProvider implements vscode.TreeDataProvider<SearchNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SearchNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private databases = new Map<string, DatabaseGroupNode>();
  private notes: NoteNode[] = [];
  private more: MoreNode | undefined;
  private drawWaiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The open and search commands' ids (the commands module owns the ids). */
  constructor(
    private readonly openHitCommand: string,
    private readonly searchCommand: string,
  ) {}

  get hitCount(): number {
    let n = 0;
    for (const d of this.databases.values()) n += d.hitCount;
    return n;
  }

  /** Every hit, in the order shown (for the tests and for "open the first hit"). */
  hits(): HitNode[] {
    return [...this.databases.values()].flatMap((d) => [...d.sessions.values()].flatMap((s) => s.hits));
  }

  clear(): void {
    this.databases = new Map();
    this.notes = [];
    this.more = undefined;
    this.refreshNow();
  }

  /** Starts a search over these files (their groups appear as they get hits). */
  reset(notes: string[]): void {
    this.databases = new Map();
    this.notes = notes.map((text) => ({ kind: 'note', text }));
    this.more = undefined;
    this.refreshNow();
  }

  /**
   * The search stopped at its hit limit: the files it never opened are listed as not searched, and a last row offers
   * the same search with `nextMaxHits`.
   */
  capped(query: string, notSearched: readonly string[], nextMaxHits: number | undefined): void {
    for (const path of notSearched) this.database(path).skipped = vscode.l10n.t('not searched: the hit limit was reached first');
    this.more = nextMaxHits === undefined ? undefined : { kind: 'more', query, maxHits: nextMaxHits };
    this.refreshNow();
  }

  /** Adds hits of a file (or of a server store, shown as `label`). */
  add(dbPath: string, hits: SearchHit[], label?: string): void {
    const db = this.database(dbPath, label);
    for (const hit of hits) {
      let session = db.sessions.get(hit.sessionId);
      if (!session) db.sessions.set(hit.sessionId, (session = { kind: 'session', dbPath, sessionId: hit.sessionId, hits: [] }));
      session.hits.push({ kind: 'hit', dbPath, hit });
      db.hitCount++;
    }
    this.scheduleRefresh();
  }

  fail(dbPath: string, message: string, label?: string): void {
    this.database(dbPath, label).error = message;
    this.scheduleRefresh();
  }

  private database(dbPath: string, label?: string): DatabaseGroupNode {
    let db = this.databases.get(dbPath);
    if (!db)
      this.databases.set(dbPath, (db = { kind: 'database', dbPath, label: label ?? basename(dbPath), sessions: new Map(), hitCount: 0 }));
    return db;
  }

  /** Shows what arrived so far now (at the end of a search). */
  refreshNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.changed.fire(undefined);
  }

  /**
   * Resolves once the view has read the results again after `refreshNow` (it asks for the top level, then the groups),
   * or after `timeoutMs` when it is not visible: the summary line waits for it, so "done" never shows over an empty
   * list that fills a second later.
   */
  drawn(timeoutMs = 1500): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(finish, timeoutMs);
      this.drawWaiters.push(finish);
      function finish(): void {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private scheduleRefresh(): void {
    this.timer ??= setTimeout(() => this.refreshNow(), REFRESH_MS);
  }

  getChildren(node?: SearchNode): SearchNode[] {
    if (!node) return [...this.notes, ...this.databases.values(), ...(this.more ? [this.more] : [])];
    if (node.kind === 'database') return [...node.sessions.values()];
    if (node.kind === 'session') {
      // The hits are what takes the view long to draw: once it asks for a session's, the list is on its way.
      for (const wake of this.drawWaiters.splice(0)) setTimeout(wake, 0);
      return node.hits;
    }
    return [];
  }

  getParent(node: SearchNode): SearchNode | undefined {
    if (node.kind === 'session') return this.databases.get(node.dbPath);
    if (node.kind === 'hit') return this.databases.get(node.dbPath)?.sessions.get(node.hit.sessionId);
    return undefined;
  }

  getTreeItem(node: SearchNode): vscode.TreeItem {
    switch (node.kind) {
      case 'note': {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon('info');
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem(
          vscode.l10n.t('More hits not shown: search for up to {0}', node.maxHits.toLocaleString()),
          vscode.TreeItemCollapsibleState.None,
        );
        item.iconPath = new vscode.ThemeIcon('search-expand-results');
        item.command = { command: this.searchCommand, title: vscode.l10n.t('Search Sessions'), arguments: [node.query, node.maxHits] };
        return item;
      }
      case 'database': {
        const item = new vscode.TreeItem(
          node.label,
          node.sessions.size > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
        );
        const problem = node.error ?? node.skipped;
        item.description = problem ?? hitsText(node.hitCount);
        item.tooltip = problem ? `${node.dbPath}\n${problem}` : node.dbPath;
        item.iconPath = new vscode.ThemeIcon(node.error ? 'warning' : node.skipped ? 'circle-slash' : 'database');
        item.contextValue = 'searchDatabase';
        return item;
      }
      case 'session': {
        const item = new vscode.TreeItem(node.sessionId, vscode.TreeItemCollapsibleState.Expanded);
        item.description = hitsText(node.hits.length);
        item.iconPath = new vscode.ThemeIcon('comment-discussion');
        item.contextValue = 'searchSession';
        return item;
      }
      case 'hit':
        return hitItem(node, this.openHitCommand);
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
  }
}

export function hitsText(n: number): string {
  return n === 1 ? vscode.l10n.t('1 hit') : vscode.l10n.t('{0} hits', n.toLocaleString());
}

/** Where a hit is, for its description: `main · turn 3 · function_call get_weather · failed · shared with alt`. */
export function hitLocation(hit: SearchHit): string {
  const parts = [hit.branchId, hit.turn > 0 ? vscode.l10n.t('turn {0}', hit.turn) : vscode.l10n.t('before turn 1')];
  parts.push(hit.toolName && hit.role === null ? `${hit.itemType} ${hit.toolName}` : hit.itemType);
  if (hit.failed) parts.push(vscode.l10n.t('failed ({0})', hit.failed));
  if (hit.sharedWith.length > 0) parts.push(vscode.l10n.t('shared with {0}', hit.sharedWith.join(', ')));
  return parts.join(' · ');
}

function hitItem(node: HitNode, openHitCommand: string): vscode.TreeItem {
  const { hit } = node;
  const text = hit.snippet.text === '' ? hit.itemType : hit.snippet.text;
  const label: vscode.TreeItemLabel = { label: text, highlights: hit.snippet.ranges.map(([s, e]) => [s, e] as [number, number]) };
  const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  item.description = hitLocation(hit);
  const tooltip = new vscode.MarkdownString();
  tooltip.appendText(`${hit.sessionId} · ${hitLocation(hit)}\n\n${hit.snippet.text}`);
  item.tooltip = tooltip;
  item.iconPath = new vscode.ThemeIcon(
    hit.failed
      ? 'error'
      : hit.role === 'user'
        ? 'account'
        : hit.role !== null
          ? 'hubot'
          : hit.itemType.endsWith('_output')
            ? 'output'
            : 'tools',
  );
  item.contextValue = 'searchHit';
  item.command = { command: openHitCommand, title: vscode.l10n.t('Open in Conversation View'), arguments: [node] };
  return item;
}
