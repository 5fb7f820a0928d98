import * as vscode from 'vscode';
import type { DatabaseChange, DatabaseEntry, DatabaseRegistry } from '../databases/databaseRegistry';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { readBeforeFirstTurn, RemoteSessionSource } from '../../store';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';
import {
  beforeFirstTurnItem,
  branchItem,
  databaseItem,
  entryItem,
  latestTurnsItem,
  moreSessionsItem,
  moreTurnsItem,
  sessionItem,
  turnItem,
} from './treeItems';
import { nodeId, type TreeNode } from '../core/treeNodes';
import { scopeCost } from '../pricing/pricedTables';
import type { ReviewService } from '../reviews/reviewService';
import type { TurnReview } from '../../store/reviews/reviewTypes';
import type { SessionPricing } from '../pricing/sessionPricing';
import { costTooltipLine } from './treeItems';
import type { ExpandedNodes } from './expandedNodes';
import { sharedTurnUsage } from '../conversation/conversationData';

/** Turns per page under a branch, so a branch of 10,000 turns expands without reading them all. */
export const TURN_PAGE = 200;
/** Sessions per page of a server store (100,000 sessions must not be listed at once). */
export const SESSION_PAGE = 50;

/**
 * A thin TreeDataProvider over the registry: every level reads one page from the database when it is expanded,
 * nothing more. A change the registry or the reviews report refreshes the nodes it touches.
 */
