/**
 * The scale benchmark's session files (issue 13), written with direct SQL in the store's exact format, fast:
 *
 * - A: one session, 100,000 turns (400,000 items) on `main` and 5 branches forked at various turns, one of them from
 *   another branch (about 1.4 M structure rows);
 * - B: 2,000 sessions × 50 turns, written turn by turn across the sessions (as concurrent agents would);
 * - C: one session, 250,000 turns (1,000,000 items), about 1.2 GB;
 * - L: one session, 100,000 turns on `main` and 5 long-lived branches forked early (at 1 %, 2 %, 5 % and 10 % of main,
 *   and one from inside the first's own turns), each with 1,000 turns of its own: the Tokens and Tools tabs of a
 *   branch whose own history is long (A's branches have 200 own turns each).
 *
 * `--scale` multiplies the turns (A, C) and the number of sessions (B). The file is created by
 * `new AdvancedSQLiteSession({ createTables: true })` (the DDL is the store's, byte for byte), then filled with prepared
 * statements in big transactions with the journal in memory and `synchronous` off, then switched back to WAL as the
 * store leaves it.
 *
 * What the rows must look like is the store's business: `planOps` describes a file as the calls a program would
 * make (`addItems` + `storeRunUsage` per turn, `createBranchFromTurn`), and test/unit/bench/scaleFiles.test.ts replays
 * a small plan through the store and compares every table with what `writeScaleFile` writes for it, so this file
 * cannot drift from the format. Only `pythonJsonDumps` (the item text) and the store's constructor (the DDL) come from
 * src/store; the numbering and classification rules are written out here again (spec §6–§9).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { AdvancedSQLiteSession, pythonJsonDumps } from '../../src/store';
import type { RunUsageView } from '../../src/shared/protocol/runEvents';

/** Bump whenever the generated content or layout changes: cached files of other versions are not reused. */
export const GENERATOR_VERSION = 2;

export type ScaleFileName = 'A' | 'B' | 'C' | 'L';
export const SCALE_FILE_NAMES: readonly ScaleFileName[] = ['A', 'B', 'C', 'L'];

export interface BranchSpec {
  /** The new branch's id (given explicitly, as `createBranchFromTurn(atTurn, name)`). */
  name: string;
  /** The branch it is created from (the current branch at the time). */
  from: string;
  /** `createBranchFromTurn(atTurn)`: copies the source's rows with `branch_turn_number < atTurn`. */
  atTurn: number;
  /** Turns added on the branch after its creation (numbered atTurn, atTurn + 1, …). */
  ownTurns: number;
}

export interface SessionSpec {
  sessionId: string;
  /** Turns on `main`. */
  turns: number;
  /** Created in this order, after all of `main`'s turns; each gets its own turns before the next one is created. */
  branches: BranchSpec[];
}

export interface FileSpec {
  sessions: SessionSpec[];
  /** True: turn 1 of every session, then turn 2 of every session, …; false: one session after the other. */
  interleave: boolean;
}

/** One call a program would make: a turn (`addItems` of its four items, then `storeRunUsage`), or a branch creation. */
export type PlanOp =
  | { kind: 'turn'; sessionIndex: number; sessionId: string; branch: string; turn: number }
  | { kind: 'branch'; sessionIndex: number; sessionId: string; source: string; name: string; atTurn: number };

// ---------------------------------------------------------------------------------------------------------------
// The three files

const scaled = (n: number, scale: number, min = 1): number => Math.max(min, Math.round(n * scale));

