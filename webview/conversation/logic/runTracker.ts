/**
 * The agent runs whose events the conversation view is receiving: the composer's, and a what-if's several at once
 * (docs/webview-protocol.md#agent-runs). It only keeps their state and says what each event means for the view;
 * `ConversationModel` does it (shows a branch, reads the turns again), so the decisions are tested without a page.
 */
import type { RunEvent } from '../../../src/shared/protocol/runEvents';

/** The fork the view moved to when its run started, and the branch it forked from. */
export interface ShownFork {
  runId: string;
  branchId: string;
  from: string;
  /** The turn the user had selected when the view moved to the fork: where a failed fork returns to. */
  turn: number | undefined;
}

/** What the view does after a run event. */
export type RunStep =
  /** Nothing: an event in the middle of a run, or a run that starts on a branch the view need not move to. */
  | { kind: 'none' }
  /** A retry started on its new branch: show that branch. */
  | { kind: 'show'; branchId: string }
  /**
   * A run ended: read the turns again, first showing `showFork` when set. A run that wrote a turn selects it; one that
   * wrote none (`keepSelection`) leaves the selection where the user put it, and a failed fork the view moved to
   * returns to the branch and turn it was started from (`back`), since the fork is gone or holds nothing new.
   */
  | { kind: 'ended'; showFork: string | undefined; keepSelection?: true; back?: { branchId: string; turn: number | undefined } };

export class RunTracker {
  private readonly active = new Set<string>();
  private readonly forks = new Set<string>();
  private shown: ShownFork | undefined;

  /**
   * The runs whose events are arriving. The live set, not a copy: stopping them one by one takes turns, and a run
   * that ended meanwhile is then not stopped again.
   */
  get running(): ReadonlySet<string> {
    return this.active;
  }

  /** The fork the view moved to, until its run ends. */
  get shownFork(): Readonly<ShownFork> | undefined {
    return this.shown;
  }

  /**
   * Takes in one event and says what the view does about it. `shownBranch` is the branch the view shows as the event
   * arrives, `selectedTurn` the turn selected then. An end of a run never seen starting (its page was recreated
   * meanwhile) still reads the turns again.
   */
  next(e: RunEvent, shownBranch: string, selectedTurn?: number): RunStep {
    if (e.kind === 'run/started') {
      let step: RunStep = { kind: 'none' };
      // A retry streams into its new branch: show it (the first of several; the others are in the branch map).
      if (e.forkedFrom && this.forks.size === 0) {
        this.shown = { runId: e.runId, branchId: e.branchId, from: e.forkedFrom.branchId, turn: selectedTurn };
        step = { kind: 'show', branchId: e.branchId };
      }
      if (e.forkedFrom) this.forks.add(e.runId);
      this.active.add(e.runId);
      return step;
    }
    if (e.kind === 'run/completed' || e.kind === 'run/failed') {
      this.active.delete(e.runId);
      this.forks.delete(e.runId);
      const fork = this.shown?.runId === e.runId ? this.shown : undefined;
      if (fork) this.shown = undefined;
      // A fork from turn 1 has no rows until its run ends, so the view fell back to the branch it came from (the branch
      // list did not have it yet): show it now, as a fork whose agent paused it (waiting for input: its turn is kept).
      // A failed fork wrote nothing to show.
      const kept = e.kind === 'run/completed' || e.failure === 'paused';
      const back = fork !== undefined && kept && shownBranch === fork.from;
      if (e.kind === 'run/completed' || e.written.turn !== null) return { kind: 'ended', showFork: back ? fork.branchId : undefined };
      // Wrote no turn: nothing new to select. A fork the view still shows (or fell back from) returns to where the
      // user started it; a user who went elsewhere meanwhile stays there.
      if (fork !== undefined && (shownBranch === fork.branchId || shownBranch === fork.from))
        return { kind: 'ended', showFork: undefined, keepSelection: true, back: { branchId: fork.from, turn: fork.turn } };
      return { kind: 'ended', showFork: undefined, keepSelection: true };
    }
    return { kind: 'none' };
  }
}