export class SessionTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TreeNode | TreeNode[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscription: vscode.Disposable;
  /** Tree items built by the last read of each node's parent, by node id. */
  private readonly items = new Map<string, vscode.TreeItem>();
  /**
   * The node object handed to VS Code for each id, the same object on every read while its fields stay the same.
   * VS Code finds the element a refresh names by identity, so only a node it was given can be refreshed alone; a
   * refresh of the whole tree drops every element VS Code holds, and a click that asks for a node's children in
   * between finds none ("No tree item with id … found": the node shows expanded and empty).
   */
  private readonly nodes = new Map<string, TreeNode>();
  /** The ids each node's last read listed under it (root: ''), so the nodes a read no longer lists are forgotten. */
  private readonly childIds = new Map<string, string[]>();
  /**
   * The tooltips of session and branch items, kept apart: VS Code only resolves a tooltip that is undefined, so they
   * are handed over with their cost by `resolveTreeItem`.
   */
  private readonly tooltips = new Map<string, vscode.MarkdownString>();

  constructor(
    private readonly registry: DatabaseRegistry,
    private readonly pricing?: SessionPricing,
    /** Review marks on turns (✓ ✗ and tags); the tree redraws when a review changes. */
    private readonly reviews?: ReviewService,
    /** The nodes left expanded, drawn expanded again after a reload (expandedNodes.ts). */
    private readonly expansion?: ExpandedNodes,
  ) {
    const subscriptions = [registry.onDidChange((change) => this.databaseChanged(change))];
    if (reviews) subscriptions.push(reviews.onDidChange((sessionId) => this.reviewsChanged(sessionId)));
    // Another pricing model changes the costs in the tooltips.
    if (pricing) subscriptions.push(pricing.onDidChange(() => this.emitter.fire(undefined)));
    this.subscription = vscode.Disposable.from(...subscriptions);
  }

  /**
   * A session's turn reviews by "branch turn" (the branch that ran the turn, as reviews name it); none when the review
   * store cannot be read — a mark is a convenience here, the view says what is wrong with a review store.
   */
  private async turnReviews(dbPath: string, sessionId: string): Promise<Map<string, TurnReview> | undefined> {
    if (!this.reviews) return undefined;
    try {
      const store = await this.reviews.storeFor(dbPath);
      const list = await store.call('turnReviews', sessionId);
      return new Map(list.map((r) => [`${r.branchId} ${r.turn}`, r]));
    } catch {
      return undefined;
    }
  }

  /**
   * Adds the cost to a session's or branch's tooltip when it is shown (on hover): one summed read per node hovered,
   * not one per node listed (a database may hold thousands of sessions). A session's cost is every branch's runs; a
   * branch's is its own runs (shared turns ran, and are priced, on the branch they came from).
   */
  async resolveTreeItem(item: vscode.TreeItem, node: TreeNode): Promise<vscode.TreeItem> {
    if (!this.pricing || (node.kind !== 'session' && node.kind !== 'branch')) return item;
    const base = this.tooltips.get(nodeId(node));
    const db = this.registry.get(node.dbPath)?.db;
    if (!db || !base) return item;
    const pricing = this.pricing.pricingFor(node);
    const branchId = node.kind === 'branch' ? node.branchId : null;
    let cost: number | null = null;
    try {
      cost = await scopeCost(db, node.sessionId, branchId, pricing.price);
    } catch {
      item.tooltip = base; // unreadable now: the next read of the tree shows the problem
      return item;
    }
    const md = new vscode.MarkdownString(base.value);
    md.appendText(`\n\n${costTooltipLine(node.kind, pricing, cost)}`);
    item.tooltip = md;
    return item;
  }

  /** Keeps what the user expands and collapses in `view` (this tree's view) for the next reload. */
  watchExpansion(view: vscode.TreeView<TreeNode>): vscode.Disposable {
    const expansion = this.expansion;
    if (!expansion) return new vscode.Disposable(() => undefined);
    return vscode.Disposable.from(
      view.onDidExpandElement((e) => expansion.expanded(nodeId(e.element))),
      view.onDidCollapseElement((e) => expansion.collapsed(nodeId(e.element))),
    );
  }

  async getTreeItem(node: TreeNode): Promise<vscode.TreeItem> {
    const id = nodeId(node);
    // A database refreshed alone (a write to its file) reads its own counts, not every open database's.
    const entry = node.kind === 'database' && !this.items.has(id) ? this.registry.get(node.dbPath) : undefined;
    if (entry) this.keep(id, node, (await this.databasePair(entry))[1]);
    else if (!this.items.has(id)) await this.read(this.getParent(node));
    return this.items.get(id) ?? new vscode.TreeItem('(gone)');
  }

  /** The parent, derived from the node's own fields (needed by `TreeView.reveal`). */
  getParent(node: TreeNode): TreeNode | undefined {
    switch (node.kind) {
      case 'database':
        return undefined;
      case 'moreSessions':
        return { kind: 'database', dbPath: node.dbPath };
      case 'session':
        return { kind: 'database', dbPath: node.dbPath };
      case 'branch':
        return { kind: 'session', dbPath: node.dbPath, sessionId: node.sessionId };
      case 'turn':
      case 'moreTurns':
      case 'latestTurns':
        return { kind: 'branch', dbPath: node.dbPath, sessionId: node.sessionId, branchId: node.branchId };
      case 'item':
        return {
          kind: 'turn',
          dbPath: node.dbPath,
          sessionId: node.sessionId,
          branchId: node.branchId,
          turn: node.turn,
          branchTurnNumber: null,
        };
    }
  }

  getChildren(node?: TreeNode): Promise<TreeNode[]> {
    return this.read(node);
  }

  /** Reads a node's children, keeping their items; VS Code's requests and the tree's own (`getTreeItem`) come here. */
  private async read(node?: TreeNode): Promise<TreeNode[]> {
    let pairs: [TreeNode, vscode.TreeItem][];
    try {
      pairs = await this.children(node);
    } catch (err) {
      // A read failed (file damaged or locked beyond the timeout): show it on the database, never as an empty tree.
      if (node) this.registry.reportProblem(node.dbPath, err);
      return [];
    }
    const parentId = node ? nodeId(node) : '';
    const listed: TreeNode[] = [];
    const ids: string[] = [];
    for (const [n, item] of pairs) {
      const id = nodeId(n);
      ids.push(id);
      listed.push(this.stable(id, n));
      this.keep(id, n, item);
    }
    const kept = new Set(ids);
    for (const old of this.childIds.get(parentId) ?? []) if (!kept.has(old)) this.forget(old);
    this.childIds.set(parentId, ids);
    return listed;
  }

  /** Keeps a node's item for `getTreeItem`: its tooltip apart (resolved with its cost), drawn expanded if it was. */
  private keep(id: string, n: TreeNode, item: vscode.TreeItem): void {
    if (this.pricing && (n.kind === 'session' || n.kind === 'branch') && item.tooltip instanceof vscode.MarkdownString) {
      this.tooltips.set(id, item.tooltip);
      item.tooltip = undefined;
    }
    if (this.expansion?.has(id) && item.collapsibleState === vscode.TreeItemCollapsibleState.Collapsed)
      item.collapsibleState = vscode.TreeItemCollapsibleState.Expanded;
    this.items.set(id, item);
  }

  /** The node object VS Code already holds for `id` when its fields are `n`'s, otherwise `n` from now on. */
  private stable(id: string, n: TreeNode): TreeNode {
    const known = this.nodes.get(id);
    if (known && JSON.stringify(known) === JSON.stringify(n)) return known;
    this.nodes.set(id, n);
    return n;
  }

  /** Drops a node no longer listed, and everything read under it, from the maps (they hold only what is listed). */
  private forget(id: string): void {
    for (const child of this.childIds.get(id) ?? []) this.forget(child);
    this.childIds.delete(id);
    this.nodes.delete(id);
    this.items.delete(id);
    this.tooltips.delete(id);
  }

  /**
   * Redraws only what a change touches: a file's rows or state its database node (its counts, and whatever is
   * expanded under it), a session's current branch that session's branches (the mark is on the branch). A database
   * opened or closed changes the list itself.
   */
  private databaseChanged(change: DatabaseChange): void {
    if (change.kind === 'list') return this.refresh();
    if (change.kind === 'current-branch') return this.refreshNodes(this.branchesOf(change.sessionId, change.path));
    this.refreshNodes([nodeId({ kind: 'database', dbPath: change.path })]);
  }

  /** A review marks turns of one session: its branches in each database (their turns are read again where expanded). */
  private reviewsChanged(sessionId: string): void {
    this.refreshNodes(this.branchesOf(sessionId));
  }

  /**
   * The ids of the branch nodes VS Code was given for a session (in one database, or in each): refreshing them reads
   * the session's branch tree again, not the database's session list.
   */
  private branchesOf(sessionId: string, dbPath?: string): string[] {
    return [...this.nodes.values()]
      .filter((n) => n.kind === 'branch' && n.sessionId === sessionId && (dbPath === undefined || n.dbPath === dbPath))
      .map(nodeId);
  }

  /**
   * Fires the nodes VS Code holds with these ids, their items read again (VS Code asks for the item of a node it
   * refreshes, and reads its children again when it is expanded). A node VS Code was never given needs nothing: it
   * is read when its parent is expanded.
   */
  private refreshNodes(ids: string[]): void {
    const known = ids.map((id) => this.nodes.get(id)).filter((n): n is TreeNode => n !== undefined);
    if (known.length === 0) return;
    for (const n of known) this.items.delete(nodeId(n));
    this.emitter.fire(known.length === 1 ? known[0] : known);
  }

  /** A database's node and item: its session count and size read now. */
  private async databasePair(e: DatabaseEntry): Promise<[TreeNode, vscode.TreeItem]> {
    const n: TreeNode = { kind: 'database', dbPath: e.path };
    const count =
      e.db instanceof RemoteSessionSource
        ? await e.db.countSessions(this.registry.sessionFilter(e.path)).catch(() => null)
        : e.db instanceof WorkerSessionDatabase
          ? await e.db.countSessionRows().catch(() => null)
          : null;
    const size = e.remote ? null : safely(() => statSync(e.path).size);
    return [n, databaseItem(n, e, { sessionCount: count, filter: this.registry.sessionFilter(e.path), size })];
  }

  /** The children with their tree items (used by getChildren and by tests). */
  async children(node?: TreeNode): Promise<[TreeNode, vscode.TreeItem][]> {
    if (!node) {
      // By name (files, then server stores by address), so a database is where the user expects it.
      const entries = [...this.registry.list()].sort(
        (a, b) =>
          Number(!!a.remote) - Number(!!b.remote) || basename(a.path).localeCompare(basename(b.path)) || a.path.localeCompare(b.path),
      );
      return Promise.all(entries.map((e) => this.databasePair(e)));
    }
    if (node.kind === 'item') return [];
    const entry = this.registry.get(node.dbPath);
    const db = entry?.db;
    if (!entry || !db) return [];
    const canWrite = !entry.readonly;
    const structured = db.tables.messageStructure;
    if (db instanceof RemoteSessionSource && (node.kind === 'database' || node.kind === 'moreSessions')) {
      const page = await db.listSessionsPage({
        limit: SESSION_PAGE,
        cursor: node.kind === 'moreSessions' ? node.cursor : null,
        prefix: this.registry.sessionFilter(node.dbPath),
      });
      const out: [TreeNode, vscode.TreeItem][] = page.sessions.map((s) => {
        const n: TreeNode = { kind: 'session', dbPath: node.dbPath, sessionId: s.sessionId };
        return [n, sessionItem(n, s, canWrite, db.kind)];
      });
      if (page.nextCursor !== null) {
        const n: TreeNode = { kind: 'moreSessions', dbPath: node.dbPath, cursor: page.nextCursor };
        out.push([n, moreSessionsItem(n)]);
      }
      return out;
    }
    switch (node.kind) {
      case 'moreSessions':
        return [];
      case 'database': {
        const sessions = await db.listSessions();
        return sessions.map((s) => {
          const n: TreeNode = { kind: 'session', dbPath: node.dbPath, sessionId: s.sessionId };
          return [n, sessionItem(n, s, canWrite)];
        });
      }
      case 'session': {
        const current = this.registry.currentBranch(node.dbPath, node.sessionId);
        const branches = await db.getBranchTree(node.sessionId);
        return branches.map((b) => {
          const n: TreeNode = { kind: 'branch', dbPath: node.dbPath, sessionId: node.sessionId, branchId: b.branchId };
          return [n, branchItem(n, b, b.branchId === current, canWrite, structured)];
        });
      }
      case 'branch':
      case 'moreTurns':
      case 'latestTurns': {
        const after = node.kind === 'moreTurns' ? node.afterTurn : node.kind === 'latestTurns' ? node.fromTurn - 1 : null;
        const until = node.kind === 'moreTurns' ? node.untilTurn : undefined;
        const read = await db.getTurnsPage(node.sessionId, node.branchId, { afterTurn: after, limit: TURN_PAGE });
        // A page of "Show more" stops where the latest turns' node starts: every turn is listed once.
        const page =
          until === undefined
            ? read
            : {
                turns: read.turns.filter((t) => t.turn <= until),
                nextAfterTurn: read.nextAfterTurn !== null && read.nextAfterTurn < until ? read.nextAfterTurn : null,
              };
        const first = page.turns[0];
        const last = page.turns[page.turns.length - 1];
        // Turns shared with an ancestor show the usage of the branch that ran them. main is never forked from
        // anything, and server stores have main only, so neither reads the branch tree for it.
        const shared =
          first && last && node.branchId !== 'main' && !(db instanceof RemoteSessionSource)
            ? await sharedTurnUsage(db, node.sessionId, node.branchId, await db.getBranchTree(node.sessionId), first.turn, last.turn)
            : undefined;
        const reviewed = page.turns.length > 0 ? await this.turnReviews(node.dbPath, node.sessionId) : undefined;
        const out: [TreeNode, vscode.TreeItem][] = page.turns.map((t) => {
          const n: TreeNode = {
            kind: 'turn',
            dbPath: node.dbPath,
            sessionId: node.sessionId,
            branchId: node.branchId,
            turn: t.turn,
            branchTurnNumber: t.branchTurnNumber,
          };
          const ranOn = shared?.get(t.turn)?.branchId ?? node.branchId;
          return [n, turnItem(n, t, canWrite, structured, shared?.get(t.turn), reviewed?.get(`${ranOn} ${t.turn}`))];
        });
        // The branch's first page starts with what came before its first user message (turn 0), as the view's does.
        const before = node.kind === 'branch' ? await readBeforeFirstTurn(db, node.sessionId, node.branchId) : null;
        if (before) {
          const n: TreeNode = {
            kind: 'turn',
            dbPath: node.dbPath,
            sessionId: node.sessionId,
            branchId: node.branchId,
            turn: 0,
            branchTurnNumber: null,
          };
          out.unshift([n, beforeFirstTurnItem(n, before)]);
        }
        // A long branch offers its latest turns at once (the End of the list), beside paging on from the first.
        let latestFrom = node.kind === 'moreTurns' ? node.untilTurn : undefined;
        if (node.kind === 'branch' && page.nextAfterTurn !== null) {
          const lastPage = await db.getTurnsPageBefore(node.sessionId, node.branchId, { beforeTurn: null, limit: TURN_PAGE });
          const start = lastPage.turns[0]?.turn;
          if (start !== undefined && start > page.nextAfterTurn) latestFrom = start - 1;
        }
        if (page.nextAfterTurn !== null && (latestFrom === undefined || page.nextAfterTurn < latestFrom)) {
          const n: TreeNode = {
            kind: 'moreTurns',
            dbPath: node.dbPath,
            sessionId: node.sessionId,
            branchId: node.branchId,
            afterTurn: page.nextAfterTurn,
            ...(latestFrom !== undefined ? { untilTurn: latestFrom } : {}),
          };
          out.push([n, moreTurnsItem(n)]);
        }
        if (node.kind === 'branch' && latestFrom !== undefined) {
          const n: TreeNode = {
            kind: 'latestTurns',
            dbPath: node.dbPath,
            sessionId: node.sessionId,
            branchId: node.branchId,
            fromTurn: latestFrom + 1,
          };
          out.push([n, latestTurnsItem(n)]);
        }
        return out;
      }
      case 'turn': {
        const entries = await db.getTurnItems(node.sessionId, node.branchId, node.turn);
        return entries.map((e) => {
          const n: TreeNode = {
            kind: 'item',
            dbPath: node.dbPath,
            sessionId: node.sessionId,
            branchId: node.branchId,
            turn: node.turn,
            sequenceNumber: e.sequenceNumber,
          };
          return [n, entryItem(n, e)];
        });
      }
    }
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}

/** A value for a label, or null when reading it failed (the file went away, a lock): a label never throws. */
function safely<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}
