import { randomUUID } from 'node:crypto';
import { workerRunStore } from './workerRunStore';
import * as vscode from 'vscode';
import type { AgentConfig, ConfiguredAgent } from '../../agents/agentConfig';
import type { RunInput } from '../../agents/runOptions';
import type { RunnerAgent } from '../../agents/check/checkRun';
import type { RunTracingOptions } from '../../agents/runTracing';
import { AgentsByModel, configForModel } from '../../agents/agentCache';
import { API_KEY_SECRET_ID, resolveApiKey } from '../../agents/apiKey';
import type { UserAgentModuleCache } from '../../agents/userAgentModule';
import type { RunEvent, RunOutcome } from '../../shared/protocol/runEvents';
import type { BranchRef } from '../../shared/protocol/sessionRef';
import { pushBounded } from '../core/boundedList';
import { CommandId, Setting } from '../core/contributions';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { affectsSetting, setting, workspaceTrust } from '../core/settings';
import { UserFacingError } from '../core/userError';
import { errorMessage } from '../../shared/errorMessage';
import { commandModel, runModelLabel, whatIfModelChoices, type RunModelLabel } from '../../shared/whatIfModels';
import type { AgentChoices } from './agentChoices';
import { stopAllCommandProcesses } from '../../agents/command/commandProcess';
import type { ToolsMode } from '../../shared/protocol/replay';
import type { ReplayService } from '../replay/replayService';
import { replayDefaults, runToolsMode, startedRunOf, type StartedRun } from '../replay/replayRecords';

/** How long each stop signal gets when the extension deactivates: VS Code waits a few seconds at most for it. */
const DEACTIVATE_GRACE_MS = 1000;

/** What a run continues: a session's branch, or a new branch forked from one at a turn. */
export interface RunTarget extends BranchRef {
  fork?: { fromTurn: number; name?: string };
  /** Run on this model instead of `agentSessions.agent.model` (a what-if retry with a picked model). */
  model?: string;
  /** The agent (agentChoices.ts ids); default: the one chosen last in this workspace. */
  agent?: string;
  /**
   * What a re-run of a recorded turn (a fork) does with its tool calls, chosen for this run (docs/replay.md); default:
   * `agentSessions.replay.mode`. A run past the recording runs its tools whatever is chosen (replayRecords.ts).
   */
  tools?: { mode: ToolsMode };
}

/**
 * The agents SDK and the modules built on it, loaded on the first run: the SDK takes about a third of a second to
 * load, which would otherwise be paid at every VS Code start (activation is onStartupFinished) by users who only
 * browse. (esbuild keeps dynamically imported modules lazy in the CommonJS bundle.)
 */
async function loadAgents() {
  const [config, run, modules] = await Promise.all([
    import('../../agents/agentConfig'),
    import('../../agents/branchRun'),
    import('../../agents/userAgentModule'),
  ]);
  return {
    createConfiguredAgent: config.createConfiguredAgent,
    runOnBranch: run.runOnBranch,
    UserAgentModuleCache: modules.UserAgentModuleCache,
  };
}

/**
 * Agent-command runs need no SDK: their module is loaded on its own, on the first such run. Their processes are
 * started on a thread of their own from then on (src/agents/command/launcher.ts), so a spawn never stalls the host.
 */
async function loadCommandRun() {
  const [run, launcher] = await Promise.all([import('../../agents/command/commandRun'), import('../../agents/command/launcher')]);
  launcher.useLauncherThread();
  return run.runCommandOnBranch;
}

/** The agent-command module and the event schemas its runs check every event against, loaded ahead of a first run. */
async function loadCommandRunAndSchemas(): Promise<void> {
  await loadCommandRun();
  (await import('../../agents/command/agUiEvents')).loadEventSchemas();
}

/** The models a what-if run offers: the configured one first, then `agentSessions.agent.models`. */
export function readWhatIfModels(): string[] {
  return whatIfModelChoices(setting(Setting.agentModel), setting(Setting.agentModels));
}

