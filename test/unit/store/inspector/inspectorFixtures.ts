/**
 * Fixtures for the inspector tests: temp folders, item builders, session files written through the store's own
 * session classes, a model of what was written (so expectations never come from the code under test), and raw
 * access to a file through a separate connection.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import {
  AdvancedSQLiteSession,
  SessionDatabaseError,
  openDatabase,
  openSessionDatabase,
  type AdvancedSQLiteSessionOptions,
  type OpenSessionDatabaseOptions,
  type SessionDatabase,
  type SessionDatabaseProblem,
  type SqliteDatabase,
  type SqlValue,
} from '../../../../src/store';
import { tempDir } from '../../../support/tempFiles';

/** A temp folder; everything opened through it is closed, and the folder removed, by `cleanup()`. */
export class TempFolder {
  private readonly folder = tempDir('asi-inspector-');
  readonly dir = this.folder.dir;
  private readonly closables: { close(): void }[] = [];
  path(name = 'sessions.db'): string {
    return join(this.dir, name);
  }
  track<T extends { close(): void }>(c: T): T {
    this.closables.push(c);
    return c;
  }
  session(options: Partial<AdvancedSQLiteSessionOptions> = {}): AdvancedSQLiteSession {
    return this.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: this.path(), createTables: true, ...options }));
  }
  inspect(path = this.path(), options: OpenSessionDatabaseOptions = {}): SessionDatabase {
    return this.track(openSessionDatabase(path, options));
  }
  raw(path = this.path()): SqliteDatabase {
    return this.track(openDatabase(path));
  }
  cleanup(): void {
    for (const c of this.closables.reverse()) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
    this.folder.cleanup();
  }
}

export const mk = {
  user: (text: string): AgentInputItem => ({ role: 'user', content: text }) as unknown as AgentInputItem,
  system: (text: string): AgentInputItem => ({ role: 'system', content: text }) as unknown as AgentInputItem,
  assistant: (text: string): AgentInputItem =>
    ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] }) as unknown as AgentInputItem,
  call: (name: string, callId: string): AgentInputItem =>
    ({ type: 'function_call', name, call_id: callId, arguments: '{}' }) as unknown as AgentInputItem,
  output: (callId: string): AgentInputItem =>
    ({ type: 'function_call_output', call_id: callId, output: 'ok' }) as unknown as AgentInputItem,
};

/** What a written item should look like to the inspector. */
export interface ModelItem {
  item: AgentInputItem;
  /** The turn it was written in (0 before the first user item). */
  turn: number;
  type: string;
  toolName: string | null;
}

/**
 * A model of one session's branches, maintained next to the real session: it applies the spec's rules (§7 turn
 * numbering, §8.3 prefix copying) to what the test writes, so expected results come from the writes themselves.
 */
export class SessionModel {
  readonly branches = new Map<string, ModelItem[]>([['main', []]]);
  /** Order in which branches got their first row. */
  readonly creationOrder: string[] = [];
  /** Items handed to addItems (= message rows), per session. */
  messageCount = 0;
  current = 'main';
  constructor(readonly session: AdvancedSQLiteSession) {}

  async add(...items: AgentInputItem[]): Promise<void> {
    await this.session.addItems(items);
    const list = this.branch(this.current);
    if (list.length === 0 && !this.creationOrder.includes(this.current)) this.creationOrder.push(this.current);
    let turn = list.reduce((m, i) => Math.max(m, i.turn), 0);
    for (const item of items) {
      const rec = item as unknown as Record<string, unknown>;
      const type =
        rec.role === 'user' ? 'user' : rec.role === 'assistant' ? 'assistant' : typeof rec.type === 'string' ? rec.type : 'other';
      if (type === 'user') turn++;
      const toolName = type === 'function_call' ? String(rec.name) : null;
      list.push({ item, turn, type, toolName });
    }
    this.messageCount += items.length;
  }

