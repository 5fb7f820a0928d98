/**
 * Helpers for the agent-runner tests: seeding a session database, reading it back through the store, collecting
 * run events, capturing console output, and writing agent modules that use this checkout's @openai/agents.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, type TurnUsageRow } from '../../../src/store';
import type { RunEvent, RunOutcome } from '../../../src/shared/protocol/runEvents';
import { mk } from '../../support/sessionHelpers';

/** The API key the tests use; no event, message, log line or database byte may contain it. */
export const TEST_KEY = 'sk-loopback-TESTKEY-0123456789abcdefXYZ';

/** Writes `turns` (question, answer) to a new session database, as plain items. */
export async function seedSession(
  dbPath: string,
  turns: [string, string][],
  options: { sessionId?: string; sessionsTable?: string; messagesTable?: string } = {},
): Promise<void> {
  const s = new AdvancedSQLiteSession({
    sessionId: options.sessionId ?? 's1',
    dbPath,
    createTables: true,
    sessionsTable: options.sessionsTable,
    messagesTable: options.messagesTable,
  });
  try {
    for (const [q, a] of turns) await s.addItems([mk.user(q), mk.assistant(a)]);
  } finally {
    s.close();
  }
}

/** What a branch holds, read through a separate read-only session. */
export interface BranchState {
  items: AgentInputItem[];
  byTurns: Map<number | null, { type: string; toolName: string | null }[]>;
  usage: TurnUsageRow[];
  turns: number[];
}

export async function readBranch(
  dbPath: string,
  branchId: string,
  options: { sessionId?: string; sessionsTable?: string; messagesTable?: string } = {},
): Promise<BranchState> {
  const s = new AdvancedSQLiteSession({
    sessionId: options.sessionId ?? 's1',
    dbPath,
    readonly: true,
    sessionsTable: options.sessionsTable,
    messagesTable: options.messagesTable,
  });
  try {
    return {
      items: await s.getItems(undefined, branchId),
      byTurns: await s.getConversationByTurns(branchId),
      usage: await s.getTurnUsage(null, branchId),
      turns: (await s.getConversationTurns(branchId)).map((t) => t.turn),
    };
  } finally {
    s.close();
  }
}

/** Collects a run's events; `outcome()` is the last one, checked to be an outcome. */
export function eventLog(): { events: RunEvent[]; onEvent: (e: RunEvent) => void; kinds: () => string[]; text: () => string } {
  const events: RunEvent[] = [];
  return {
    events,
    onEvent: (e) => void events.push(JSON.parse(JSON.stringify(e)) as RunEvent),
    kinds: () => events.map((e) => e.kind),
    text: () => events.map((e) => (e.kind === 'text/delta' ? e.delta : '')).join(''),
  };
}

/** Asserts the event sequence shape: run/started first, exactly one outcome, last. */
export function assertWellFormed(events: RunEvent[], outcome: RunOutcome): void {
  assert.equal(events[0]?.kind, 'run/started', 'the first event is run/started');
  assert.deepStrictEqual(events[events.length - 1], JSON.parse(JSON.stringify(outcome)), 'the last event is the outcome');
  assert.equal(events.filter((e) => e.kind === 'run/completed' || e.kind === 'run/failed').length, 1, 'exactly one outcome');
  const ids = new Set(events.map((e) => e.runId));
  assert.equal(ids.size, 1, 'one run id');
}

/** Captures console output and stdout/stderr writes until `restore()`. */
export function captureOutput(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const saved = methods.map((m) => console[m]);
  for (const m of methods)
    console[m] = (...args: unknown[]) =>
      void lines.push(
        args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' '),
      );
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (out as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (err as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  return {
    lines,
    restore: () => {
      methods.forEach((m, i) => (console[m] = saved[i] as never));
      process.stdout.write = out;
      process.stderr.write = err;
    },
  };
}

/** The bytes of a database file and its WAL/journal, as latin1 text, for searching. */
export function databaseBytes(dbPath: string): string {
  return ['', '-wal', '-journal', '-shm']
    .map((s) => dbPath + s)
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('\n');
}

/** Absolute paths of this checkout's @openai/agents and zod (CommonJS entries), for modules written to temp folders. */
export const SDK_PATH = require.resolve('@openai/agents');
export const ZOD_PATH = require.resolve('zod');

/** Writes a CommonJS agent module into `dir` and returns its path. `body` sees `Agent`, `tool`, `z`. */
export function writeAgentModule(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `'use strict';\nconst { Agent, tool } = require(${JSON.stringify(SDK_PATH)});\nconst { z } = require(${JSON.stringify(ZOD_PATH)});\n${body}\n`,
  );
  return path;
}