/** Reads the `agentSessions.agent.*` settings; the trusted-only ones (core/trustedSettings.ts) from the user alone in an untrusted workspace. */
export function readAgentConfig(): AgentConfig {
  const baseUrl = setting(Setting.agentBaseUrl).trim();
  const module = setting(Setting.agentModule).trim();
  const timeout = setting(Setting.agentRequestTimeoutSeconds);
  return {
    model: setting(Setting.agentModel),
    instructions: setting(Setting.agentInstructions),
    baseUrl: baseUrl || undefined,
    mcpServers: setting(Setting.agentMcpServers),
    agentModule: module || undefined,
    maxRetries: setting(Setting.agentMaxRetries),
    timeoutMs: timeout > 0 ? timeout * 1000 : undefined,
  };
}

/**
 * Runs agents on branches for the extension: builds the configured agent (cached until settings, trust or the key
 * change), resolves the key from secret storage or OPENAI_API_KEY, runs one run per branch at a time, and cancels
 * on request. The key is only ever handed to the OpenAI client: logs and messages are redacted.
 */
export class AgentRunner implements vscode.Disposable {
  /** One agent per model a run asked for (each with its own client and MCP servers), for the current settings. */
  private readonly configured = new AgentsByModel();
  private modules: UserAgentModuleCache | undefined;
  private commandRunLoading = false;
  private readonly runs = new Map<string, AbortController>();
  private readonly subscriptions: vscode.Disposable[] = [];
  readonly log = vscode.window.createOutputChannel('Agent Sessions: Agent Runs');
  /** The newest lines written to the log (already redacted), so tests can check no secret reaches it. */
  readonly logLines: string[] = [];

