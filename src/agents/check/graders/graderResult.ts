/**
 * A grader's result as every report shows it: a verdict, a score from 0 to 1 and one bounded line of reason. The
 * reason may quote the agent's answer or a grader program's output, so it is made one line (a report prints one
 * line per case) and cut at `MAX_REASON_CHARS`.
 */
import type { GraderResult } from '../checkTypes';

/** The longest reason kept: 300 characters, enough for a diff line or a judge's sentence, small in a JUnit file. */
export const MAX_REASON_CHARS = 300;

/** `text` on one line (every run of whitespace, line breaks included, as one space), cut at `max` characters with "…". */
export function oneLine(text: string, max = MAX_REASON_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  // Never cut between the halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(flat[max - 2] ?? '') ? max - 2 : max - 1;
  return `${flat.slice(0, end)}…`;
}

/** A quoted excerpt of untrusted text for a reason: JSON-quoted (so its end is visible) and cut at `max`. */
export function quote(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

export function graderResult(grader: string, pass: boolean, score: number, reason: string): GraderResult {
  const bounded = Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : pass ? 1 : 0;
  return { grader, pass, score: bounded, reason: oneLine(reason) };
}
