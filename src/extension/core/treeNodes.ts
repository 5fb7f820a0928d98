/**
 * The tree's nodes: plain data naming what they stand for, so command arguments from menus can be validated and
 * ids stay stable across refreshes (expansion and selection survive).
 */

export interface DatabaseNode {
  kind: 'database';
  dbPath: string;
}
export interface SessionNode {
  kind: 'session';
  dbPath: string;
  sessionId: string;
}
export interface BranchNodeRef {
  kind: 'branch';
  dbPath: string;
  sessionId: string;
  branchId: string;
}
export interface TurnNode {
  kind: 'turn';
  dbPath: string;
  sessionId: string;
  branchId: string;
  /** `user_turn_number`: the turn's key. */
  turn: number;
  /** `branch_turn_number`: what `createBranchFromTurn` takes. */
  branchTurnNumber: number | null;
}
export interface ItemNode {
  kind: 'item';
  dbPath: string;
  sessionId: string;
  branchId: string;
  turn: number;
  sequenceNumber: number;
}
/** "Show more": the next page of a branch's turns (up to `untilTurn`, where the latest turns' node takes over). */
export interface MoreTurnsNode {
  kind: 'moreTurns';
  dbPath: string;
  sessionId: string;
  branchId: string;
  afterTurn: number;
  untilTurn?: number;
}

/** "Latest turns": a long branch's last page of turns, from `fromTurn`, one click from the branch. */
export interface LatestTurnsNode {
  kind: 'latestTurns';
  dbPath: string;
  sessionId: string;
  branchId: string;
  fromTurn: number;
}

/** "Load more": the next page of a server store's sessions (`cursor` from the page before). */
export interface MoreSessionsNode {
  kind: 'moreSessions';
  dbPath: string;
  cursor: string;
}

export type TreeNode =
  DatabaseNode | SessionNode | BranchNodeRef | TurnNode | ItemNode | MoreTurnsNode | LatestTurnsNode | MoreSessionsNode;

/** A stable id: the same node gets the same id after every refresh. */
export function nodeId(node: TreeNode): string {
  switch (node.kind) {
    case 'database':
      return JSON.stringify(['db', node.dbPath]);
    case 'session':
      return JSON.stringify(['s', node.dbPath, node.sessionId]);
    case 'branch':
      return JSON.stringify(['b', node.dbPath, node.sessionId, node.branchId]);
    case 'turn':
      return JSON.stringify(['t', node.dbPath, node.sessionId, node.branchId, node.turn]);
    case 'item':
      return JSON.stringify(['i', node.dbPath, node.sessionId, node.branchId, node.turn, node.sequenceNumber]);
    case 'moreTurns':
      return JSON.stringify(['m', node.dbPath, node.sessionId, node.branchId, node.afterTurn, node.untilTurn ?? null]);
    case 'latestTurns':
      return JSON.stringify(['l', node.dbPath, node.sessionId, node.branchId, node.fromTurn]);
    case 'moreSessions':
      return JSON.stringify(['ms', node.dbPath, node.cursor]);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * Narrows a command argument (menus pass them untyped) to a node of one of `kinds`, or undefined. Every field the
 * kind needs must be present with the right type, so a stray argument can never reach the store.
 */
export function asNode<K extends TreeNode['kind']>(value: unknown, ...kinds: K[]): Extract<TreeNode, { kind: K }> | undefined {
  if (!isObj(value) || !kinds.includes(value.kind as K) || !isStr(value.dbPath)) return undefined;
  const ok = (() => {
    switch (value.kind) {
      case 'database':
        return true;
      case 'session':
        return isStr(value.sessionId);
      case 'branch':
        return isStr(value.sessionId) && typeof value.branchId === 'string';
      case 'turn':
        return (
          isStr(value.sessionId) &&
          typeof value.branchId === 'string' &&
          isInt(value.turn) &&
          (value.branchTurnNumber === null || isInt(value.branchTurnNumber))
        );
      case 'item':
        return isStr(value.sessionId) && typeof value.branchId === 'string' && isInt(value.turn) && isInt(value.sequenceNumber);
      case 'moreTurns':
        return (
          isStr(value.sessionId) &&
          typeof value.branchId === 'string' &&
          isInt(value.afterTurn) &&
          (value.untilTurn === undefined || isInt(value.untilTurn))
        );
      case 'latestTurns':
        return isStr(value.sessionId) && typeof value.branchId === 'string' && isInt(value.fromTurn);
      case 'moreSessions':
        return isStr(value.cursor);
      default:
        return false;
    }
  })();
  return ok ? (value as unknown as Extract<TreeNode, { kind: K }>) : undefined;
}
