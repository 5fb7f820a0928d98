/**
 * A check run from VS Code (docs/check.md, "In VS Code"): the same engine as `agent-sessions check`
 * (src/agents/check/, loaded on the first check), fed from what the extension holds. The review data comes from the
 * session file's review store (the store worker's), limited to the sessions of that file (the extension's store is
 * shared by every file); the turns are read through the store worker; a query's text, tool and role filters run in the
 * search worker; the agents' sessions and the scratch files' sessions live in the store worker (the engine's
 * `ScratchFolder` opens them through the run's store), and the scratch files are copied and removed with asynchronous
 * file calls: what stays on the host's thread is handing each page of a case's branch prefix from the worker's read
 * to the worker's write. The session file is never written, unless `keepBranches` (Open as Comparison, after the
 * user agreed).
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CaseSelection } from '../../agents/check/checkCases';
import type { CheckAgent, CheckOutcome } from '../../agents/check/checkRun';
import type { CaseResult, CheckCase, Grader } from '../../agents/check/checkTypes';
import type { ToolsMode } from '../../shared/protocol/replay';
import type { ReviewData } from '../../store/reviews/reviewTypes';
import { reviewTurnSet, turnSetKey } from '../../store/search/reviewTurns';
import { startWorkerSearch } from '../../store/search/searchInWorker';
import { parseSearchQuery, SearchQueryError, type SearchQuery } from '../../store/search/searchQuery';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';
import { workerRunStore } from '../runs/workerRunStore';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { ReviewService } from '../reviews/reviewService';
import { UserFacingError } from '../core/userError';

/** What a check was asked: the answers of the quick picks (or a caller's arguments). */
export interface CheckRequest {
  dbPath: string;
  /** Only this session's reviewed turns (the command run on a session node); null: every session of the file. */
  sessionId: string | null;
  /** In the search syntax (docs/search.md); '' selects every good turn and every bad turn with a correction. */
  query: string;
  /** The user's agent command or URL, or the built-in agent (the extension's runner: `AgentRunner.checkAgent`). */
  agent: CheckAgent;
  /** The `--grader` specs; the engine's defaults when empty. */
  graders: string[];
  tools: ToolsMode;
  /** The key handed to the agent and to a model grader, when one is stored. */
  apiKey: string | undefined;
  /** The OpenAI-compatible endpoint of a model grader (agentSessions.agent.baseUrl). */
  endpoint: string | undefined;
  /** Tools matched by name alone (agentSessions.replay.matchNameOnly). */
  nameOnly: string[];
  /** Stop a case's agent (and a grader) after this long; 0: never. */
  timeoutMs: number;
  /** Where the agents and grader commands run (the workspace folder). */
  cwd: string | undefined;
}

export interface CheckDeps {
  registry: DatabaseRegistry;
  reviews: ReviewService;
  extensionUri: vscode.Uri;
}

const loadEngine = async () => {
  const [cases, run, graders] = await Promise.all([
    import('../../agents/check/checkCases'),
    import('../../agents/check/checkRun'),
    import('../../agents/check/graders/graderSpec'),
  ]);
  return { selectCases: cases.selectCases, runCheck: run.runCheck, parseGraders: graders.parseGraders };
};

/** The file's read connection in the store worker, or why there is none. */
function workerDb(registry: DatabaseRegistry, dbPath: string): WorkerSessionDatabase {
  const entry = registry.require(dbPath);
  if (entry.remote)
    throw new UserFacingError(vscode.l10n.t('A check runs on a session file: copy the server session to a local file first.'));
  if (!(entry.db instanceof WorkerSessionDatabase)) throw new UserFacingError(vscode.l10n.t('The database cannot be read.'));
  return entry.db;
}

/** The graders of a request, refused (with the engine's reason) before anything runs. */
export async function checkGraders(request: CheckRequest): Promise<Grader[]> {
  const { parseGraders } = await loadEngine();
  try {
    return parseGraders(request.graders, {
      apiKey: request.apiKey,
      endpoint: request.endpoint,
      cwd: request.cwd,
      ...(request.timeoutMs > 0 ? { timeoutMs: request.timeoutMs } : {}),
    });
  } catch (err) {
    throw new UserFacingError(vscode.l10n.t('The graders cannot be used: {0}', (err as Error).message));
  }
}

/** The query parsed, or a refusal that says what is wrong with it. */
export function checkQuery(text: string): SearchQuery | undefined {
  if (text.trim() === '') return undefined;
  try {
    return parseSearchQuery(text);
  } catch (err) {
    if (err instanceof SearchQueryError) throw new UserFacingError(vscode.l10n.t('The query cannot be read: {0}', err.message));
    throw err;
  }
}

const hasItemFilters = (q: SearchQuery): boolean => q.text !== '' || q.tools.length > 0 || q.roles.length > 0 || q.failed;

/**
 * The cases of a request: the file's reviewed turns that expect something, narrowed by the query. The query's review
 * filters are the engine's; its filters on the items (text, tools, roles, failed calls) are one scan of the file by the
 * search worker limited to the reviewed turns, whose hits then narrow the cases.
 */
