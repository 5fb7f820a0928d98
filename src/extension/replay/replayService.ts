/**
 * The extension's replay marks (docs/replay.md, "Where the marks live"): one replay marks store in the extension's
 * global storage, held by the store worker, for every session file; never the session file, whose format is the SDKs'.
 * Runs record what they did with their tool calls here; the conversation view's tool cards and the compare view's
 * columns read it. Server stores (PostgreSQL, Redis) have no marks: runs there are refused (runs write SQLite files only).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { ReplayCountsView, ReplayMarksView } from '../../shared/protocol/replay';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import type { StoreClient } from '../../store/worker/storeClient';
import { errorMessage } from '../../shared/errorMessage';
import { Setting } from '../core/contributions';
import { setting } from '../core/settings';
import { replayCounts, replayDefaults, runRecordOf, type ReplayDefaults, type StartedRun } from './replayRecords';
import { replayStoreOnDemand } from './replayStoreOnDemand';

export class ReplayService implements vscode.Disposable {
  private readonly store;
  private readonly changeEmitter = new vscode.EventEmitter<string>();
  /** Fires with a session's id after a run recorded its marks in this window. */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    client: StoreClient,
    /** The extension's global storage folder. */
    private readonly folder: string,
    /** Whether a session store is a PostgreSQL or Redis address. */
    private readonly isRemote: (dbPath: string) => boolean,
    private readonly log: (line: string) => void,
  ) {
    const path = join(folder, 'replay.db');
    this.store = replayStoreOnDemand(path, () => {
      mkdirSync(this.folder, { recursive: true });
      return client.openReplayStore(path);
    });
  }

  /** The store's file (created by the first run recorded). */
  get path(): string {
    return this.store.path;
  }

  /**
   * How re-runs treat their tool calls unless a run chooses: `agentSessions.replay.*`, trusted-only settings, so an
   * untrusted workspace cannot turn replay off and make a re-run fire the real tools.
   */
  defaults(): ReplayDefaults {
    return replayDefaults(setting(Setting.replayMode), setting(Setting.replayMatchNameOnly));
  }

  /**
   * Records what a run did with its tool calls (runRecordOf says which runs are kept). Never fails the run: the turn is
   * written whatever happens here, so a store that cannot be written is logged.
   */
  async record(dbPath: string, started: StartedRun | undefined, outcome: RunOutcome): Promise<void> {
    const record = runRecordOf(started, outcome);
    if (!record) return;
    if (this.isRemote(dbPath)) {
      this.log(`[replay] marks of run ${outcome.runId} not kept: runs on server stores are not recorded (SQLite files only).`);
      return;
    }
    try {
      await this.store.call('recordRun', resolve(dbPath), record.sessionId, record.branchId, record.turn, record.summary, outcome.runId, {
        freshBranch: record.freshBranch,
      });
      this.changeEmitter.fire(record.sessionId);
    } catch (err) {
      this.log(`[replay] marks of run ${outcome.runId} could not be kept in ${this.store.path}: ${errorMessage(err)}`);
    }
  }

  /** A branch's marks and runs (`replay/marks`). */
  async marks(dbPath: string, sessionId: string, branchId: string): Promise<ReplayMarksView> {
    if (this.isRemote(dbPath)) return { marks: [], runs: [] };
    const key = resolve(dbPath);
    const [marks, runs] = await Promise.all([
      this.store.call('marksOfBranch', key, sessionId, branchId),
      this.store.call('runsOfBranch', key, sessionId, branchId),
    ]);
    return { marks, runs };
  }

  /** A compare column's counts: the newest run recorded on the branch (undefined: none). */
  async counts(dbPath: string, sessionId: string, branchId: string): Promise<ReplayCountsView | undefined> {
    if (this.isRemote(dbPath)) return undefined;
    return replayCounts(await this.store.call('runsOfBranch', resolve(dbPath), sessionId, branchId));
  }

  /**
   * Forgets a deleted branch's marks. Not needed for correctness (a deleted branch's name stays reserved, spec §8.1,
   * so no later branch shows them) but it keeps the store from growing with branches nobody can open.
   */
  async forgetBranch(dbPath: string, sessionId: string, branchId: string): Promise<void> {
    if (this.isRemote(dbPath)) return;
    try {
      if ((await this.store.call('deleteBranch', resolve(dbPath), sessionId, branchId)) > 0) this.changeEmitter.fire(sessionId);
    } catch (err) {
      this.log(`[replay] marks of deleted branch ${branchId} could not be removed: ${errorMessage(err)}`);
    }
  }

  dispose(): void {
    void this.store.close().catch(() => undefined);
    this.changeEmitter.dispose();
  }
}