  /** Branches the current branch from `turn` and records the copied prefix. */
  async branchFrom(turn: number, name: string): Promise<ModelItem[]> {
    assert.equal(await this.session.createBranchFromTurn(turn, name), name);
    const prefix = this.branch(this.current).filter((i) => i.turn < turn);
    this.branches.set(name, [...prefix]);
    if (prefix.length > 0) this.creationOrder.push(name);
    this.current = name;
    return prefix;
  }

  async switchTo(name: string): Promise<void> {
    await this.session.switchToBranch(name);
    this.current = name;
  }

  branch(name: string): ModelItem[] {
    const b = this.branches.get(name);
    if (!b) throw new Error(`no branch ${name} in the model`);
    return b;
  }

  userTurns(name: string): number {
    return this.branch(name).filter((i) => i.type === 'user').length;
  }
}

export function usage(requests: number, inputTokens: number, outputTokens: number) {
  return { state: { usage: { requests, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } } };
}

/** Runs SQL on a separate, short-lived connection. */
export function sql<T = Record<string, unknown>>(path: string, text: string, ...params: SqlValue[]): T[] {
  const db = openDatabase(path);
  try {
    const stmt = db.prepare(text);
    return /^\s*(SELECT|PRAGMA|WITH)/i.test(text) ? stmt.all<T>(...params) : (stmt.run(...params), []);
  } finally {
    db.close();
  }
}

export function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Size of a file, or undefined when it does not exist. */
export function sizeOf(path: string): number | undefined {
  return existsSync(path) ? statSync(path).size : undefined;
}

/** Asserts that `fn` throws a `SessionDatabaseError` with `problem`, and returns it for more checks. */
export function expectDatabaseError(fn: () => unknown, problem: SessionDatabaseProblem): SessionDatabaseError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof SessionDatabaseError, `expected SessionDatabaseError(${problem}), got ${String(caught)}`);
  assert.equal(caught.problem, problem, caught.message);
  return caught;
}

/**
 * The branching scenario most tests share, on session `branched`:
 * - main: turn 1 (user, assistant), turn 2 (user, call, output, assistant; usage 10/5), turn 3, turn 4 (usage 30/10)
 * - alt: from main at turn 3, then turns 3 and 4 of its own
 * - sub: from alt at turn 4, then turn 4 of its own
 * - fresh: from main at turn 1 (nothing copied), then turn 1 of its own
 * - late: from alt at turn 2 (copies main's turn 1 only), then turn 2 of its own
 * plus session `other` (one turn, no usage).
 */
export async function writeBranchedFile(folder: TempFolder, path = folder.path()): Promise<SessionModel> {
  const m = new SessionModel(folder.session({ sessionId: 'branched', dbPath: path }));
  await m.add(mk.user('main turn 1'), mk.assistant('answer 1'));
  await m.add(mk.user('main turn 2'), mk.call('get_weather', 'c1'), mk.output('c1'), mk.assistant('answer 2'));
  await m.session.storeRunUsage(usage(1, 10, 5));
  await m.add(mk.user('main turn 3'), mk.assistant('answer 3'));
  await m.add(mk.user('main turn 4'), mk.assistant('answer 4'));
  await m.session.storeRunUsage(usage(2, 30, 10));
  await m.branchFrom(3, 'alt');
  await m.add(mk.user('alt turn 3'), mk.assistant('alt answer 3'));
  await m.add(mk.user('alt turn 4'), mk.assistant('alt answer 4'));
  await m.branchFrom(4, 'sub');
  await m.add(mk.user('sub turn 4'), mk.assistant('sub answer 4'));
  await m.switchTo('main');
  await m.branchFrom(1, 'fresh');
  await m.add(mk.user('fresh turn 1'), mk.assistant('fresh answer 1'));
  await m.switchTo('alt');
  await m.branchFrom(2, 'late');
  await m.add(mk.user('late turn 2'));
  m.session.close();

  const other = folder.session({ sessionId: 'other', dbPath: path });
  await other.addItems([mk.user('other question'), mk.assistant('other answer')]);
  other.close();
  return m;
}
