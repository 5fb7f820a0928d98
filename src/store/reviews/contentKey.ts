/**
 * What ties review data to a turn or an item when row ids cannot: a digest of the item's content. A session file that
 * is copied, exported and imported, or read from PostgreSQL instead of SQLite keeps its items' content but not its row
 * ids, so a verdict is stored with its turn's key (the user message's) and found again wherever that content is.
 * Keys are of the decoded item with its object keys sorted, so a file written by Python (spaces after separators) and
 * one written by us give the same key.
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted, recursively: one text per value however it was written. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** 32 hex digits (128 bits of SHA-256) of the item's canonical JSON. */
export function contentKey(item: unknown): string {
  return createHash('sha256').update(canonicalJson(item)).digest('hex').slice(0, 32);
}
