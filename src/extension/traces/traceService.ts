/**
 * The extension's traces (docs/traces.md): one trace store in the extension's global storage — never a session file —
 * held by the store worker, so decoding, storing and reading spans never run on the host's thread. Our runs record
 * into it (`agentSessions.traces.recordRuns`), the OTLP receiver feeds it when the user starts it (loopback, port
 * 4318 by default; the receiver's settings count only from the user or a trusted workspace, and an address other
 * machines can reach only after the user said yes to it once), OTLP JSON files can be imported, a session's traces
 * cleared. Retention
 * (`agentSessions.traces.maxSpans`, `maxAgeDays`) is applied when the store opens and every hour.
 */
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RunTracingOptions } from '../../agents/runTracing';
import { OtlpReceiver, type BatchInfo } from '../../store/traces/otlpReceiver';
import { isLoopbackHost } from '../../store/traces/receiverAddress';
import { exportOtlpJson } from '../../store/traces/otlpExport';
import type { SpanRecord } from '../../store/traces/spanRecord';
import type { IngestResult } from '../../store/traces/traceStore';
import type { StoreClient, WorkerTraceStore } from '../../store/worker/storeClient';
import { Setting } from '../core/contributions';
import { traceStoreOnDemand } from './traceStoreOnDemand';
import { affectsSetting, setting, workspaceTrust } from '../core/settings';
import { UserFacingError } from '../core/userError';
import { counted } from '../../shared/countNoun';
import { showErrorNotice, showWarningNotice } from '../core/notices';

const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** Changes are told at most this often: a receiver under a flood of batches must not make every view re-read. */
const CHANGE_EVERY_MS = 500;
/** The global-state key of the receiver addresses beyond loopback the user said yes to, newest last. */
export const RECEIVER_HOSTS_KEY = 'agentSessions.traces.receiverHostsAllowed';
/** How many such answers are kept (a bound on what settings can make us store). */
const MAX_REMEMBERED_HOSTS = 20;

/** The user said no to the receiver listening where other machines can reach it. */
export class ReceiverHostRefusedError extends UserFacingError {}

