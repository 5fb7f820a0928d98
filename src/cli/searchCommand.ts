/** `agent-sessions search`: the store's search core (src/store/search) over every session of one file or server store. */
import { existsSync } from 'node:fs';
import { parseSearchQuery, SearchQueryError, type ReviewQuery } from '../store/search/searchQuery';
import { reviewTurnSet, type TurnSet } from '../store/search/reviewTurns';
import { ReviewStore } from '../store/reviews/reviewStore';
import { searchDatabase } from '../store/search/searchDatabase';
import { searchRemoteStore } from '../store/search/searchRemote';
import type { SearchHit } from '../store/search/searchHits';
import { closeStore, openStore } from './cliStore';
import type { CommandContext } from './commands';
import { UsageError } from './exitCodes';
import { paint, table } from './terminal';

/** The snippet with its matches highlighted (bold yellow on a terminal, as they are). */
function highlight(color: boolean, hit: SearchHit): string {
  const { text, ranges } = hit.snippet;
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    if (start < at) continue;
    out += text.slice(at, start) + paint(color, 'yellow', paint(color, 'bold', text.slice(start, end)));
    at = end;
  }
  return (out + text.slice(at)).replace(/\s+/g, ' ');
}

/** The turns the review filters allow, from --reviews or the review store beside the session file. */
function reviewTurns(review: ReviewQuery, reviewsPath: string | undefined, sessionFile: string | undefined): TurnSet {
  const path = reviewsPath ?? (sessionFile !== undefined ? `${sessionFile}.reviews.db` : undefined);
  if (path === undefined || !existsSync(path))
    throw new UsageError(
      `is:good, is:bad, tag: and reviewed: read review data: name its store with --reviews <file>${path ? ` (${path} does not exist)` : ''}`,
    );
  const reviews = ReviewStore.open(path, { readonly: true, fileMustExist: true });
  try {
    return reviewTurnSet(review, reviews.turnReviews(null));
  } finally {
    reviews.close();
  }
}

export async function searchCommand(
  ctx: CommandContext,
  dbPath: string | undefined,
  input: string,
  max: number | undefined,
  reviewsPath?: string,
): Promise<string> {
  let query;
  try {
    query = parseSearchQuery(input);
  } catch (err) {
    if (err instanceof SearchQueryError) throw new UsageError(err.message);
    throw err;
  }
  const store = await openStore(dbPath, ctx.store);
  try {
    const turns = query.review ? reviewTurns(query.review, reviewsPath, store.kind === 'file' ? store.db.path : undefined) : undefined;
    const hits: SearchHit[] = [];
    const progress = ctx.json ? undefined : ctx.term.progress('Searching');
    const options = {
      signal: ctx.signal,
      maxHits: max,
      onHits: (batch: SearchHit[]) => hits.push(...batch),
      onProgress: (done: number, total: number) => progress?.update(done, total),
      turns,
    };
    const summary =
      store.kind === 'file'
        ? await searchDatabase(store.db, query, options)
        : await searchRemoteStore(store.source.browser, query, options);
    progress?.done();
    if (ctx.json) return `${JSON.stringify({ query, hits, summary }, null, 2)}\n`;
    const c = ctx.term.color;
    const rows = hits.map((h) => [
      paint(c, 'cyan', h.sessionId),
      h.branchId,
      String(h.turn),
      `${h.itemType}${h.toolName ? ` ${h.toolName}` : ''}${h.failed ? paint(c, 'red', ` (${h.failed})`) : ''}`,
      highlight(c, h),
    ]);
    const head = ['SESSION', 'BRANCH', 'TURN', 'ITEM', 'MATCH'].map((x) => paint(c, 'bold', x));
    const foot = `${summary.hits} ${summary.hits === 1 ? 'hit' : 'hits'}${summary.truncated ? ' (stopped at --max)' : ''}, ${summary.rowsScanned} rows in ${Math.round(summary.elapsedMs)} ms`;
    return hits.length === 0
      ? `No hits (${summary.rowsScanned} rows searched).\n`
      : `${table([head, ...rows])}\n${paint(c, 'dim', foot)}\n`;
  } finally {
    await closeStore(store);
  }
}