export async function selectRequestCases(deps: CheckDeps, request: CheckRequest, signal: AbortSignal): Promise<CaseSelection> {
  const query = checkQuery(request.query);
  const db = workerDb(deps.registry, request.dbPath);
  const sessions = new Set((await db.listSessions()).map((s) => s.sessionId));
  const inScope = (r: { sessionId: string }) =>
    sessions.has(r.sessionId) && (request.sessionId === null || r.sessionId === request.sessionId);
  const all = await (await deps.reviews.storeFor(request.dbPath)).call('exportData');
  // The extension's review store holds every file's reviews: another file's would all be "orphaned" here.
  const data: ReviewData = { ...all, turnReviews: all.turnReviews.filter(inScope), corrections: all.corrections.filter(inScope) };
  const { selectCases } = await loadEngine();
  const reviewOnly = query && { ...query, text: '', tools: [], roles: [], failed: false };
  // No filter on the items reaches the engine (they ran in the search worker above), so its search scan, the one
  // part that needs a connection in this thread, is never called: the worker connection serves the turns it reads.
  const selection = await selectCases(db as unknown as Parameters<typeof selectCases>[0], data, { query: reviewOnly, signal });
  if (!query || !hasItemFilters(query)) return selection;
  const hits = await matchingTurns(deps, request, query, data, signal);
  const keep = (c: CheckCase) => hits.has(turnSetKey(c.sessionId, c.branchId, c.turn));
  return {
    ...selection,
    cases: selection.cases.filter(keep),
    orphaned: selection.orphaned.filter((o) => keep(o.case)),
  };
}

/** The reviewed turns of the file that hold an item the query's item filters match (the search worker's scan). */
async function matchingTurns(
  deps: CheckDeps,
  request: CheckRequest,
  query: SearchQuery,
  data: ReviewData,
  signal: AbortSignal,
): Promise<Set<string>> {
  const db = workerDb(deps.registry, request.dbPath);
  const review = query.review ?? { verdicts: [], tags: [], reviewed: true };
  const hits = new Set<string>();
  const errors: string[] = [];
  const search = startWorkerSearch(
    join(deps.extensionUri.fsPath, 'dist', 'searchWorker.js'),
    {
      paths: [request.dbPath],
      query: { ...query, review },
      driver: db.driver,
      maxHits: Number.MAX_SAFE_INTEGER,
      ...(request.sessionId !== null ? { sessionId: request.sessionId } : {}),
      turns: { [request.dbPath]: reviewTurnSet(review, data.turnReviews) },
    },
    {
      onHits: (_path, found) => {
        for (const h of found) hits.add(turnSetKey(h.sessionId, h.branchId, h.turn));
      },
      onError: (_path, message) => errors.push(message),
    },
  );
  const cancel = () => search.cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const end = await search.finished;
    signal.throwIfAborted();
    if (end.error) errors.push(end.error);
    if (errors.length > 0) throw new UserFacingError(vscode.l10n.t('The query could not be searched: {0}', errors.join('; ')));
    return hits;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/**
 * Runs `cases`, each result to `onResult` as it finishes. In scratch storage (the file is never written), or with
 * `keepBranches` as new `check-<n>` branches of the file (Open as Comparison, after the user agreed).
 */
export async function runRequestCases(
  deps: CheckDeps,
  request: CheckRequest,
  selection: Pick<CaseSelection, 'cases' | 'orphaned'>,
  options: {
    graders: readonly Grader[];
    keepBranches: boolean;
    signal: AbortSignal;
    onResult: (r: CaseResult) => void;
    log: (line: string) => void;
  },
): Promise<CheckOutcome> {
  const db = workerDb(deps.registry, request.dbPath);
  // The engine names kept branches from the ids a session has used, synchronously: read them first, in the worker.
  const used = new Map<string, string[]>();
  if (options.keepBranches) for (const id of new Set(selection.cases.map((c) => c.sessionId))) used.set(id, await db.usedBranchIds(id));
  const { runCheck } = await loadEngine();
  try {
    return await runCheck({
      file: request.dbPath,
      db: {
        getItemsPage: (sessionId, branchId, page) => db.getItemsPage(sessionId, branchId, page),
        usedBranchIds: (sessionId) => used.get(sessionId) ?? [],
        tables: db.tables,
      },
      cases: selection.cases,
      orphaned: selection.orphaned,
      agent: request.agent,
      graders: options.graders,
      tools: { mode: request.tools, nameOnly: request.nameOnly },
      keepBranches: options.keepBranches,
      run: {
        store: workerRunStore(deps.registry.store),
        ...(request.apiKey ? { apiKey: request.apiKey } : {}),
        ...(request.timeoutMs > 0 ? { timeoutMs: request.timeoutMs } : {}),
      },
      signal: options.signal,
      onResult: options.onResult,
      log: options.log,
    });
  } finally {
    if (options.keepBranches) await deps.registry.checkNow(request.dbPath);
  }
}
