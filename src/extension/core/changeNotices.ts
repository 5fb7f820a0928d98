/**
 * The host's side of the view's data flow (docs/webview-protocol.md#change-notices): the change kinds a panel notes
 * become small "what changed" notices, one per burst, numbered. No vscode import, so the coalescing is unit-tested.
 * What a registry event means for a view is the view's (conversation/sessionNotices.ts).
 */
import type { ChangeKind, ChangeNotice } from '../../shared/protocol/envelope';

/** Runs `flush` once later and returns how to cancel it. */
export type Scheduler = (flush: () => void) => () => void;

/**
 * The next turn of the event loop: after the microtasks of the action that caused the change. One branch
 * creation fires a write (`checkNow`) and then a current-branch move a few awaits later; both land in one notice.
 */
export const nextTick: Scheduler = (flush) => {
  const timer = setTimeout(flush, 0);
  return () => clearTimeout(timer);
};

/**
 * Collects change kinds and sends them as one notice per burst with a sequence number that grows by one per notice.
 * Kinds noted while nothing listens (the view has not started) are dropped: the view's first load reads them anyway.
 */
export class ChangeNotices {
  private seq = 0;
  private readonly pending = new Set<ChangeKind>();
  private cancel: (() => void) | undefined;

  constructor(
    private readonly send: (notice: ChangeNotice) => void,
    private readonly schedule: Scheduler = nextTick,
  ) {}

  /** The number of the last notice sent (0 before the first). */
  get sequence(): number {
    return this.seq;
  }

  note(kinds: readonly ChangeKind[]): void {
    if (kinds.length === 0) return;
    for (const k of kinds) this.pending.add(k);
    this.cancel ??= this.schedule(() => this.flush());
  }

  private flush(): void {
    this.cancel = undefined;
    if (this.pending.size === 0) return;
    const what = [...this.pending].sort();
    this.pending.clear();
    this.seq += 1;
    this.send({ seq: this.seq, what });
  }

  /** Drops what is pending; nothing is sent after this. */
  dispose(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.pending.clear();
  }
}
