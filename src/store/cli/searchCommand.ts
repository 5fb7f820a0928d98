/** `agent-sessions search`: the store's search core (src/store/search) over every session of one file or server store. */
import { parseSearchQuery, SearchQueryError } from '../search/searchQuery';
import { searchDatabase } from '../search/searchDatabase';
import { searchRemoteStore } from '../search/searchRemote';
import type { SearchHit } from '../search/searchHits';
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

export async function searchCommand(
  ctx: CommandContext,
  dbPath: string | undefined,
  input: string,
  max: number | undefined,
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
    const hits: SearchHit[] = [];
    const progress = ctx.json ? undefined : ctx.term.progress('Searching');
    const options = {
      signal: ctx.signal,
      maxHits: max,
      onHits: (batch: SearchHit[]) => hits.push(...batch),
      onProgress: (done: number, total: number) => progress?.update(done, total),
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
