/**
 * *Review Next* (docs/reviews.md): walks the turns a search query matches across the open session stores, one turn at
 * a time in the conversation view. The query is the search box's (`reviewed:no`, `is:failed tool:refund`, …); its hits
 * become the queue, a turn once each, in the Search Results view's order. A verdict given on the queued turn (G or B
 * in the view) moves on to the next by itself, so a review is one keystroke per turn; Review Next skips one.
 */
import * as vscode from 'vscode';
import type { ConversationPanels } from '../conversation/conversationPanel';
import type { SessionSearch } from '../search/sessionSearch';
import { CommandId } from '../core/contributions';
import { UserFacingError } from '../core/userError';
import { showInformationNotice } from '../core/notices';

/** A turn in the queue, named by the branch that ran it (as reviews and search hits name it). */
export interface QueuedTurn {
  dbPath: string;
  sessionId: string;
  branchId: string;
  turn: number;
}

/** Where the queue stands (the command's return value, for tests and scripts). */
export interface ReviewQueueState {
  query: string;
  /** 1-based; 0 when the queue is empty or done. */
  position: number;
  total: number;
  current: QueuedTurn | null;
  /** Hits stopped at the search's limit: more turns may match than the queue holds. */
  capped: boolean;
}

const REVIEWING_CONTEXT = 'agentSessions.reviewing';

export class ReviewQueue implements vscode.Disposable {
  private turns: QueuedTurn[] = [];
  private index = -1;
  private query = '';
  private capped = false;
  private readonly status: vscode.StatusBarItem;

  constructor(
    private readonly search: SessionSearch,
    private readonly panels: ConversationPanels,
  ) {
    this.status = vscode.window.createStatusBarItem('agentSessions.reviewQueue', vscode.StatusBarAlignment.Left, 90);
    this.status.name = vscode.l10n.t('Review queue');
    this.status.command = CommandId.reviewNext;
  }

  get state(): ReviewQueueState {
    const current = this.turns[this.index] ?? null;
    return { query: this.query, position: current ? this.index + 1 : 0, total: this.turns.length, current, capped: this.capped };
  }

  get active(): boolean {
    return this.index >= 0 && this.index < this.turns.length;
  }

  /** Searches for `query`, makes its turns the queue and shows the first. */
  async start(query: string): Promise<ReviewQueueState> {
    this.stop();
    const outcome = await this.search.search(query);
    if (outcome.cancelled) throw new UserFacingError(vscode.l10n.t('The search for "{0}" was cancelled: no review queue.', query));
    const seen = new Set<string>();
    const turns: QueuedTurn[] = [];
    for (const node of this.search.results.hits()) {
      const { hit } = node;
      // Items before the first user message belong to no turn, and a turn is reviewed once however many hits it has.
      if (hit.turn < 1) continue;
      const key = JSON.stringify([node.dbPath, hit.sessionId, hit.branchId, hit.turn]);
      if (seen.has(key)) continue;
      seen.add(key);
      turns.push({ dbPath: node.dbPath, sessionId: hit.sessionId, branchId: hit.branchId, turn: hit.turn });
    }
    this.query = query;
    this.turns = turns;
    this.capped = outcome.capped;
    this.index = -1;
    if (turns.length === 0) {
      void showInformationNotice(vscode.l10n.t('No turn matches "{0}": nothing to review.', query));
      return this.state;
    }
    return this.next();
  }

  /** Shows the next queued turn (the first, right after `start`); at the end, says so and stops. */
  async next(): Promise<ReviewQueueState> {
    this.index++;
    const current = this.turns[this.index];
    if (!current) {
      const done = this.turns.length;
      const query = this.query;
      this.stop();
      this.query = query;
      void showInformationNotice(vscode.l10n.t('Review queue "{0}" done: {1} turn(s).', query, done));
      return this.state;
    }
    this.showStatus();
    const panel = this.panels.open({
      dbPath: current.dbPath,
      sessionId: current.sessionId,
      branchId: current.branchId,
      turn: current.turn,
    });
    await this.panels.whenReady(panel);
    return this.state;
  }

  /** A verdict was given: when it is on the queued turn, the queue moves on (one keystroke per turn). */
  async verdictGiven(target: QueuedTurn): Promise<void> {
    const current = this.turns[this.index];
    if (!current) return;
    if (
      current.dbPath === target.dbPath &&
      current.sessionId === target.sessionId &&
      current.branchId === target.branchId &&
      current.turn === target.turn
    )
      await this.next();
  }

  stop(): void {
    this.turns = [];
    this.index = -1;
    this.capped = false;
    this.status.hide();
    void vscode.commands.executeCommand('setContext', REVIEWING_CONTEXT, false);
  }

  private showStatus(): void {
    const { position, total } = this.state;
    this.status.text = `$(checklist) ${vscode.l10n.t('Review {0}/{1}', position, `${total}${this.capped ? '+' : ''}`)}`;
    this.status.tooltip = vscode.l10n.t(
      'Review queue "{0}": G or B in the view gives the verdict and goes on; click (or Review Next) skips this turn.',
      this.query,
    );
    this.status.show();
    void vscode.commands.executeCommand('setContext', REVIEWING_CONTEXT, true);
  }

  dispose(): void {
    this.status.dispose();
  }
}
