/**
 * The `agent-sessions` commands. Each reads a session file through the inspector (`SessionDatabase`, read-only) or a
 * PostgreSQL or Redis store through its browser (cliStore.ts), or writes a file through the import, and returns the
 * text to print; `--json` gives the same data as JSON for scripts.
 */
import { existsSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { BranchNode } from '../store/inspector/inspectorTypes';
import { TransferError } from '../store/export/exportErrors';
import { checkOutputPath, type OutputOptions } from '../store/files/outputGuard';
import { TempFile } from '../store/files/tempFile';
import { turnToMarkdown } from '../store/export/markdown';
import { exportFromReader, exportSession, exportSessionToFile } from '../store/export/sessionExport';
import { detectImportFormat, importSessionFile } from '../store/export/importSession';
import { writeMarkdownExport } from '../store/export/readerExport';
import type { ExportFormat } from '../store/export/transferTypes';
import { ReviewStore } from '../store/reviews/reviewStore';
import type { ReviewData } from '../store/reviews/reviewTypes';
import { allSessions, closeStore, isServerAddress, openStore, storeAddress, type CliStore, type StoreOptions } from './cliStore';
import { NotFoundError, UsageError } from './exitCodes';
import { colorMarkdown, paint, table, type Terminal } from './terminal';

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
          `${b.userTurns}${b.userTurnsAtLeast ? '+' : ''} ${b.userTurns === 1 ? 'turn' : 'turns'}`,
          `${b.messageCount} ${b.messageCount === 1 ? 'item' : 'items'}`,
          paint(c, 'dim', fork),
        ]);
        walk(b.branchId, depth === 0 ? '' : `${prefix}${last ? '   ' : '│  '}`, depth + 1);
      });
    };
    walk(null, '', 0);
    return `${table(rows)}\n`;
  });
}

