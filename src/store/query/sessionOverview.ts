/**
 * A session as one readable document (an MCP resource's contents): its branch tree, then the first turns of its
 * main branch, bounded like any answer, with the tool calls that read the rest.
 */
import { branchTree } from './sessionQueries';
import { readTurns } from './turnQueries';
import type { QueryStore } from './queryStore';

export async function sessionOverview(store: QueryStore, sessionId: string, signal?: AbortSignal): Promise<string> {
  const tree = await branchTree(store, { session: sessionId }, signal);
  if (tree.source.sessionId === undefined || /has no items yet/.test(tree.text)) return tree.text;
  const turns = await readTurns(store, { session: sessionId, maxChars: 12_000 }, signal);
  return `${tree.text}\n${turns.text}`;
}
