/**
 * Argument checks and fingerprints for the SDK's optional history capabilities (`applyHistoryMutations`,
 * `applyHistoryTransaction`), with the semantics of the SDK's own `MemorySession`, made durable: applied operation ids
 * live in a table of ours (docs/session-format.md §14; historyOperations.ts), so a run resumed in another process
 * does not apply a write twice. Python ignores the extra table.
 */
import type { AgentInputItem } from '@openai/agents';
import { InvalidArgumentError, SessionError } from '../errors';
import { fromStoredItems, toStoredItem } from '../format/itemShape';

/** A history transaction that cannot be applied: its id was used for another change, or the suffix moved. Nothing changed. */
export class HistoryConflictError extends SessionError {
  override readonly pythonType = 'ValueError';
}

export type CheckedTransaction =
  | { type: 'append_items'; items: AgentInputItem[] }
  | { type: 'replace_suffix'; expectedSuffix: AgentInputItem[]; replacement: AgentInputItem[] };

export interface CheckedOperation {
  operationId: string;
  transaction: CheckedTransaction;
  /** Key-order-independent JSON of the transaction in stored shape: equal for a retry of the same change. */
  fingerprint: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function itemList(value: unknown, what: string): AgentInputItem[] {
  if (!Array.isArray(value) || !value.every(isPlainObject)) {
    throw new InvalidArgumentError(`Session history transaction ${what} must be an array of item objects`);
  }
  return value as AgentInputItem[];
}

/** JSON with object keys sorted at every level: what two structurally equal values share. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Items in the form stored rows compare in: stored shape, read back and stored again (drops JS-only metadata). */
export function comparableItems(storedItems: readonly unknown[]): string {
  return canonicalJson(fromStoredItems(storedItems).map((item) => toStoredItem(item)));
}

export function checkHistoryTransaction(args: unknown): CheckedOperation {
  if (!isPlainObject(args)) throw new InvalidArgumentError('Session history transaction arguments must be an object');
  const { operationId, transaction } = args;
  if (typeof operationId !== 'string' || operationId.trim() === '') {
    throw new InvalidArgumentError('Session history transaction operationId must be a non-empty string');
  }
  if (!isPlainObject(transaction)) throw new InvalidArgumentError('Session history transaction must be an object');
  let checked: CheckedTransaction;
  if (transaction.type === 'append_items') {
    checked = { type: 'append_items', items: itemList(transaction.items, 'items') };
  } else if (transaction.type === 'replace_suffix') {
    checked = {
      type: 'replace_suffix',
      expectedSuffix: itemList(transaction.expectedSuffix, 'expectedSuffix'),
      replacement: itemList(transaction.replacement, 'replacement'),
    };
  } else {
    throw new InvalidArgumentError(`Unsupported session history transaction type: ${JSON.stringify(transaction.type)}`);
  }
  const stored = (items: AgentInputItem[]) => items.map((item) => toStoredItem(item));
  const fingerprint =
    checked.type === 'append_items'
      ? canonicalJson({ type: checked.type, items: stored(checked.items) })
      : canonicalJson({ type: checked.type, expectedSuffix: stored(checked.expectedSuffix), replacement: stored(checked.replacement) });
  return { operationId, transaction: checked, fingerprint };
}

export interface CheckedMutation {
  callId: string;
  replacement: AgentInputItem;
}

export function checkHistoryMutations(args: unknown): CheckedMutation[] {
  const mutations = isPlainObject(args) ? args.mutations : undefined;
  if (!Array.isArray(mutations)) throw new InvalidArgumentError('Session history mutations must be an array');
  return mutations.map((m: unknown) => {
    if (!isPlainObject(m) || m.type !== 'replace_function_call') {
      throw new InvalidArgumentError(`Unsupported session history mutation: ${JSON.stringify(isPlainObject(m) ? m.type : m)}`);
    }
    if (typeof m.callId !== 'string' || !isPlainObject(m.replacement) || m.replacement.type !== 'function_call') {
      throw new InvalidArgumentError('A replace_function_call mutation needs a callId and a function_call replacement');
    }
    return { callId: m.callId, replacement: m.replacement as AgentInputItem };
  });
}
