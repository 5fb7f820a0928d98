/**
 * What a run produced and left, for people: the items it produced (tracked from its events), the sentence that says
 * what is stored, rolled back or never saved, and its usage summed. Shared by the SDK runner's runs (runSettlement.ts)
 * and agent-command runs (command/commandRun.ts), which settle by the same rules and must say so the same way.
 */
import type { AgentInputItem } from '@openai/agents';
import type { RunPersistenceView, RunUsageView } from '../shared/protocol/runEvents';
import { itemLabel } from '../shared/itemText';
import { isUserMessage, itemKey, type SettleResult } from './runPersistence';
import type { RunReporter } from './runReporter';

/** What the run produced, tracked from its events (to say what was not saved). */
export class Produced {
  items: AgentInputItem[] = [];
  /** Text of the response being streamed, not yet part of a message item. */
  pendingText = '';
  toolNames = new Map<string, string>();
}

/** What the run left, for people (shared with agent-command runs, which settle by the same rules). */
export function persistenceView(args: {
  reporter: Pick<RunReporter, 'branchId' | 'redact'>;
  storeProblems: readonly string[];
  settled: SettleResult;
  produced: Produced;
  turn: number | null;
  usageStored: boolean;
  completed: boolean;
  usage: RunUsageView | null;
  spent: boolean;
  writeFailed: boolean;
  forkDeleted: boolean;
}): RunPersistenceView {
  const { reporter, storeProblems, settled, produced, turn, usageStored, completed, usage, spent, writeFailed, forkDeleted } = args;
  const keptKeys = new Set(settled.kept.map(itemKey));
  const notSaved = produced.items.filter((i) => !keptKeys.has(itemKey(i))).map(itemLabel);
  if (produced.pendingText !== '')
    notSaved.push(`${Array.from(produced.pendingText).length} characters of streamed text (the answer was cut off)`);
  const kept = settled.kept.map(itemLabel);
  const removed = settled.removed.map(itemLabel);
  const branch = `branch '${reporter.branchId}'`;
  const parts: string[] = [];
  if (completed) {
    parts.push(`Saved turn ${turn ?? '?'} on ${branch}: ${kept.length} item(s)${usageStored ? ' and its usage' : ''}.`);
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) left without an output: ${removed.join('; ')}.`);
  } else if (settled.kept.length > 0) {
    const tokens = usage ? `${usage.totalTokens} tokens in ${usage.requests} request(s)` : 'its usage';
    parts.push(
      `Kept your message as turn ${turn ?? '?'} on ${branch}${usageStored ? `, with the usage spent (${tokens})` : ''}${kept.length > 1 ? ` and ${kept.length - 1} more item(s)` : ''}.`,
    );
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) that would leave the turn half-written: ${removed.join('; ')}.`);
  } else if (removed.length > 0) {
    parts.push(
      `Nothing is stored: the SDK had saved your message before calling the model, and it was removed${forkDeleted ? '' : `, so ${branch} is as it was`}.`,
    );
  } else if (writeFailed) {
    parts.push(
      `Nothing was stored: saving the turn failed, so ${branch} is as it was${spent ? ` (the ${usage?.totalTokens ?? 0} tokens spent are not recorded)` : ''}.`,
    );
  } else {
    parts.push(forkDeleted ? 'Nothing was written.' : `Nothing was written; ${branch} is as it was.`);
  }
  if (forkDeleted) {
    parts.push(`The new ${branch} made for this run was deleted again.`);
    removed.push(`branch '${reporter.branchId}' (made for this run)`);
  }
  if (notSaved.length > 0 && !completed) parts.push(`Not saved: ${notSaved.join('; ')}.`);
  if (settled.problem) parts.push(`Could not finish cleaning up: ${settled.problem}.`);
  if (!usageStored && settled.kept.some(isUserMessage) && storeProblems.length > 0) parts.push('The usage could not be stored.');
  return {
    summary: reporter.redact(parts.join(' ')),
    kept: kept.map((l) => reporter.redact(l)),
    removed: removed.map((l) => reporter.redact(l)),
    notSaved: notSaved.map((l) => reporter.redact(l)),
    turn,
    usageStored,
  };
}

/** Sums a run's usage into the view (details are one record per request, with the API's snake_case keys). */
export function usageView(
  usage:
    | {
        requests?: number;
        inputTokens?: number;
        outputTokens?: number;
        totalTokens?: number;
        inputTokensDetails?: unknown;
        outputTokensDetails?: unknown;
      }
    | undefined,
): RunUsageView {
  const sum = (details: unknown, key: string): number =>
    (Array.isArray(details) ? details : details ? [details] : []).reduce((n: number, d: unknown) => {
      const v = typeof d === 'object' && d !== null ? (d as Record<string, unknown>)[key] : undefined;
      return n + (typeof v === 'number' ? v : 0);
    }, 0);
  return {
    requests: usage?.requests ?? 0,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    totalTokens: usage?.totalTokens ?? 0,
    cachedTokens: sum(usage?.inputTokensDetails, 'cached_tokens'),
    reasoningTokens: sum(usage?.outputTokensDetails, 'reasoning_tokens'),
  };
}