export class TraceService implements vscode.Disposable {
  private store: WorkerTraceStore | undefined;
  private receiver: OtlpReceiver | undefined;
  /** A start under way: settings and trust changes arrive together, and only one receiver (and question) may follow. */
  private starting: Promise<string> | undefined;
  /** Whether the running receiver follows `receiver.enabled` (a trust change may stop it) or was started by hand. */
  private bySetting = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  private pruneTimer: NodeJS.Timeout | undefined;
  private readonly changeEmitter = new vscode.EventEmitter<string | undefined>();
  /**
   * Fires after spans were added, linked or cleared, at most every `CHANGE_EVERY_MS`: with a session's id, or with
   * undefined when any session's may have changed (an OTLP batch, an import). The views read latency and open
   * timelines again.
   */
  readonly onDidChange = this.changeEmitter.event;
  private pendingChange: Set<string> | 'any' | undefined;
  private changeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: StoreClient,
    /** The folder the store lives in (the extension's global storage). */
    private readonly folder: string,
    private readonly log: vscode.LogOutputChannel,
    /** Where the user's yes to a receiver address beyond loopback is kept (the global state: it is the user's). */
    private readonly consent: vscode.Memento,
  ) {
    this.subscriptions.push(
      // Trust granted makes the workspace's receiver settings count (and a simulated untrust stops them counting).
      workspaceTrust.onDidChange(
        () => void (setting(Setting.tracesReceiverEnabled) || this.bySetting ? this.applyReceiverSetting() : undefined),
      ),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          affectsSetting(e, Setting.tracesReceiverEnabled) ||
          affectsSetting(e, Setting.tracesReceiverPort) ||
          affectsSetting(e, Setting.tracesReceiverHost)
        )
          void this.applyReceiverSetting();
      }),
    );
  }

  /** Where the trace store is. */
  get path(): string {
    return join(this.folder, 'traces.db');
  }

  /** The receiver's address while it runs. */
  get receiverUrl(): string | undefined {
    return this.receiver?.url;
  }

  /**
   * The store, opened (and pruned) on first use. Reading never writes: until a span is stored or linked, a store that
   * does not exist answers as an empty one and is not created (traceStoreOnDemand.ts); a failed open is tried again.
   */
  traces(): Promise<WorkerTraceStore> {
    this.store ??= traceStoreOnDemand(this.path, async () => {
      mkdirSync(this.folder, { recursive: true });
      const store = await this.client.openTraceStore(this.path);
      await this.prune(store);
      if (this.pruneTimer) clearInterval(this.pruneTimer);
      this.pruneTimer = setInterval(() => void this.prune(store), PRUNE_EVERY_MS);
      this.pruneTimer.unref?.();
      return store;
    });
    return Promise.resolve(this.store);
  }

  private async prune(store: WorkerTraceStore): Promise<void> {
    try {
      const removed = await store.call('prune', {
        maxSpans: setting(Setting.tracesMaxSpans),
        maxAgeDays: setting(Setting.tracesMaxAgeDays),
      });
      if (removed > 0) this.log.info(`Traces: removed ${removed} old spans (agentSessions.traces.maxSpans / maxAgeDays).`);
    } catch (err) {
      this.log.warn(`Traces: retention could not be applied: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** How a run is traced: into this store, unless the user turned recording off. */
  runTracing(): RunTracingOptions | undefined {
    if (!setting(Setting.tracesRecordRuns)) return undefined;
    return {
      sink: async (records: SpanRecord[]) => {
        const added = await (await this.traces()).call('addSpans', records);
        for (const r of records) if (r.link) this.noteChange(r.link.sessionId);
        return added;
      },
      // A trusted-only setting (core/trustedSettings.ts): an untrusted workspace cannot turn the upload on.
      sendToOpenAI: setting(Setting.tracesSendToOpenAI),
    };
  }

  /**
   * Starts the OTLP receiver at the settings' address, or `port` (a no-op when it runs); fails with
   * `OtlpReceiverError` when the port is taken.
   */
  async startReceiver(options: { port?: number; onBatch?: (b: BatchInfo) => void } = {}): Promise<string> {
    if (this.receiver) return this.receiver.url;
    this.starting ??= this.start(options).finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async start(options: { port?: number; onBatch?: (b: BatchInfo) => void }): Promise<string> {
    const host = setting(Setting.tracesReceiverHost).trim() || '127.0.0.1';
    if (!(await this.hostAllowed(host)))
      throw new ReceiverHostRefusedError(vscode.l10n.t('The OTLP trace receiver was not started: listening on {0} was not allowed.', host));
    const store = await this.traces();
    const onBatch = options.onBatch;
    this.receiver = await OtlpReceiver.start({
      host,
      port: options.port ?? setting(Setting.tracesReceiverPort),
      ingest: (body, format): Promise<IngestResult> => store.call('ingestOtlp', body, format, 'otlp'),
      onBatch: (b) => {
        if (b.status !== 200) this.log.warn(`OTLP receiver: refused a request (${b.status}): ${b.error ?? ''}`);
        else if (b.rejected > 0) this.log.warn(`OTLP receiver: ${counted(b.rejected, 'span')} rejected: ${b.reasons.join('; ')}`);
        if (b.status === 200 && b.spans > 0) this.noteChange(undefined);
        onBatch?.(b);
      },
    });
    this.log.info(`OTLP receiver: listening at ${this.receiver.url}, storing into ${this.path}.`);
    return this.receiver.url;
  }

  /**
   * Whether the receiver may listen on `host`: always on loopback; on an address other machines can reach (they could
   * send spans unauthenticated into the user's store) only once the user said yes to that address, asked once.
   */
  private async hostAllowed(host: string): Promise<boolean> {
    if (isLoopbackHost(host)) return true;
    const allowed = this.consent.get<string[]>(RECEIVER_HOSTS_KEY, []);
    if (allowed.includes(host)) return true;
    const listen = vscode.l10n.t('Listen on {0}', host);
    const answer = await showWarningNotice(
      vscode.l10n.t('Let the OTLP trace receiver listen on {0}?', host),
      {
        modal: true,
        detail: vscode.l10n.t(
          'Other machines that can reach this address could send spans into your trace store, unauthenticated. The setting agentSessions.traces.receiver.host asks for it; 127.0.0.1 keeps the receiver to this machine.',
        ),
      },
      listen,
    );
    if (answer !== listen) return false;
    await this.consent.update(RECEIVER_HOSTS_KEY, [...allowed, host].slice(-MAX_REMEMBERED_HOSTS));
    return true;
  }

  async stopReceiver(): Promise<boolean> {
    const r = this.receiver;
    this.receiver = undefined;
    this.bySetting = false;
    if (!r) return false;
    await r.close();
    this.log.info('OTLP receiver: stopped.');
    return true;
  }

  /** Follows `agentSessions.traces.receiver.enabled`: at start-up and when it changes. */
  async applyReceiverSetting(): Promise<void> {
    if (setting(Setting.tracesReceiverEnabled)) {
      await this.startOrReport();
      this.bySetting = this.receiver !== undefined;
    } else await this.stopReceiver();
  }

  private async startOrReport(): Promise<void> {
    try {
      await this.startReceiver();
    } catch (err) {
      // The user just said no: telling them it did not start would only repeat their answer.
      if (err instanceof ReceiverHostRefusedError) return void this.log.info(`OTLP receiver: ${err.message}`);
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`OTLP receiver: ${message}`);
      void showErrorNotice(vscode.l10n.t('The OTLP trace receiver could not start: {0}', message));
    }
  }

  /** Adds OTLP JSON files (an exporter's output, `traces export`) to the store. */
  async importFiles(paths: readonly string[]): Promise<IngestResult[]> {
    const store = await this.traces();
    const results: IngestResult[] = [];
    try {
      for (const path of paths) results.push(await store.call('ingestOtlp', await readFile(path), 'json', 'import'));
    } finally {
      if (results.length > 0) this.noteChange(undefined);
    }
    return results;
  }

  /** A session's spans (all its traces) as an OTLP JSON export, and how many traces it holds. */
  async exportSession(sessionId: string): Promise<{ otlp: { resourceSpans: unknown[] }; traces: number; spans: number }> {
    const store = await this.traces();
    const traces = await store.call('tracesOfSession', sessionId);
    const spans = (await Promise.all(traces.map((t) => store.call('spansOfTrace', t.traceId)))).flat();
    return { otlp: exportOtlpJson(spans), traces: traces.length, spans: spans.length };
  }

  /** Removes one session's traces; how many spans went. */
  async clearSession(sessionId: string): Promise<number> {
    const removed = await (await this.traces()).call('clearSession', sessionId);
    this.noteChange(sessionId);
    return removed;
  }

  /** Links a trace to a session's turn by hand (the strongest link: no later span undoes it). */
  async linkTrace(traceId: string, link: { sessionId: string; branchId: string; turnNumber: number }): Promise<void> {
    await (await this.traces()).call('linkTrace', traceId, link);
    this.noteChange(link.sessionId);
  }

  /** Records a change of `sessionId`'s traces (undefined: any session's), told once the burst settles. */
  private noteChange(sessionId: string | undefined): void {
    if (sessionId === undefined || this.pendingChange === 'any') this.pendingChange = 'any';
    else {
      this.pendingChange ??= new Set();
      this.pendingChange.add(sessionId);
    }
    this.changeTimer ??= setTimeout(() => {
      this.changeTimer = undefined;
      const pending = this.pendingChange;
      this.pendingChange = undefined;
      if (pending === 'any') this.changeEmitter.fire(undefined);
      else for (const id of pending ?? []) this.changeEmitter.fire(id);
    }, CHANGE_EVERY_MS);
  }

  dispose(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.changeTimer) clearTimeout(this.changeTimer);
    this.changeEmitter.dispose();
    void this.stopReceiver();
    for (const s of this.subscriptions) s.dispose();
  }
}