export async function usage(
  ctx: CommandContext,
  dbPath: string | undefined,
  sessionId: string,
  branchId: string | undefined,
): Promise<string> {
  return withStore(ctx, dbPath, async (store) => {
    const tree = await requireSession(store, sessionId);
    if (branchId !== undefined) requireBranch(tree, sessionId, branchId);
    // Server stores keep no usage (the SDK's PostgreSQL and Redis sessions record none).
    const rows = store.kind === 'file' ? store.db.getUsageRows(sessionId, branchId ?? null) : [];
    const sum = (key: 'requests' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedTokens' | 'reasoningTokens') =>
      rows.reduce((s, r) => s + (r[key] ?? 0), 0);
    const totals = {
      turns: rows.length,
      requests: sum('requests'),
      inputTokens: sum('inputTokens'),
      outputTokens: sum('outputTokens'),
      totalTokens: sum('totalTokens'),
      cachedTokens: sum('cachedTokens'),
      reasoningTokens: sum('reasoningTokens'),
    };
    if (ctx.json) return json({ sessionId, branchId: branchId ?? null, rows, totals });
    if (rows.length === 0)
      return `${sessionId}: no usage recorded${store.kind === 'server' ? ' (PostgreSQL and Redis stores keep none)' : ''}\n`;
    const c = ctx.term.color;
    const head = ['BRANCH', 'TURN', 'REQUESTS', 'INPUT', 'CACHED', 'OUTPUT', 'REASONING', 'TOTAL'].map((h) => paint(c, 'bold', h));
    const body = rows.map((r) => [
      r.branchId,
      String(r.turn),
      n(r.requests),
      n(r.inputTokens),
      n(r.cachedTokens),
      n(r.outputTokens),
      n(r.reasoningTokens),
      n(r.totalTokens),
    ]);
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
    return `${table([head, ...body, total], new Set([1, 2, 3, 4, 5, 6, 7]))}\n`;
  });
}

export async function show(
  ctx: CommandContext,
  dbPath: string | undefined,
  sessionId: string,
  branchId: string | undefined,
  turn: number | undefined,
): Promise<string> {
  return withStore(ctx, dbPath, async (store) => {
    const db = store.reader;
    const tree = await requireSession(store, sessionId);
    if (turn !== undefined) {
      const branch = branchId ?? (tree.find((b) => b.branchId === 'main') ?? tree[0])?.branchId ?? 'main';
      requireBranch(tree, sessionId, branch);
      const items = await db.getTurnItems(sessionId, branch, turn);
      if (items.length === 0) throw new NotFoundError(`branch '${branch}' of session '${sessionId}' has no turn ${turn}`);
      if (ctx.json) return json({ sessionId, branchId: branch, turn, items });
      return colorMarkdown(ctx.term.color, turnToMarkdown(turn, items, { headingLevel: 2 }));
    }
    if (branchId !== undefined) requireBranch(tree, sessionId, branchId);
    if (ctx.json) {
      const out: unknown[] = [];
      for (const b of branchId !== undefined ? [branchId] : tree.map((x) => x.branchId)) {
        let after: number | null = null;
        const items: unknown[] = [];
        for (;;) {
          const page = await db.getItemsPage(sessionId, b, { afterSequence: after, limit: 500 });
          items.push(...page.items);
          if (page.nextAfterSequence === null) break;
          after = page.nextAfterSequence;
        }
        out.push({ branchId: b, items });
      }
      return json({ sessionId, branches: out });
    }
    let text = '';
    await writeMarkdownExport(db, { sessionId, branchId: branchId ?? null, signal: ctx.signal }, (chunk) => {
      text += chunk;
    });
    return colorMarkdown(ctx.term.color, text);
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
  // --force), and an existing file only with --force.
  const output = { overwrite: options.force, inputs: [...(isServerAddress(file) ? [] : [file]), ...(reviewsPath ? [reviewsPath] : [])] };
  if (toFile) checkOutputPath(options.output!, output);
  const reviews = reviewsPath === undefined ? undefined : exportReviews(reviewsPath, sessionId);
  const request = { sessionId, branchId: options.branch ?? null, signal: ctx.signal, ...(reviews ? { reviews } : {}) };
  if (isServerAddress(file)) return exportFromServer(ctx, file, format, request, options.output, output);
  try {
    if (options.output === undefined || options.output === '-') {
      const summary = await exportSession(file, format, request, (chunk) => writeStdout(chunk));
      return ctx.json ? '' : summary.skipped > 0 ? note(`${summary.skipped} unreadable item(s) left out`) : '';
    }
    const progress = ctx.json ? { update: () => undefined, done: () => undefined } : ctx.term.progress(`Exporting ${sessionId}`);
    const summary = await exportSessionToFile(
      file,
      options.output,
      format,
      { ...request, onProgress: (d, t) => progress.update(d, t) },
      output,
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
  if (process.stdout.write(chunk)) return;
  return new Promise((resolve) => process.stdout.once('drain', () => resolve()));
}

export async function importCommand(
  ctx: CommandContext,
  file: string,
  options: { db: string | undefined; session: string | undefined; createTables: boolean },
): Promise<string> {
  if (!options.db) throw new UsageError('pass --db <file>: the database to import into');
  if (isServerAddress(options.db))
    throw new UsageError('import writes a session file: PostgreSQL and Redis stores are read here, not written');
  if (!existsSync(file)) throw new NotFoundError(`${file} does not exist`);
  const format = detectImportFormat(file);
  const sessionId = options.session ?? (format === 'jsonl' ? basename(file, extname(file)) : undefined);
  const progress = ctx.json ? { update: () => undefined, done: () => undefined } : ctx.term.progress(`Importing ${basename(file)}`);
  try {
    const result = await importSessionFile(options.db, file, {
      sessionId,
      createTables: options.createTables,
      signal: ctx.signal,
      onProgress: (d, t) => progress.update(d, t),
    });
    progress.done();
    if (ctx.json) return json({ ...result, db: options.db, format });
    return `Imported ${result.items} item(s) into session ${result.sessionId} of ${options.db} (${result.branches} ${
      result.branches === 1 ? 'branch' : 'branches'
    }${result.createdTables ? ', tables created' : ''})\n`;
  } finally {
    progress.done();
  }
}
