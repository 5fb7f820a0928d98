/** `agent-sessions search`: the store's search core (src/store/search) over every session of one file or server store. */
import { existsSync } from 'node:fs';
import { parseSearchQuery, SearchQueryError, type ReviewQuery } from '../store/search/searchQuery';
import { reviewTurnSet, type TurnSet } from '../store/search/reviewTurns';
import { ReviewStore } from '../store/reviews/reviewStore';
import { searchDatabase } from '../store/search/searchDatabase';
import { searchRemoteStore } from '../store/search/searchRemote';
import type { SearchHit, SearchSummary } from '../store/search/searchHits';
import { closeStore, openStore } from './cliStore';
import type { CommandContext } from './commands';
import { NotFoundError, UsageError } from './exitCodes';
import { capYoungGenerationNow, heapCheck, useHeapCeiling } from './heapSizing';
import { searchIndexDir } from './codeCacheDir';
import { indexServes, type SearchIndexOption } from '../store/search/toolIndex';
import { paint } from './terminal';
import { counted } from '../shared/countNoun';

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
  // A store named by --reviews that is not there is a missing file (exit 3), as `export --reviews` says it.
  if (reviewsPath !== undefined && !existsSync(reviewsPath)) throw new NotFoundError(`There is no review store ${reviewsPath}.`);
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

/**
 * The hits as lines, written batch by batch as the scan finds them: the header with the first batch, each column as
 * wide as its widest cell so far (a later, wider cell widens the rows after it; only the first batch's rows can be
 * laid out together).
 */
class HitLines {
  private readonly widths = [0, 0, 0, 0];
  private started = false;

  constructor(private readonly color: boolean) {}

  lines(hits: readonly SearchHit[]): string {
    const c = this.color;
    const rows = hits.map((h) => [
      paint(c, 'cyan', h.sessionId),
      h.branchId,
      String(h.turn),
      `${h.itemType}${h.toolName ? ` ${h.toolName}` : ''}${h.failed ? paint(c, 'red', ` (${h.failed})`) : ''}`,
      highlight(c, h),
    ]);
    if (!this.started) rows.unshift(['SESSION', 'BRANCH', 'TURN', 'ITEM', 'MATCH'].map((x) => paint(c, 'bold', x)));
    this.started = true;
    for (const row of rows) for (let i = 0; i < 4; i++) this.widths[i] = Math.max(this.widths[i]!, visible(row[i]!));
    return rows
      .map(
        (row) =>
          row
            .map((cell, i) => (i < 4 ? cell + ' '.repeat(this.widths[i]! - visible(cell)) : cell))
            .join('  ')
            .trimEnd() + '\n',
      )
      .join('');
  }
}

