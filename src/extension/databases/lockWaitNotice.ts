/**
 * "Waiting for <file> (another process is writing)…" with Cancel, for a write that waits on another process's write
 * lock. The wait itself is in the store worker (the host stays responsive); this says why nothing happens yet, once
 * the write has waited `LOCK_NOTICE_MS`, so a lock that frees at once shows nothing.
 */
import * as vscode from 'vscode';
import { withNoticeProgress } from '../core/notices';

/** How long a write waits before the notice shows. */
export const LOCK_NOTICE_MS = 300;
/** How long a write the user can see and cancel waits for the lock before failing with `locked`. */
export const VISIBLE_LOCK_WAIT_MS = 60_000;

export class LockWaitNotice implements vscode.Disposable {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private shown = false;
  private finish: () => void = () => undefined;
  private readonly finished = new Promise<void>((resolve) => (this.finish = resolve));
  private readonly started = Date.now();

  constructor(private readonly fileName: string) {}

  /** Aborted when the user cancels: the write stops waiting and writes nothing. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return this.controller.signal.aborted;
  }

  /** The store worker says the write waits for the lock. */
  readonly onWaiting = (): void => {
    if (this.timer || this.shown) return;
    this.timer = setTimeout(() => this.show(), Math.max(0, LOCK_NOTICE_MS - (Date.now() - this.started)));
  };

  private show(): void {
    this.shown = true;
    void withNoticeProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: vscode.l10n.t('Waiting for {0} (another process is writing)…', this.fileName),
        cancellable: true,
      },
      (_progress, token) => {
        token.onCancellationRequested(() => this.controller.abort());
        return this.finished;
      },
    );
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.finish();
  }
}
