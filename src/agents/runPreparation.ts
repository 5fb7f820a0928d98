/**
 * Preparing a run, before anything is written: the agent (built, resolved, or failing with a typed reason), the
 * session opened on the source branch, and the fork made when the run starts a new branch. Every failure here becomes
 * an outcome that says nothing was written.
 */
import { existsSync } from 'node:fs';
import type { Agent, ModelProvider } from '@openai/agents';
import { BranchError } from '../store';
import { IN_THREAD_STORE, type RunSession } from './runSession';
import { problemLogger } from './runPersistence';
import type { RunOutcome } from '../shared/protocol/runEvents';
import type { ConfiguredAgent } from './agentConfig';
import type { RunOnBranchOptions } from './runOptions';
import { classify } from './runFailures';
import type { RunReporter } from './runReporter';

/** A run ready to start: the caller closes `session` (and awaits it). */
export interface PreparedRun {
  agent: Agent;
  modelProvider: ModelProvider | undefined;
  endpoint: string | undefined;
  warnings: string[];
  session: RunSession;
  /** What the store logged instead of throwing (`storeRunUsage`), to say the usage was not stored. */
  storeProblems: string[];
}

function isConfiguredAgent(value: Agent | ConfiguredAgent): value is ConfiguredAgent {
  return typeof value === 'object' && value !== null && 'modelProvider' in value && 'agent' in value && 'close' in value;
}

/** The prepared run, or the outcome of a run that failed before writing anything (already reported). */
export async function prepareRun(options: RunOnBranchOptions, reporter: RunReporter): Promise<PreparedRun | RunOutcome> {
  const resolved = await resolveAgent(options, reporter);
  if ('kind' in resolved) return resolved;
  if (options.signal?.aborted) return reporter.failEarly('cancelled', 'The run was cancelled before it started.');
  const opened = await openOnBranch(options, reporter, resolved.endpoint);
  if ('kind' in opened) return opened;
  return { ...resolved, ...opened };
}

type ResolvedAgent = Pick<PreparedRun, 'agent' | 'modelProvider' | 'endpoint' | 'warnings'>;

/** Builds the agent; that may fail (no key, an untrusted workspace, a module or an MCP server). */
async function resolveAgent(options: RunOnBranchOptions, reporter: RunReporter): Promise<ResolvedAgent | RunOutcome> {
  try {
    const source = typeof options.agent === 'function' ? await options.agent() : options.agent;
    if (!isConfiguredAgent(source))
      return { agent: source, modelProvider: options.modelProvider, endpoint: options.endpoint, warnings: [] };
    reporter.secrets.push(...source.secrets);
    return {
      agent: source.agent,
      modelProvider: options.modelProvider ?? source.modelProvider,
      endpoint: options.endpoint ?? source.endpoint,
      warnings: [...source.warnings],
    };
  } catch (err) {
    const c = classify(err, { endpoint: options.endpoint, cancelled: false });
    return reporter.failEarly(c.failure, c.message, c.status);
  }
}

/** Opens the session on the source branch and makes the fork, if any (the reporter's branch becomes the fork). */
async function openOnBranch(
  options: RunOnBranchOptions,
  reporter: RunReporter,
  endpoint: string | undefined,
): Promise<Pick<PreparedRun, 'session' | 'storeProblems'> | RunOutcome> {
  if (!options.createTables && !existsSync(options.dbPath)) return reporter.failEarly('other', `${options.dbPath} does not exist.`);
  const storeProblems: string[] = [];
  const logger = problemLogger(storeProblems, (line) => reporter.log(line));
  let session: RunSession;
  try {
    session = await (options.store ?? IN_THREAD_STORE).openSession({
      sessionId: options.sessionId,
      dbPath: options.dbPath,
      sessionsTable: options.tables?.sessions,
      messagesTable: options.tables?.messages,
      busyTimeoutMs: options.busyTimeoutMs,
      createTables: options.createTables ?? false,
      logger,
    });
  } catch (err) {
    const c = classify(err, { endpoint, cancelled: false });
    return reporter.failEarly(c.failure, c.message, c.status);
  }
  try {
    if ((await session.getCurrentBranchId()) !== reporter.sourceBranch) await session.switchToBranch(reporter.sourceBranch);
    if (options.fork) reporter.forkMade(await session.createBranchFromTurn(options.fork.fromTurn, options.fork.name ?? null));
  } catch (err) {
    await session.close();
    const c = classify(err, { endpoint, cancelled: false });
    const hint =
      err instanceof BranchError && /does not exist/.test(c.message) && reporter.sourceBranch !== 'main'
        ? '. A branch made from turn 1 has no items until its first message is stored; start it with the run (fork) instead.'
        : '';
    return reporter.failEarly(c.failure, c.message + hint, c.status);
  }
  return { session, storeProblems };
}