// eslint-disable-next-line no-control-regex -- strips the colour codes paint() adds
const visible = (cell: string): number => Array.from(cell.replace(/\u001b\[[0-9;]*m/g, '')).length;

/**
 * `--json` written as the hits come: the same text as `JSON.stringify({ query, hits, summary }, null, 2)`, without
 * holding the hits (a test compares the two).
 */
export class JsonHits {
  private count = 0;

  /** The opening, up to the hits' `[`. */
  static head(query: unknown): string {
    return `${JSON.stringify({ query }, null, 2).slice(0, -2)},\n  "hits": [`;
  }

  lines(hits: readonly SearchHit[]): string {
    let out = '';
    for (const h of hits) out += `${this.count++ === 0 ? '' : ','}\n${indent(JSON.stringify(h, null, 2), '    ')}`;
    return out;
  }

  /** The closing: the hits' `]`, the summary. */
  tail(summary: SearchSummary): string {
    return `${this.count === 0 ? ']' : '\n  ]'},\n  "summary": ${indent(JSON.stringify(summary, null, 2), '  ').trimStart()}\n}\n`;
  }
}

const indent = (text: string, by: string): string => text.replace(/^/gm, by);

function indexOption(dir: string | undefined, later: (task: () => void) => void): SearchIndexOption | undefined {
  return dir === undefined
    ? undefined
    : { dir, later, onChunk: heapCheck, onProblem: (message) => void process.stderr.write(`agent-sessions: ${message}\n`) };
}

/**
 * Searches and prints the hits as the scan finds them (never through the pager: the first hits show while the scan
 * goes on, and nothing is held), then the summary; returns nothing more to print. stdout is written synchronously
 * for files, pipes and terminals on Linux and macOS, so a slow reader holds the scan back instead of letting output
 * pile up in memory.
 */
export async function searchCommand(
  ctx: CommandContext,
  dbPath: string | undefined,
  input: string,
  max: number | undefined,
  reviewsPath?: string,
  useIndex = true,
): Promise<string> {
  let query;
  try {
    query = parseSearchQuery(input);
  } catch (err) {
    if (err instanceof SearchQueryError) throw new UsageError(err.message);
    throw err;
  }
  // The young generation held where it starts: a search prints as it finds, so what survives a scavenge is a batch
  // of hits, and letting the young generation grow to its cap first put `search A berlin` over 100 MB (94.8–107 MB
  // on better-sqlite3 with the code cache; held: 88.5–94.6 MB, 5 runs alternating, CPU within the runs' spread).
  capYoungGenerationNow();
  // And its old generation under a ceiling: on Node 24 V8 let it reach 50 MB before its first full collection, and
  // `search A berlin` peaked at 121–145 MB (heapSizing.ts).
  useHeapCeiling();
  const store = await openStore(dbPath, ctx.store);
  try {
    const turns = query.review ? reviewTurns(query.review, reviewsPath, store.kind === 'file' ? store.db.path : undefined) : undefined;
    const deferred: { task?: () => void } = {};
    const progress = ctx.json ? undefined : ctx.term.progress('Searching');
    const json = ctx.json ? new JsonHits() : null;
    const text = new HitLines(ctx.term.color);
    if (json) process.stdout.write(JsonHits.head(query));
    const options = {
      signal: ctx.signal,
      maxHits: max,
      onHits: (batch: SearchHit[]) => {
        heapCheck();
        progress?.done();
        process.stdout.write(json ? json.lines(batch) : text.lines(batch));
      },
      onProgress: (done: number, total: number) => {
        heapCheck();
        progress?.update(done, total);
      },
      turns,
      // The summary line says how many items were searched.
      countItems: true,
      // The index of tool items (tool: and is:failed), in the CLI's cache folder: a problem with it is said, not fatal;
      // an index far behind the file is brought up to date after the hits and the summary are out.
      index: indexOption(
        useIndex && store.kind === 'file' && indexServes(query) ? searchIndexDir() : undefined,
        (task) => (deferred.task = task),
      ),
    };
    const summary =
      store.kind === 'file'
        ? await searchDatabase(store.db, query, options)
        : await searchRemoteStore(store.source.browser, query, options);
    progress?.done();
    if (json) process.stdout.write(json.tail(summary));
    else {
      const c = ctx.term.color;
      // How many items were searched is known only for a whole scan; one stopped at --max says so instead.
      const took = `in ${Math.round(summary.elapsedMs)} ms`;
      const items = summary.itemsSearched === null ? took : `${counted(summary.itemsSearched, 'item')} searched ${took}`;
      const foot = `${counted(summary.hits, 'hit')}${summary.truncated ? ' (stopped at --max)' : ''}${summary.itemsSearched === null ? ' ' : ', '}${items}`;
      // No time on a line without hits, as before: it is the whole answer, and the same search answers the same.
      const none = summary.itemsSearched === null ? 'No hits (stopped).' : `No hits (${counted(summary.itemsSearched, 'item')} searched).`;
      process.stdout.write(summary.hits === 0 ? `${none}\n` : `${paint(c, 'dim', foot)}\n`);
    }
    // Everything is printed: the index's catching up (a file's first tool: search) only holds the prompt back.
    deferred.task?.();
    return '';
  } finally {
    await closeStore(store);
  }
}
