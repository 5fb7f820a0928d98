/**
 * Preparing a run, before anything is written: the agent (built, resolved, or failing with a typed reason), then the
 * session opened on the source branch and the fork made, as for every kind of run (branchOpening.ts). Every failure
 * here becomes an outcome that says nothing was written.
 */
import type { Agent, ModelProvider } from '@openai/agents';
import type { RunSession } from './runSession';
import { openOnBranch, type RecordedTurn } from './branchOpening';
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
  /** The turn a fork re-runs, read with the fork (what replay uses); null without a fork. */
  recordedTurn: RecordedTurn | null;
}

function isConfiguredAgent(value: Agent | ConfiguredAgent): value is ConfiguredAgent {
  return typeof value === 'object' && value !== null && 'modelProvider' in value && 'agent' in value && 'close' in value;
}

/** The prepared run, or the outcome of a run that failed before writing anything (already reported). */
export async function prepareRun(options: RunOnBranchOptions, reporter: RunReporter): Promise<PreparedRun | RunOutcome> {
  const resolved = await resolveAgent(options, reporter);
  if ('kind' in resolved) return resolved;
  const opened = await openOnBranch({ ...options, readRecordedTurn: options.fork !== undefined }, reporter, {
    classify: (err) => classify(err, { endpoint: resolved.endpoint, cancelled: false }),
    agentMakesTurnOneFork: false,
  });
  if ('kind' in opened) return opened;
  return { ...resolved, session: opened.session, storeProblems: opened.storeProblems, recordedTurn: opened.recordedTurn };
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
