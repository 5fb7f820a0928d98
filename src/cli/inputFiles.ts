/**
 * Whole-file inputs of the CLI (a review export, a dataset to check, a tool list, an OTLP JSON file), read only within
 * a bound: each is parsed in one piece, and a file far larger than any such input could be would otherwise take the
 * memory of several copies of itself before failing (store package README, "Command line").
 */
import { readFileSync, statSync } from 'node:fs';
import { TRACE_LIMITS } from '../store/traces/otlpSpans';
import { BadInputError, NotFoundError } from './exitCodes';

const MiB = 1024 * 1024;

/** The bounds, by what the file is. */
export const INPUT_FILE_BOUNDS = {
  /** A review export: 64 MiB holds hundreds of thousands of verdicts (a note is at most 10,000 characters). */
  reviews: 64 * MiB,
  /** A JSONL dataset to check: OpenAI's upload limit for a fine-tuning file is 512 MB. */
  dataset: 512 * MiB,
  /** A JSON list of tool definitions for `dataset --tools`. */
  tools: 16 * MiB,
  /** An OTLP JSON file for `traces import`: the receiver's bound on a request's body (`TRACE_LIMITS.maxBodyBytes`). */
  otlp: TRACE_LIMITS.maxBodyBytes,
} as const;

/** The text of `path`, refused (exit 4) past `bound` bytes and (exit 3) when it is not there. */
export function readInputText(path: string, kind: keyof typeof INPUT_FILE_BOUNDS): string {
  const bound = INPUT_FILE_BOUNDS[kind];
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new NotFoundError(`${path} does not exist.`);
  if (!st.isFile()) throw new BadInputError(`${path} is not a file.`);
  if (st.size > bound) {
    throw new BadInputError(
      `${path} is ${(st.size / MiB).toFixed(1)} MiB; ${KIND_NAMES[kind]} may be at most ${bound / MiB} MiB (the bound of this input).`,
    );
  }
  return readFileSync(path, 'utf8');
}

const KIND_NAMES: Record<keyof typeof INPUT_FILE_BOUNDS, string> = {
  reviews: 'a review export',
  dataset: 'a dataset file to check',
  tools: 'a tool list',
  otlp: 'an OTLP JSON file',
};