  constructor(
    private readonly registry: DatabaseRegistry,
    private readonly secrets: vscode.SecretStorage,
    /** The agents a run can use, and the last run of each command. */
    readonly choices: AgentChoices,
    /** How our runs are traced (traces/traceService.ts), read at each run: the setting may change. */
    private readonly tracing: () => RunTracingOptions | undefined = () => undefined,
    /** Where runs keep what they did with their tool calls, and the tools defaults (replay/replayService.ts). */
    private readonly replay?: ReplayService,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e, Setting.agent)) void this.invalidate();
      }),
      workspaceTrust.onDidChange(() => void this.invalidate()),
      secrets.onDidChange((e) => {
        if (e.key === API_KEY_SECRET_ID) void this.invalidate();
      }),
      this.log,
      choices.onDidChange(() => this.preloadCommandRun()),
    );
    this.preloadCommandRun();
  }

  /**
   * Loads the agent-command module and AG-UI's event schemas (about 170 ms) shortly after start when a command is
   * configured, so the first run's click does not pay for them. The module alone no longer loads the schemas (a run
   * loads them right after its spawn, issue 43): without them here, the first run would compile them on the host's
   * thread while its agent starts. Browsing-only users, without commands, never load either.
   */
  private preloadCommandRun(): void {
    if (this.commandRunLoading || !this.choices.view().choices.some((c) => c.kind !== 'builtin')) return;
    this.commandRunLoading = true;
    setTimeout(() => void loadCommandRunAndSchemas().catch(() => (this.commandRunLoading = false)), 2000).unref?.();
  }

  /** Stores (or with an empty value deletes) the API key in VS Code's secret storage. */
  async setApiKey(key: string): Promise<void> {
    if (key.trim() === '') await this.secrets.delete(API_KEY_SECRET_ID);
    else await this.secrets.store(API_KEY_SECRET_ID, key.trim());
    await this.invalidate();
  }

  /** Forgets every cached agent and closes them (their MCP servers). */
  private async invalidate(): Promise<void> {
    this.modules?.clear();
    await this.configured.clear();
  }

  /** The models that have an agent built or being built (for tests: one per model, none after a settings change). */
  get cachedModels(): string[] {
    return this.configured.models;
  }

  /** The agent for runs on `model` (default: the configured one), built once per model until the settings change. */
  private async agent(model?: string): Promise<ConfiguredAgent> {
    const settings = readAgentConfig();
    const stored = await this.secrets.get(API_KEY_SECRET_ID);
    // Throws NoApiKeyError with the remedy; runOnBranch reports it as a 'no-key' failure.
    const { key } = resolveApiKey({ stored, baseUrl: settings.baseUrl });
    const trusted = workspaceTrust.isTrusted;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const cacheKey = JSON.stringify([settings, trusted, folder, key.length, key.slice(-4)]);
    return this.configured.get(cacheKey, configForModel(settings, model), async (config) => {
      const { createConfiguredAgent, UserAgentModuleCache } = await loadAgents();
      this.modules ??= new UserAgentModuleCache();
      return createConfiguredAgent(config, key, { trusted, cwd: folder, allowedRoot: folder, moduleCache: this.modules });
    });
  }

  /** The database's tables when runs can write to it; otherwise a UserFacingError that says why not. */
  checkCanRun(dbPath: string): { sessions: string; messages: string } {
    const entry = this.registry.require(dbPath);
    if (entry.readonly)
      throw new UserFacingError(vscode.l10n.t('This database is open read-only; runs would write to it. Use "Toggle Read-Only" first.'));
    const tables = entry.db?.tables;
    if (!tables?.messageStructure || !tables.sessions)
      throw new UserFacingError(vscode.l10n.t('This file has no branch tables; agents can only continue AdvancedSQLiteSession files.'));
    return { sessions: tables.sessions, messages: tables.messages };
  }

  /**
   * What a run needs that is knowable before it starts: a writable file with branch tables (`checkCanRun`) and a key
   * for the configured server. Throws a UserFacingError that says what is missing, so nothing is forked, switched or
   * shown as started for a run that could never begin.
   */
  async checkCanStart(dbPath: string, agent?: string): Promise<void> {
    this.checkCanRun(dbPath);
    // The user's own agent brings its own key (ours is passed on when there is one): nothing more to check here.
    if (this.choices.resolve(agent).kind === 'external') return;
    const stored = await this.secrets.get(API_KEY_SECRET_ID);
    try {
      resolveApiKey({ stored, baseUrl: readAgentConfig().baseUrl });
    } catch (err) {
      throw new UserFacingError(errorMessage(err), { title: vscode.l10n.t('Set API Key'), command: CommandId.setApiKey });
    }
  }

  /** How a run on `model` through `agent` is labelled: an agent command on its own model is not named after ours. */
  modelLabel(model: string, agent?: string): RunModelLabel {
    return runModelLabel(model, setting(Setting.agentModel), this.choices.resolve(agent).kind === 'external');
  }

  /** Starts a run; resolves with its outcome. Events (text deltas, tool calls, …) go to `onEvent` as they happen. */
  async run(target: RunTarget, input: RunInput, onEvent: (e: RunEvent) => void, runId: string = randomUUID()): Promise<RunOutcome> {
    const tables = this.checkCanRun(target.dbPath);
    if (typeof input === 'string' ? input.trim() === '' : input.length === 0)
      throw new UserFacingError(vscode.l10n.t('The message is empty.'));
    const resolved = this.choices.resolve(target.agent);
    const controller = new AbortController();
    this.runs.set(runId, controller);
    const log = (line: string) => {
      pushBounded(this.logLines, line);
      this.log.appendLine(line);
    };
    // Read at each run: the settings may change. A fork re-runs a recorded turn; anything else runs its tools.
    const defaults = this.replay?.defaults() ?? replayDefaults(undefined, undefined);
    const tools = { mode: runToolsMode(target.fork !== undefined, target.tools?.mode, defaults), nameOnly: defaults.nameOnly };
    // The branch the run writes to is known once it started (a fork's new branch): the marks are kept under it.
    let started: StartedRun | undefined;
    const events = (e: RunEvent) => {
      started ??= startedRunOf(e);
      onEvent(e);
    };
    try {
      const outcome = await this.runWith(target, input, resolved, {
        tables,
        tools,
        signal: controller.signal,
        onEvent: events,
        runId,
        log,
      });
      await this.replay?.record(target.dbPath, started, outcome);
      return outcome;
    } finally {
      this.runs.delete(runId);
      await this.registry.checkNow(target.dbPath);
    }
  }

  /** The run itself, through the agent command or the SDK's runner. */
  private async runWith(
    target: RunTarget,
    input: RunInput,
    resolved: ReturnType<AgentChoices['resolve']>,
    run: {
      tables: { sessions: string; messages: string };
      tools: { mode: ToolsMode; nameOnly: string[] };
      signal: AbortSignal;
      onEvent: (e: RunEvent) => void;
      runId: string;
      log: (line: string) => void;
    },
  ): Promise<RunOutcome> {
    const { tables, tools, signal, onEvent, runId, log } = run;
    if (resolved.kind === 'external') {
      const runCommandOnBranch = await loadCommandRun();
      const timeout = setting(Setting.agentCommandTimeoutSeconds);
      const outcome = await runCommandOnBranch({
        dbPath: target.dbPath,
        sessionId: target.sessionId,
        branchId: target.branchId,
        fork: target.fork,
        tables,
        agent: resolved.agent,
        input,
        model: commandModel(target.model, setting(Setting.agentModel)),
        apiKey: (await this.secrets.get(API_KEY_SECRET_ID)) || undefined,
        timeoutMs: timeout > 0 ? timeout * 1000 : undefined,
        signal,
        tools,
        onEvent,
        runId,
        log,
        store: workerRunStore(this.registry.store),
        tracing: this.tracing(),
      });
      this.choices.recordEnd(resolved.id, outcome);
      return outcome;
    }
    const { runOnBranch } = await loadAgents();
    return await runOnBranch({
      dbPath: target.dbPath,
      sessionId: target.sessionId,
      branchId: target.branchId,
      fork: target.fork,
      tables: { sessions: tables.sessions, messages: tables.messages },
      agent: () => this.agent(target.model),
      input,
      signal,
      tools,
      onEvent,
      runId,
      log,
      store: workerRunStore(this.registry.store),
      tracing: this.tracing(),
    });
  }

  /**
   * The built-in agent (or the workspace's agent module) as a check re-runs cases through it (docs/check.md, "In VS
   * Code"): the SDK's runner in this host with the configured model, endpoint and key, on the check's scratch file,
   * its sessions in the store worker (`request.store`). A case is not a run of the workspace: it is neither traced
   * nor recorded in the replay marks (its scratch file is gone when it ends), and it does not count as one of `runs`
   * (the check's own Cancel stops it through `request.signal`).
   */
  checkAgent(): RunnerAgent {
    return {
      kind: 'runner',
      name: 'built-in',
      run: async (request) => {
        const { runOnBranch } = await loadAgents();
        return runOnBranch({
          dbPath: request.dbPath,
          sessionId: request.sessionId,
          branchId: request.branchId,
          fork: request.fork,
          tables: request.tables,
          agent: () => this.agent(),
          // The case's user message, as the what-if input makes it from the stored item.
          input: request.input as RunInput,
          signal: request.signal,
          tools: request.tools,
          onEvent: request.onEvent,
          runId: request.runId,
          log: request.log,
          store: request.store ?? workerRunStore(this.registry.store),
        });
      },
    };
  }

  /** Cancels a run; false when it already ended. */
  stop(runId: string): boolean {
    const c = this.runs.get(runId);
    if (!c) return false;
    c.abort();
    return true;
  }

  /**
   * Stops every run and, whatever their settlement does meanwhile, every agent command's process group: SIGINT,
   * SIGTERM and SIGKILL a short grace apart, so no agent outlives the extension (its deactivate awaits this).
   */
  async stopAll(): Promise<void> {
    for (const c of this.runs.values()) c.abort();
    await stopAllCommandProcesses(DEACTIVATE_GRACE_MS);
  }

  dispose(): void {
    for (const c of this.runs.values()) c.abort();
    // The host may end before the escalation's timers fire: its exit kills what is left (commandProcess.ts).
    void stopAllCommandProcesses(DEACTIVATE_GRACE_MS);
    for (const d of this.subscriptions) d.dispose();
    void this.invalidate();
  }
}
