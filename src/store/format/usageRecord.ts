/**
 * Converts a JS `Usage` into the `turn_usage` column values Python writes (spec §9): four scalars and two JSON
 * detail texts with fixed keys in a fixed order, summed over the per-request detail records.
 */
import { InvalidArgumentError } from '../errors';
import { pythonJsonDumps } from './pythonJson';
import type { UsageLike } from '../types';

export interface UsageColumns {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  inputTokensDetails: string;
  outputTokensDetails: string;
}

/**
 * A count as stored: missing or not finite is 0. A negative one is refused: no SDK reports one, the doctor flags such
 * rows and the import refuses them, and every total over the branch would subtract it.
 */
function scalar(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 0;
  if (v < 0) throw new InvalidArgumentError(`usage ${name} must not be negative (got ${v})`);
  return v;
}

function records(details: unknown): Record<string, unknown>[] {
  if (Array.isArray(details)) return details.filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null);
  if (typeof details === 'object' && details !== null) return [details as Record<string, unknown>];
  return [];
}

function sum(details: unknown, key: string): number {
  let total = 0;
  for (const r of records(details)) total += scalar(r[key], key);
  return total;
}

export function usageColumns(usage: UsageLike): UsageColumns {
  // The JS Usage keeps snake_case detail keys (the API's), so read them as such; camelCase is accepted too.
  const input = usage.inputTokensDetails ?? (usage as Record<string, unknown>).input_tokens_details;
  const output = usage.outputTokensDetails ?? (usage as Record<string, unknown>).output_tokens_details;
  return {
    requests: scalar(usage.requests, 'requests'),
    inputTokens: scalar(usage.inputTokens, 'inputTokens'),
    outputTokens: scalar(usage.outputTokens, 'outputTokens'),
    totalTokens: scalar(usage.totalTokens, 'totalTokens'),
    inputTokensDetails: pythonJsonDumps({
      cache_write_tokens: sum(input, 'cache_write_tokens'),
      cached_tokens: sum(input, 'cached_tokens'),
    }),
    outputTokensDetails: pythonJsonDumps({ reasoning_tokens: sum(output, 'reasoning_tokens') }),
  };
}
