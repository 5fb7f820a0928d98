/**
 * The `agent-sessions` commands. Each reads a session file through the inspector (`SessionDatabase`, read-only) or a
 * PostgreSQL or Redis store through its browser (cliStore.ts), or writes a file through the import, and returns the
 * text to print; `--json` gives the same data as JSON for scripts.
 */
import { existsSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { BranchNode } from '../store/inspector/inspectorTypes';
import { TransferError } from '../store/export/exportErrors';
import { InvalidArgumentError } from '../store/errors';
import { checkOutputPath, type OutputOptions } from '../store/files/outputGuard';
import { TempFile } from '../store/files/tempFile';
import { ONE_PASS_PAGE_CACHE_KIB } from '../store/sqlite/pageCache';
import { turnToMarkdown } from '../store/export/markdown';
import { exportFromReader, exportSession, exportSessionToFile } from '../store/export/sessionExport';
import { detectImportFormat, importSessionFile } from '../store/export/importSession';
import { writeMarkdownExport } from '../store/export/readerExport';
import type { ExportFormat } from '../store/export/transferTypes';
import { ReviewStore } from '../store/reviews/reviewStore';
import type { ReviewData } from '../store/reviews/reviewTypes';
import { allSessions, closeStore, isServerAddress, openStore, storeAddress, type CliStore, type StoreOptions } from './cliStore';
import { NotFoundError, UsageError } from './exitCodes';
import { heapCheck } from './heapSizing';
import { readOnlyInCliWords } from './readOnlyFile';
import { colorMarkdown, markdownColorizer, paint, table, tableLines, visibleWidth, type Terminal } from './terminal';
import type { SharedTurnRange, UsageRow, UsageRowKey } from '../store/inspector/usageTables';
import type { SessionDatabase } from '../store/inspector/sessionDatabase';
import { sharedTurnRanges } from '../shared/turnOrigin';
import { counted } from '../shared/countNoun';

export interface CommandContext {
  term: Terminal;
  json: boolean;
  signal: AbortSignal;
  /** How to open a server store (--key-prefix). */
  store?: StoreOptions;
}

/** Runs `body` on the store named by --db (or the first argument, or AGENT_SESSIONS_DB), closing it after. */
export async function withStore<T>(ctx: CommandContext, target: string | undefined, body: (store: CliStore) => Promise<T>): Promise<T> {
  const store = await openStore(target, ctx.store);
  try {
    return await body(store);
  } finally {
    await closeStore(store);
  }
}

export async function requireSession(store: CliStore, sessionId: string): Promise<BranchNode[]> {
  const tree = await store.reader.getBranchTree(sessionId);
  if (tree.length === 0) {
    const exists =
      store.kind === 'file'
        ? store.db.listSessions().some((s) => s.sessionId === sessionId)
        : (await store.source.getSession(sessionId)) !== null;
    if (!exists) throw new NotFoundError(`no session '${sessionId}' in ${store.label}`);
  }
  return tree;
}

export function requireBranch(tree: BranchNode[], sessionId: string, branchId: string): BranchNode {
  const b = tree.find((x) => x.branchId === branchId);
  if (!b)
    throw new NotFoundError(`session '${sessionId}' has no branch '${branchId}' (branches: ${tree.map((x) => x.branchId).join(', ')})`);
  return b;
}

/** Turns stored once: a forked branch's first fork-turn − 1 turns are its parent's. */
function ownTurns(b: BranchNode): number {
  return b.parentBranchId !== null && b.forkTurn !== null ? Math.max(0, b.userTurns - (b.forkTurn - 1)) : b.userTurns;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const n = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(v));

export async function ls(ctx: CommandContext, dbPath: string | undefined): Promise<string> {
  return withStore(ctx, dbPath, async (store) => {
    // A server store records no turns: counting them would read every session, so they are left out (null).
    const sessions = await Promise.all(
      (await allSessions(store)).map(async (s) => {
        if (store.kind === 'server') return { ...s, turnCount: null };
        const tree = store.db.getBranchTree(s.sessionId);
        return { ...s, turnCount: tree.reduce((sum, b) => sum + ownTurns(b), 0) };
      }),
    );
    if (ctx.json) {
      return json(
        sessions.map((s) => ({
          sessionId: s.sessionId,
          items: s.messageCount,
          turns: s.turnCount,
          branches: s.branchCount,
          structured: s.structured,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          totalTokens: s.usage?.totalTokens ?? null,
        })),
      );
    }
    if (sessions.length === 0) return `${store.label}: no sessions\n`;
    const c = ctx.term.color;
    const head = ['SESSION', 'ITEMS', 'TURNS', 'BRANCHES', 'TOKENS', 'UPDATED'].map((h) => paint(c, 'bold', h));
    const rows = sessions.map((s) => [
      paint(c, 'cyan', s.sessionId),
      String(s.messageCount),
      n(s.turnCount),
      String(s.branchCount),
      n(s.usage?.totalTokens),
      s.updatedAt ?? '–',
    ]);
    return `${table([head, ...rows], new Set([1, 2, 3, 4]))}\n`;
  });
}

export async function branches(ctx: CommandContext, dbPath: string | undefined, sessionId: string): Promise<string> {
  return withStore(ctx, dbPath, async (store) => {
    const tree = await requireSession(store, sessionId);
    if (ctx.json) return json(tree);
    const c = ctx.term.color;
    const children = new Map<string | null, BranchNode[]>();
    for (const b of tree) children.set(b.parentBranchId, [...(children.get(b.parentBranchId) ?? []), b]);
    const rows: string[][] = [];
    const walk = (parent: string | null, prefix: string, depth: number) => {
      const list = children.get(parent) ?? [];
      list.forEach((b, i) => {
        const last = i === list.length - 1;
        const branchGlyph = depth === 0 ? '' : last ? '└─ ' : '├─ ';
        const fork = b.parentBranchId === null ? '' : `from ${b.parentBranchId}${b.forkTurn !== null ? ` at turn ${b.forkTurn}` : ''}`;
        rows.push([
          `${prefix}${branchGlyph}${paint(c, 'cyan', b.branchId)}`,
          b.userTurnsAtLeast ? `${b.userTurns}+ turns` : counted(b.userTurns, 'turn'),
          counted(b.messageCount, 'item'),
          paint(c, 'dim', fork),
        ]);
        walk(b.branchId, depth === 0 ? '' : `${prefix}${last ? '   ' : '│  '}`, depth + 1);
      });
    };
    walk(null, '', 0);
    // A session row without items (ls lists it) has no branch yet: say so rather than print an empty line.
    if (rows.length === 0) return `${sessionId}: no items, so no branches yet\n`;
    return `${table(rows)}\n`;
  });
}

/** Usage rows read per page by `usage`: what it holds at a time, whatever the session's length. */
export const USAGE_ROWS_PER_PAGE = 1000;

type UsageCountKey = 'requests' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedTokens' | 'reasoningTokens';
const USAGE_COUNT_KEYS: readonly UsageCountKey[] = [
  'requests',
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'cachedTokens',
  'reasoningTokens',
];

/**
 * The next `limit` usage rows of a branch's whole conversation after turn `afterTurn`, in turn order: its shared turns'
 * rows on the branches that ran them (`ranges`, as the Tokens tab's branch scope, the MCP usage tool and the compare
 * card count them), each marked `sharedFrom` its origin, and its own rows. A turn the branch has a row of its own for
 * is its own row's (the SDK reads its own branch's row). The shared turns are read in windows of at most `limit` turns
 * (a turn has one row per branch), each a range seek per branch, then the own rows past them in one.
 */
function conversationRowsAfter(
  db: SessionDatabase,
  sessionId: string,
  branchId: string,
  ranges: readonly SharedTurnRange[],
  afterTurn: number,
  limit: number,
): UsageRow[] {
  const out: UsageRow[] = [];
  const sharedEnd = Math.max(0, ...ranges.map((r) => r.toTurn));
  let from = afterTurn + 1;
  while (out.length < limit && from <= sharedEnd) {
    const to = Math.min(sharedEnd, from + (limit - out.length) - 1);
    const byTurn = new Map<number, UsageRow>();
    for (const r of ranges) {
      const lo = Math.max(from, r.fromTurn);
      const hi = Math.min(to, r.toTurn);
      if (lo > hi) continue;
      for (const { branchId: origin, turn, sharedFrom: _none, ...counts } of db.getTurnUsage(sessionId, r.originBranchId, lo, hi))
        byTurn.set(turn, { branchId, turn, sharedFrom: origin, ...counts });
    }
    for (const row of db.getTurnUsage(sessionId, branchId, from, to)) byTurn.set(row.turn, row);
    out.push(...[...byTurn.values()].sort((a, b) => a.turn - b.turn));
    from = to + 1;
  }
  if (out.length < limit) {
    out.push(...db.getUsageRowsAfter(sessionId, branchId, { branchId, turn: Math.max(afterTurn, sharedEnd) }, limit - out.length));
  }
  return out;
}

/**
 * A session's usage rows, or a branch's whole conversation's (`conversationRowsAfter`), with totals, written to
 * `write` as they are read, a page of `USAGE_ROWS_PER_PAGE` rows at a time (a 100,000-turn session held every row, its table and its text at once: 196 MB).
 * JSON is written in one pass, exactly as `JSON.stringify(…, null, 2)` would; the table in two (the first finds the
 * columns' widths and the totals, the second writes the lines), each page a read of its own: a turn appended between
 * the passes is left out of the table, as it was of the totals.
 */
export async function usage(
  ctx: CommandContext,
  dbPath: string | undefined,
  sessionId: string,
  branchId: string | undefined,
  write: (chunk: string) => Promise<void>,
): Promise<void> {
  await withStore(ctx, dbPath, async (store) => {
    const tree = await requireSession(store, sessionId);
    if (branchId !== undefined) requireBranch(tree, sessionId, branchId);
    const scope = branchId ?? null;
    const shared = scope === null ? [] : sharedTurnRanges(tree, scope);
    // Server stores keep no usage (the SDK's PostgreSQL and Redis sessions record none).
    const pages = async function* (until?: UsageRowKey): AsyncGenerator<UsageRow[]> {
      if (store.kind !== 'file') return;
      const { db } = store;
      // A branch's rows all carry its id (shared ones say their origin in `sharedFrom`): keys order by turn alone.
      const read = (after: UsageRowKey | null): UsageRow[] =>
        scope !== null && shared.length > 0
          ? conversationRowsAfter(db, sessionId, scope, shared, after?.turn ?? 0, USAGE_ROWS_PER_PAGE)
          : db.getUsageRowsAfter(sessionId, scope, after, USAGE_ROWS_PER_PAGE);
      let after: UsageRowKey | null = null;
      for (;;) {
        ctx.signal.throwIfAborted();
        // The table's first pass reads every page before it writes: the heap is looked at here too (heapSizing.ts).
        heapCheck();
        let rows = read(after);
        const full = rows.length === USAGE_ROWS_PER_PAGE;
        if (until) rows = rows.filter((r) => !keyAfter(r, until));
        if (rows.length > 0) yield rows;
        const last = rows[rows.length - 1];
        if (!full || !last || (until && !keyAfter(until, last))) return;
        after = { branchId: last.branchId, turn: last.turn };
      }
    };
    const totals = { turns: 0, requests: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
    const add = (r: UsageRow): void => {
      totals.turns++;
      for (const k of USAGE_COUNT_KEYS) totals[k] += r[k] ?? 0;
    };
    if (ctx.json) {
      await write(`{\n  "sessionId": ${JSON.stringify(sessionId)},\n  "branchId": ${JSON.stringify(scope)},\n  "rows": [`);
      let first = true;
      for await (const rows of pages()) {
        let chunk = '';
        for (const r of rows) {
          add(r);
          chunk += `${first ? '' : ','}\n${indent(JSON.stringify(r, null, 2), '    ')}`;
          first = false;
        }
        await write(chunk);
      }
      await write(`${first ? ']' : '\n  ]'},\n  "totals": ${indent(JSON.stringify(totals, null, 2), '  ').trimStart()}\n}\n`);
      return;
    }
    // First pass: the widest cell of each column (as `table` measures it) and the totals.
    const c = ctx.term.color;
    const head = ['BRANCH', 'TURN', 'REQUESTS', 'INPUT', 'CACHED', 'OUTPUT', 'REASONING', 'TOTAL'].map((h) => paint(c, 'bold', h));
    const cells = (r: UsageRow): string[] => [
      // The branch that ran the turn: a shared turn's origin.
      r.sharedFrom ?? r.branchId,
      String(r.turn),
      n(r.requests),
      n(r.inputTokens),
      n(r.cachedTokens),
      n(r.outputTokens),
      n(r.reasoningTokens),
      n(r.totalTokens),
    ];
    const widths = head.map(visibleWidth);
    let last: UsageRow | undefined;
    for await (const rows of pages()) {
      for (const r of rows) {
        add(r);
        cells(r).forEach((cell, i) => (widths[i] = Math.max(widths[i]!, visibleWidth(cell))));
        last = r;
      }
    }
    if (!last) {
      // Named as asked: with --branch it is the branch that has none, not the session.
      const what = scope === null ? sessionId : `${sessionId}, branch ${scope}`;
      await write(`${what}: no usage recorded${store.kind === 'server' ? ' (PostgreSQL and Redis stores keep none)' : ''}\n`);
      return;
    }
    const total = [
      paint(c, 'bold', 'total'),
      String(totals.turns),
      String(totals.requests),
      String(totals.inputTokens),
      String(totals.cachedTokens),
      String(totals.outputTokens),
      String(totals.reasoningTokens),
      paint(c, 'bold', String(totals.totalTokens)),
    ];
    total.forEach((cell, i) => (widths[i] = Math.max(widths[i]!, visibleWidth(cell))));
    const right = new Set([1, 2, 3, 4, 5, 6, 7]);
    // Second pass: the lines, up to the last row the first pass saw.
    await write(`${tableLines([head], widths, right)}\n`);
    for await (const rows of pages({ branchId: last.branchId, turn: last.turn }))
      await write(`${tableLines(rows.map(cells), widths, right)}\n`);
    await write(`${tableLines([total], widths, right)}\n`);
  });
}

/** Whether row key `a` comes after `b` in the usage rows' order (branch, then turn; SQLite's BINARY order of UTF-8). */
function keyAfter(a: UsageRowKey, b: UsageRowKey): boolean {
  if (a.branchId !== b.branchId) return Buffer.compare(Buffer.from(a.branchId), Buffer.from(b.branchId)) > 0;
  return a.turn > b.turn;
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

/**
 * Items read per page by `show` of a whole branch or session and by `export` from a session file: what they hold at a
 * time, whatever the session's length. A page outlives the young generation's scavenges while it is written, so V8
 * moves it to the old generation: at 500 items a page `export md --branch b1_late` of file A into a pipe ran 10–12
 * full collections on Node 24, at 100 it ran 3 (docs/benchmarks.md, "The streaming commands' heap"). A server
 * store's export keeps the reader's default: there a page is a round trip.
 */
export const SHOW_ITEMS_PER_PAGE = 100;

/** The text `show --json` gathers before a write (characters): under V8's large-object size (128 KiB) as UTF-16. */
export const SHOW_CHUNK_CHARS = 1 << 14;

/**
 * A session, a branch or one turn, written to `write` as it is read (a whole session was gathered into one text, or
 * for `--json` into one list of every item, before the first byte was printed: 1.3 GB of memory for a branch of file
 * A). The Markdown is the export's transcript, coloured line by line as it comes; the JSON is written in one pass,
 * exactly as `JSON.stringify(…, null, 2)` of the whole answer would be, a page of items at a time.
 */
export async function show(
  ctx: CommandContext,
  dbPath: string | undefined,
  sessionId: string,
  branchId: string | undefined,
  turn: number | undefined,
  write: (chunk: string) => Promise<void>,
): Promise<void> {
  await withStore(ctx, dbPath, async (store) => {
    const db = store.reader;
    const tree = await requireSession(store, sessionId);
    if (turn !== undefined) {
      const branch = branchId ?? (tree.find((b) => b.branchId === 'main') ?? tree[0])?.branchId ?? 'main';
      requireBranch(tree, sessionId, branch);
      const items = await db.getTurnItems(sessionId, branch, turn);
      if (items.length === 0) throw new NotFoundError(`branch '${branch}' of session '${sessionId}' has no turn ${turn}`);
      if (ctx.json) return write(json({ sessionId, branchId: branch, turn, items }));
      return write(colorMarkdown(ctx.term.color, turnToMarkdown(turn, items, { headingLevel: 2 })));
    }
    if (branchId !== undefined) requireBranch(tree, sessionId, branchId);
    if (ctx.json) {
      const ids = branchId !== undefined ? [branchId] : tree.map((x) => x.branchId);
      await write(`{\n  "sessionId": ${JSON.stringify(sessionId)},\n  "branches": [`);
      for (const [i, b] of ids.entries()) {
        await write(`${i === 0 ? '' : ','}\n    {\n      "branchId": ${JSON.stringify(b)},\n      "items": [`);
        let after: number | null = null;
        let first = true;
        for (;;) {
          ctx.signal.throwIfAborted();
          const page = await db.getItemsPage(sessionId, b, { afterSequence: after, limit: SHOW_ITEMS_PER_PAGE });
          let chunk = '';
          for (const item of page.items) {
            chunk += `${first ? '' : ','}\n${indent(JSON.stringify(item, null, 2), '        ')}`;
            first = false;
            // Written in pieces of about SHOW_CHUNK_CHARS: a page's whole text would be a string too large for the
            // young generation, made in the old one (heapSizing.ts).
            if (chunk.length >= SHOW_CHUNK_CHARS) {
              await write(chunk);
              chunk = '';
            }
          }
          await write(chunk);
          if (page.nextAfterSequence === null) break;
          after = page.nextAfterSequence;
        }
        await write(`${first ? ']' : '\n      ]'}\n    }`);
      }
      await write(`${ids.length === 0 ? ']' : '\n  ]'}\n}\n`);
      return;
    }
    const colorizer = markdownColorizer(ctx.term.color);
    await writeMarkdownExport(db, { sessionId, branchId: branchId ?? null, signal: ctx.signal, pageSize: SHOW_ITEMS_PER_PAGE }, (chunk) =>
      write(colorizer.write(chunk)),
    );
    await write(colorizer.end());
  });
}

const FORMATS: readonly ExportFormat[] = ['md', 'json', 'jsonl'];

export async function exportCommand(
  ctx: CommandContext,
  dbPath: string | undefined,
  sessionId: string,
  options: { format: string | undefined; branch: string | undefined; output: string | undefined; reviews?: string; force?: boolean },
): Promise<string> {
  const format = (options.format ?? (options.output ? formatFromName(options.output) : undefined)) as ExportFormat | undefined;
  if (format === undefined) throw new UsageError('pass --format md|json|jsonl (or an -o file ending in .md, .json or .jsonl)');
  if (!FORMATS.includes(format)) throw new UsageError(`unknown format '${format}': use md, json or jsonl`);
  const file = storeAddress(dbPath);
  const toFile = options.output !== undefined && options.output !== '-';
  const reviewsPath = format === 'jsonl' ? undefined : reviewStorePath(options.reviews, isServerAddress(file) ? undefined : file);
  // -o is checked before anything is read: never the session file, the review store or their -wal/-shm (even with
  // --force), and an existing file only with --force. A JSONL export reads no reviews, but its -o is no review store
  // either (--reviews, or the one beside the file): a review store is the user's own work.
  const reviewStores = [
    ...(reviewsPath ? [reviewsPath] : []),
    ...(options.reviews !== undefined ? [options.reviews] : []),
    ...(isServerAddress(file) ? [] : [`${file}.reviews.db`]),
  ];
  const output = { overwrite: options.force, inputs: [...(isServerAddress(file) ? [] : [file]), ...reviewStores] };
  if (toFile) checkOutputPath(options.output!, output);
  const reviews = reviewsPath === undefined ? undefined : exportReviews(reviewsPath, sessionId);
  const request = { sessionId, branchId: options.branch ?? null, signal: ctx.signal, ...(reviews ? { reviews } : {}) };
  if (isServerAddress(file)) return exportFromServer(ctx, file, format, request, options.output, output);
  // A session file: pages as `show` reads them (SHOW_ITEMS_PER_PAGE).
  const fromFile = { ...request, pageSize: SHOW_ITEMS_PER_PAGE };
  try {
    if (options.output === undefined || options.output === '-') {
      const summary = await exportSession(file, format, fromFile, (chunk) => writeStdout(chunk), { pageCacheKiB: ONE_PASS_PAGE_CACHE_KIB });
      return ctx.json ? '' : summary.skipped > 0 ? note(`${summary.skipped} unreadable item(s) left out`) : '';
    }
    const progress = ctx.json ? { update: () => undefined, done: () => undefined } : ctx.term.progress(`Exporting ${sessionId}`);
    const summary = await exportSessionToFile(
      file,
      options.output,
      format,
      {
        ...fromFile,
        onProgress: (d, t) => {
          heapCheck();
          progress.update(d, t);
        },
      },
      { ...output, pageCacheKiB: ONE_PASS_PAGE_CACHE_KIB },
    );
    progress.done();
    if (ctx.json) return json({ sessionId, format, output: options.output, ...summary });
    return `Exported ${summary.items} item(s) of ${sessionId} to ${options.output}${summary.skipped > 0 ? ` (${summary.skipped} unreadable left out)` : ''}\n`;
  } catch (err) {
    if (err instanceof TransferError && err.problem === 'not-found') throw new NotFoundError(err.message);
    throw err;
  }
}

/**
 * The review store a Markdown or JSON export reads: --reviews, or the one beside the session file when there is one
 * (none otherwise; a --reviews file that does not exist is an error).
 */
function reviewStorePath(given: string | undefined, sessionFile: string | undefined): string | undefined {
  const path = given ?? (sessionFile !== undefined && existsSync(`${sessionFile}.reviews.db`) ? `${sessionFile}.reviews.db` : undefined);
  if (path !== undefined && !existsSync(path)) throw new NotFoundError(`There is no review store ${path}.`);
  return path;
}

/** The review data of `sessionId` in the review store at `path`. */
function exportReviews(path: string, sessionId: string): ReviewData {
  const store = ReviewStore.open(path, { readonly: true, fileMustExist: true });
  try {
    return store.exportData(sessionId);
  } finally {
    store.close();
  }
}

/** Export from a PostgreSQL or Redis store: Markdown or JSONL through its reader (JSON needs a file's raw rows). */
async function exportFromServer(
  ctx: CommandContext,
  address: string,
  format: ExportFormat,
  request: { sessionId: string; branchId: string | null; signal: AbortSignal },
  output: string | undefined,
  outputOptions: OutputOptions,
): Promise<string> {
  if (format === 'json')
    throw new UsageError("JSON export copies a session file's rows; from a PostgreSQL or Redis store export md or jsonl");
  return withStore(ctx, address, async (store) => {
    try {
      if (output === undefined || output === '-') {
        const summary = await exportFromReader(store.reader, format, request, (chunk) => writeStdout(chunk));
        return ctx.json ? '' : summary.skipped > 0 ? note(`${summary.skipped} unreadable item(s) left out`) : '';
      }
      // As for a file: written under a temporary name and put in place when complete, so a stopped export leaves nothing.
      const temp = TempFile.create(output, outputOptions);
      const progress = ctx.json ? { update: () => undefined, done: () => undefined } : ctx.term.progress(`Exporting ${request.sessionId}`);
      try {
        const summary = await exportFromReader(store.reader, format, { ...request, onProgress: (d, t) => progress.update(d, t) }, (chunk) =>
          temp.write(chunk),
        );
        temp.commit();
        progress.done();
        if (ctx.json) return json({ sessionId: request.sessionId, format, output, ...summary });
        return `Exported ${summary.items} item(s) of ${request.sessionId} to ${output}${summary.skipped > 0 ? ` (${summary.skipped} unreadable left out)` : ''}\n`;
      } finally {
        temp.discard();
        progress.done();
      }
    } catch (err) {
      if (err instanceof TransferError && err.problem === 'not-found') throw new NotFoundError(err.message);
      throw err;
    }
  });
}

function formatFromName(name: string): string | undefined {
  const ext = extname(name).toLowerCase();
  return ext === '.md' || ext === '.markdown'
    ? 'md'
    : ext === '.json'
      ? 'json'
      : ext === '.jsonl' || ext === '.ndjson'
        ? 'jsonl'
        : undefined;
}

function note(text: string): string {
  process.stderr.write(`agent-sessions: ${text}\n`);
  return '';
}

/** Writes to stdout honouring back-pressure, so a big export into a pipe never buffers the whole file. */
function writeStdout(chunk: string): Promise<void> | void {
  heapCheck();
  if (process.stdout.write(chunk)) return;
  return new Promise((resolve) => process.stdout.once('drain', () => resolve()));
}

export async function importCommand(
  ctx: CommandContext,
  file: string,
  options: { db: string | undefined; session: string | undefined; createTables: boolean; asMain?: boolean },
): Promise<string> {
  if (!options.db) throw new UsageError('pass --db <file>: the database to import into');
  if (isServerAddress(options.db))
    throw new UsageError('import writes a session file: PostgreSQL and Redis stores are read here, not written');
  // A blank id is a slip on the command line (an empty variable, stray quotes), not a file's fault: a usage error.
  if (options.session !== undefined && options.session.trim() === '')
    throw new UsageError(`--session names the new session: give an id that is not blank (got ${JSON.stringify(options.session)})`);
  if (!existsSync(file)) throw new NotFoundError(`${file} does not exist`);
  const format = detectImportFormat(file);
  const sessionId = options.session ?? (format === 'jsonl' ? basename(file, extname(file)) : undefined);
  if (sessionId !== undefined && sessionId.trim() === '')
    throw new UsageError(`${basename(file)} names no session by its file name: give the new session's id with --session`);
  const progress = ctx.json ? { update: () => undefined, done: () => undefined } : ctx.term.progress(`Importing ${basename(file)}`);
  try {
    const result = await importSessionFile(options.db, file, {
      sessionId,
      createTables: options.createTables,
      asMain: options.asMain === true,
      signal: ctx.signal,
      onProgress: (d, t) => progress.update(d, t),
    }).catch((err: unknown) => {
      // The store says what is missing; the flag that allows creating it is the command line's to name.
      if (err instanceof TransferError && err.problem === 'missing-tables')
        throw new TransferError('missing-tables', `${err.message} Pass --create-tables to create them.`);
      if (err instanceof InvalidArgumentError && options.asMain)
        throw new UsageError("--as-main takes a branch's export: this file holds a whole session, whose branches keep their names");
      throw readOnlyInCliWords(err, 'Make it writable to import into it; ls, show and export read it as it is.');
    });
    progress.done();
    if (ctx.json) return json({ ...result, db: options.db, format });
    // An agent opening the session starts on main: a session without one looks empty to it.
    if (result.withoutMain !== undefined)
      process.stderr.write(
        `note: the session has no branch 'main', only '${result.withoutMain}': an agent opening it starts on an empty main. --as-main imports the branch as main.\n`,
      );
    const main = result.mainFrom !== undefined ? `, branch '${result.mainFrom}' as main` : '';
    return `Imported ${result.items} item(s) into session ${result.sessionId} of ${options.db} (${counted(result.branches, 'branch', 'branches')}${main}${result.createdTables ? ', tables created' : ''})\n`;
  } finally {
    progress.done();
  }
}
