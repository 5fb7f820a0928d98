/**
 * An `AdvancedSQLiteSession` seen as its current branch alone (docs/session-format.md §14.4). Python's `clearSession`
 * wipes every branch of the session, and so does ours; but wrappers written for single-history sessions, such as the
 * SDK's `OpenAIResponsesCompactionSession`, compact by `clearSession()` + `addItems()`. Given this view instead, they
 * replace only the branch they run on. It follows the session's branch pointer at each call.
 */
import type { AgentInputItem, Session, SessionHistoryRewriteArgs, SessionHistoryTransactionArgs } from '@openai/agents';

/**
 * What the view needs of the session it wraps; `AdvancedSQLiteSession` has it. Declared here, not taken from that
 * class, so the import goes one way: the session module imports this view, and this module imports nothing of it.
 */
export interface BranchingSession {
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<AgentInputItem[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
  popItem(): Promise<AgentInputItem | undefined>;
  clearCurrentBranch(): Promise<void>;
  applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void>;
  applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void>;
  replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void>;
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[];
}

/** `S` is the wrapped session's own type (`AdvancedSQLiteSession` when it made the view), so `session` keeps it. */
export class CurrentBranchSession<S extends BranchingSession = BranchingSession> implements Session {
  constructor(readonly session: S) {}

  getSessionId(): Promise<string> {
    return this.session.getSessionId();
  }

  getItems(limit?: number): Promise<AgentInputItem[]> {
    return this.session.getItems(limit);
  }

  addItems(items: AgentInputItem[]): Promise<void> {
    return this.session.addItems(items);
  }

  popItem(): Promise<AgentInputItem | undefined> {
    return this.session.popItem();
  }

  /** Clears the current branch only; other branches and usage stay. */
  clearSession(): Promise<void> {
    return this.session.clearCurrentBranch();
  }

  applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    return this.session.applyHistoryMutations(args);
  }

  applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    return this.session.applyHistoryTransaction(args);
  }

  replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    return this.session.replaceHistoryWithCompaction(items);
  }

  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[] {
    return this.session.prepareHistoryItemsForPersistenceComparison(items);
  }
}