/** The files at `scale` (1 = full size). */
export function scaleFileSpec(name: ScaleFileName, scale: number): FileSpec {
  if (!(scale > 0)) throw new Error(`scale must be positive, got ${scale}`);
  if (name === 'A') {
    const turns = scaled(100_000, scale, 20);
    const at = (fraction: number): number => Math.max(2, Math.round(turns * fraction));
    const own = scaled(200, scale, 2);
    // Forks at 75 %, 45 % and 10 % of main, and two nested ones (from b1 and b2, inside their own turns), so the tree
    // has a branch whose parent is not main.
    const b1 = at(0.75);
    const b2 = at(0.45);
    const branches: BranchSpec[] = [
      { name: 'b1_late', from: 'main', atTurn: b1, ownTurns: own },
      { name: 'b2_middle', from: 'main', atTurn: b2, ownTurns: own },
      { name: 'b3_from_b1', from: 'b1_late', atTurn: b1 + Math.max(1, Math.floor(own / 2)), ownTurns: own },
      { name: 'b4_early', from: 'main', atTurn: at(0.1), ownTurns: own },
      { name: 'b5_from_b2', from: 'b2_middle', atTurn: b2 + Math.max(1, Math.floor(own / 2)), ownTurns: own },
    ];
    return { sessions: [{ sessionId: 'scale-a', turns, branches }], interleave: false };
  }
  if (name === 'B') {
    const count = scaled(2000, scale, 2);
    const sessions = Array.from({ length: count }, (_, i) => ({
      sessionId: `scale-b-${String(i + 1).padStart(5, '0')}`,
      turns: 50,
      branches: [],
    }));
    return { sessions, interleave: true };
  }
  if (name === 'L') {
    const turns = scaled(100_000, scale, 40);
    const at = (fraction: number): number => Math.max(2, Math.round(turns * fraction));
    const own = scaled(1_000, scale, 4);
    const l1 = at(0.01);
    const branches: BranchSpec[] = [
      { name: 'l1_early', from: 'main', atTurn: l1, ownTurns: own },
      { name: 'l2_early', from: 'main', atTurn: at(0.02), ownTurns: own },
      { name: 'l3_from_l1', from: 'l1_early', atTurn: l1 + Math.max(1, Math.floor(own / 2)), ownTurns: own },
      { name: 'l4_early', from: 'main', atTurn: at(0.05), ownTurns: own },
      { name: 'l5_early', from: 'main', atTurn: at(0.1), ownTurns: own },
    ];
    return { sessions: [{ sessionId: 'scale-l', turns, branches }], interleave: false };
  }
  return { sessions: [{ sessionId: 'scale-c', turns: scaled(250_000, scale, 20), branches: [] }], interleave: false };
}

/** The calls that produce the file, in order. */
export function* planOps(spec: FileSpec): Generator<PlanOp> {
  const sessions = spec.sessions;
  if (spec.interleave) {
    const most = Math.max(...sessions.map((s) => s.turns));
    for (let t = 1; t <= most; t++) {
      for (let i = 0; i < sessions.length; i++) {
        const s = sessions[i]!;
        if (t <= s.turns) yield { kind: 'turn', sessionIndex: i, sessionId: s.sessionId, branch: 'main', turn: t };
      }
    }
    for (let i = 0; i < sessions.length; i++) yield* branchOps(sessions[i]!, i);
    return;
  }
  for (let i = 0; i < sessions.length; i++) {
    const s = sessions[i]!;
    for (let t = 1; t <= s.turns; t++) yield { kind: 'turn', sessionIndex: i, sessionId: s.sessionId, branch: 'main', turn: t };
    yield* branchOps(s, i);
  }
}

function* branchOps(s: SessionSpec, sessionIndex: number): Generator<PlanOp> {
  for (const b of s.branches) {
    yield { kind: 'branch', sessionIndex, sessionId: s.sessionId, source: b.from, name: b.name, atTurn: b.atTurn };
    for (let k = 0; k < b.ownTurns; k++) {
      yield { kind: 'turn', sessionIndex, sessionId: s.sessionId, branch: b.name, turn: b.atTurn + k };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Turn content

const WORDS = (
  'agent session branch weather forecast tomorrow paris berlin temperature degrees please summarise report latest ' +
  'numbers quarter revenue compare with last year and the of for a to in is what how why could you check table rows ' +
  'query index result error retry timeout window cache token model reply tool deploy build test review merge plan'
).split(' ');

/** A deterministic LCG. */
function rng(seed: number): () => number {
  let state = (Math.imul(seed | 0, 2654435761) ^ 0x9e3779b9) >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

/** 256 KB of filler words; texts are slices of it, so making them costs nothing per turn. */
const CORPUS: string = (() => {
  const next = rng(7);
  const parts: string[] = [];
  let length = 0;
  while (length < 262_144) {
    const word = WORDS[Math.floor(next() * WORDS.length)]!;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ');
})();

function filler(length: number, next: () => number): string {
  const start = Math.floor(next() * (CORPUS.length - length - 1));
  return CORPUS.slice(start, start + length);
}

const TOOLS = ['get_weather', 'search_docs', 'run_query', 'lookup_account'];

export interface TurnContent {
  /** The turn's items in the Responses shape, as the Python SDK stores them. */
  items: Record<string, unknown>[];
  /** The turn's usage, or null when the agent "never called storeRunUsage" (every 50th turn). */
  usage: RunUsageView | null;
}

/**
 * The four items and the usage of a turn: a user message, a function call, its output, an assistant message
 * (about 1 KB of JSON per item on average, like the files). Deterministic in (session, branch, turn).
 */
export function turnContent(sessionIndex: number, branch: string, turn: number): TurnContent {
  let branchSalt = 0;
  for (let i = 0; i < branch.length; i++) branchSalt = (Math.imul(branchSalt, 31) + branch.charCodeAt(i)) | 0;
  const seed = (Math.imul(sessionIndex + 1, 1_000_003) + Math.imul(branchSalt, 7919) + turn) | 0;
  const next = rng(seed);
  const tag = `${sessionIndex.toString(36)}_${turn.toString(36)}_${(branchSalt >>> 0).toString(36)}`;
  const tool = TOOLS[turn % TOOLS.length]!;
  const callId = `call_${tag}`;
  const call: Record<string, unknown> =
    tool === 'lookup_account'
      ? {
          arguments: pythonJsonDumps({ account: filler(30, next), turn }),
          call_id: callId,
          name: 'lookup',
          namespace: 'crm',
          type: 'function_call',
        }
      : {
          arguments: pythonJsonDumps({ q: filler(120, next), turn }),
          call_id: callId,
          name: tool,
          type: 'function_call',
          id: `fc_${tag}`,
          status: 'completed',
        };
  const items: Record<string, unknown>[] = [
    { content: `Turn ${turn}: ${filler(380, next)}`, role: 'user' },
    call,
    { call_id: callId, output: `${filler(1500, next)} — 22°C`, type: 'function_call_output' },
    {
      id: `msg_${tag}`,
      content: [{ annotations: [], text: filler(900, next), type: 'output_text', logprobs: [] }],
      role: 'assistant',
      status: 'completed',
      type: 'message',
    },
  ];
  if (turn % 50 === 0) return { items, usage: null };
  const inputTokens = 800 + (turn % 97) * 13;
  const outputTokens = 150 + (turn % 31) * 7;
  return {
    items,
    usage: {
      requests: 1 + (turn % 3),
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      cachedTokens: (turn % 5) * 64,
      reasoningTokens: turn % 17,
    },
  };
}

/** `message_type` and `tool_name` of the items `turnContent` makes (spec §6, for exactly these shapes). */
function classify(item: Record<string, unknown>): { type: string; tool: string | null } {
  if (item.role === 'user') return { type: 'user', tool: null };
  if (item.role === 'assistant') return { type: 'assistant', tool: null };
  const type = String(item.type);
  if (type === 'function_call') {
    const name = String(item.name);
    const ns = typeof item.namespace === 'string' ? item.namespace : '';
    return { type, tool: ns !== '' && ns !== name ? `${ns}.${name}` : name };
  }
  return { type, tool: null };
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

export interface WriteStats {
  ms: number;
  bytes: number;
  sessions: number;
  messages: number;
  structureRows: number;
  usageRows: number;
}

/**
 * Writes the file for `spec` at `path` (which must not exist): the store creates the schema, then raw statements
 * add the rows exactly as the store's calls in `planOps` order would.
 */
export function writeScaleFile(path: string, spec: FileSpec, progress?: (message: string) => void): WriteStats {
  const t0 = performance.now();
  const first = spec.sessions[0]?.sessionId ?? 'scale';
  new AdvancedSQLiteSession({ sessionId: first, dbPath: path, createTables: true }).close();
  const db = new Database(path);
  try {
    // No WAL while generating: the rollback journal in memory (better-sqlite3's defensive mode refuses `OFF`, and a
    // WAL file cannot go straight to MEMORY), so pages are written once.
    for (const mode of ['DELETE', 'MEMORY']) {
      const now = String(db.pragma(`journal_mode = ${mode}`, { simple: true }));
      if (now.toUpperCase() !== mode) throw new Error(`generator: journal_mode stayed ${now} when set to ${mode}`);
    }
    db.pragma('synchronous = OFF');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -262144');
    db.pragma('temp_store = MEMORY');
    db.pragma('locking_mode = EXCLUSIVE');
    const ensureSession = db.prepare('INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)');
    const ensureGeneration = db.prepare('INSERT OR IGNORE INTO session_clear_generations (session_id, generation) VALUES (?, 0)');
    const insertMessage = db.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    const insertStructure = db.prepare(
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
         branch_turn_number, tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertUsage = db.prepare(
      `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
         input_tokens_details, output_tokens_details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const reserve = db.prepare('INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (?, ?)');
    const copyPrefix = db.prepare(
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
         branch_turn_number, tool_name)
       SELECT session_id, message_id, ?, message_type, ? + ROW_NUMBER() OVER (ORDER BY sequence_number), user_turn_number,
         branch_turn_number, tool_name
       FROM message_structure WHERE session_id = ? AND branch_id = ? AND branch_turn_number < ? ORDER BY sequence_number`,
    );
    const touch = db.prepare('UPDATE agent_sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?');

    // What the store would read back from the file: the session's largest sequence number, each branch's largest turn.
    const maxSeq = new Map<string, number>();
    const maxTurn = new Map<string, number>();
    const branchesOf = new Map<string, Set<string>>();
    const stats = { sessions: spec.sessions.length, messages: 0, structureRows: 0, usageRows: 0 };

    const writeTurn = (op: Extract<PlanOp, { kind: 'turn' }>): void => {
      const { sessionId: sid, branch } = op;
      const content = turnContent(op.sessionIndex, branch, op.turn);
      ensureSession.run(sid);
      ensureGeneration.run(sid);
      const ids = content.items.map((item) => Number(insertMessage.run(sid, pythonJsonDumps(item)).lastInsertRowid));
      touch.run(sid);
      const key = `${sid}\u0000${branch}`;
      const base = maxTurn.get(key) ?? 0;
      let seq = maxSeq.get(sid) ?? 0;
      let counter = 0;
      content.items.forEach((item, i) => {
        const c = classify(item);
        if (c.type === 'user') counter++;
        insertStructure.run(sid, ids[i], branch, c.type, ++seq, base + counter, base + counter, c.tool);
      });
      maxSeq.set(sid, seq);
      maxTurn.set(key, base + counter);
      let branches = branchesOf.get(sid);
      if (!branches) branchesOf.set(sid, (branches = new Set()));
      branches.add(branch);
      stats.messages += content.items.length;
      stats.structureRows += content.items.length;
      const u = content.usage;
      if (u) {
        insertUsage.run(
          sid,
          branch,
          base + counter,
          u.requests,
          u.inputTokens,
          u.outputTokens,
          u.totalTokens,
          pythonJsonDumps({ cache_write_tokens: 0, cached_tokens: u.cachedTokens }),
          pythonJsonDumps({ reasoning_tokens: u.reasoningTokens }),
        );
        stats.usageRows++;
      }
    };

    const writeBranch = (op: Extract<PlanOp, { kind: 'branch' }>): void => {
      const sid = op.sessionId;
      ensureGeneration.run(sid);
      // Branch creation first reserves every existing branch id in binary order (spec §8.1), then the new one.
      const existing = [...(branchesOf.get(sid) ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const b of existing) reserve.run(sid, b);
      if (reserve.run(sid, op.name).changes !== 1) throw new Error(`branch id ${op.name} used twice in the plan`);
      const copied = copyPrefix.run(op.name, maxSeq.get(sid) ?? 0, sid, op.source, op.atTurn).changes;
      if (copied === 0) throw new Error(`branch ${op.name}: nothing before turn ${op.atTurn} on ${op.source}`);
      maxSeq.set(sid, (maxSeq.get(sid) ?? 0) + copied);
      maxTurn.set(`${sid}\u0000${op.name}`, op.atTurn - 1);
      branchesOf.get(sid)!.add(op.name);
      stats.structureRows += copied;
    };

    const begin = db.prepare('BEGIN');
    const commit = db.prepare('COMMIT');
    let inTransaction = 0;
    begin.run();
    for (const op of planOps(spec)) {
      if (op.kind === 'turn') writeTurn(op);
      else writeBranch(op);
      inTransaction += op.kind === 'turn' ? 1 : 10_000;
      if (inTransaction >= 20_000) {
        commit.run();
        begin.run();
        inTransaction = 0;
        progress?.(`${stats.structureRows.toLocaleString('en')} structure rows, ${stats.messages.toLocaleString('en')} messages`);
      }
    }
    commit.run();
    // The store leaves its files in WAL mode (spec §4.3); the pragma rewrites the header and needs no other change.
    db.pragma('locking_mode = NORMAL');
    if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal') throw new Error('generator: could not switch the file back to WAL');
    db.close();
    return { ms: Math.round(performance.now() - t0), bytes: statSync(path).size, ...stats };
  } catch (err) {
    if (db.open) db.close();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The cache

export interface CachedFile {
  name: ScaleFileName;
  scale: number;
  path: string;
  bytes: number;
  /** False when a cached file was reused. */
  generated: boolean;
  /** Generation time in ms (null when reused). */
  generationMs: number | null;
  spec: FileSpec;
}

/** `<tools' cache>/bench/scale-<name>-v<version>-<hash of the spec>.db`. */
export function cachedPath(cacheDir: string, name: ScaleFileName, spec: FileSpec): string {
  const hash = createHash('sha256')
    .update(JSON.stringify({ v: GENERATOR_VERSION, spec }))
    .digest('hex')
    .slice(0, 12);
  return join(cacheDir, `scale-${name}-v${GENERATOR_VERSION}-${hash}.db`);
}

/** The file `name` at `scale`, from the cache or generated into it (written under a temporary name, then renamed). */
export function ensureScaleFile(cacheDir: string, name: ScaleFileName, scale: number, progress?: (message: string) => void): CachedFile {
  const spec = scaleFileSpec(name, scale);
  const path = cachedPath(cacheDir, name, spec);
  // Complete files only ever appear under the final name (written as `.partial`, then renamed). Readers may leave an
  // empty -wal and a -shm next to it; they do not make it stale.
  if (existsSync(path)) {
    return { name, scale, path, bytes: statSync(path).size, generated: false, generationMs: null, spec };
  }
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${path}.partial`;
  for (const p of [path, tmp]) for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(p + suffix, { force: true });
  const stats = writeScaleFile(tmp, spec, progress);
  renameSync(tmp, path);
  return { name, scale, path, bytes: stats.bytes, generated: true, generationMs: stats.ms, spec };
}

// ---------------------------------------------------------------------------------------------------------------
// For the format test

/** Every row of every table (and `sqlite_master`), ordered by rowid, with the columns named in `ignore` dropped. */
export function dumpTables(path: string, ignore: readonly string[] = ['created_at', 'updated_at']): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, unknown[]> = {
      sqlite_master: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid').all(),
      journal_mode: [db.pragma('journal_mode', { simple: true })],
    };
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    for (const table of tables) {
      const rows = db.prepare(`SELECT * FROM "${table.replace(/"/g, '""')}" ORDER BY rowid`).all() as Record<string, unknown>[];
      out[table] = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !ignore.includes(k))));
    }
    return out;
  } finally {
    db.close();
  }
}

/**
 * The arguments of a bench script run alone (`npx tsx scripts/bench/<name>.ts A --runs=9`): `--name=value` options,
 * `--runs` (a whole number ≥ 1, `defaultRuns` when absent), and the file: a scale file named A, B, C or L (made in the
 * tools' cache if absent) or `--file=PATH`.
 */
export async function standaloneBenchArgs(
  args: readonly string[],
  defaultRuns: number,
): Promise<{ path: string; runs: number; opt: (name: string) => string | undefined }> {
  const opt = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const runs = Number(opt('runs') ?? defaultRuns);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants an integer ≥ 1, got '${opt('runs')}'`);
  const named = args.find((a) => !a.startsWith('--'))?.toUpperCase();
  let path = opt('file');
  if (path === undefined) {
    if (!named || !(SCALE_FILE_NAMES as readonly string[]).includes(named))
      throw new Error('name a scale file (A, B, C, L) or --file=PATH');
    const hostTools = join(__dirname, '..', 'host', 'hostTools.mjs');
    const { CACHE } = (await import(pathToFileURL(hostTools).href)) as { CACHE: string };
    path = ensureScaleFile(join(CACHE, 'bench'), named as ScaleFileName, 1, (m) => process.stderr.write(`${m}\n`)).path;
  }
  return { path, runs, opt };
}

/**
 * Runs a bench script on its own when it is the program (`script` tests `process.argv[1]`): its arguments read as
 * `standaloneBenchArgs` reads them, its report printed as JSON on stdout; a failure goes to stderr with exit code 1.
 */
export function runStandaloneBench(
  script: RegExp,
  defaultRuns: number,
  run: (args: Awaited<ReturnType<typeof standaloneBenchArgs>>) => Promise<unknown>,
): void {
  if (!script.test(process.argv[1] ?? '')) return;
  void standaloneBenchArgs(process.argv.slice(2), defaultRuns)
    .then(run)
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
