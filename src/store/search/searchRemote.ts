/**
 * Searching a server-backed store (PostgreSQL, Redis): every session (or one), its rows read in order a page at a
 * time through the store's browser, each decoded and put to the same exact test as a session file's rows. The
 * stores keep no text index the search could use and no branches, so every item crosses the network once and every
 * hit is on `main`, its turn counted as the tree counts it (each user item opens the next turn, spec §7).
 *
 * Nothing here blocks: each page is one awaited round trip, and `signal` stops the scan between two pages.
 */
import { displayType } from '../../shared/itemText';
import type { RemoteRow, RemoteStoreBrowser } from '../remote/remoteStore';
import { REMOTE_BRANCH_ID, remoteEntry } from '../remote/remoteSessionSource';
import { itemFacts } from './itemMatch';
import { HitTester, ScanProgress, type SearchHit, type SearchOptions, type SearchSummary } from './searchHits';
import type { SearchQuery } from './searchQuery';

/** Rows per round trip: a page of JSON is a few hundred KB at most, and a cancel waits for one page at most. */
const ROWS_PER_PAGE = 500;
/** Sessions listed per round trip. */
const SESSIONS_PER_PAGE = 200;

/** Searches the store behind `browser`; its errors are the store's own (`RemoteStoreError`s). */
export async function searchRemoteStore(browser: RemoteStoreBrowser, query: SearchQuery, options: SearchOptions): Promise<SearchSummary> {
  const progress = new ScanProgress(options);
  const summary = progress.summary;
  const tester = new HitTester(query, options.turns);
  let total = 0;

  const scanSession = async (sessionId: string): Promise<void> => {
    // Every call's name by its id, so an output (which carries only the call id) is shown with its tool's name.
    const callNames = new Map<string, string>();
    let turn = 0;
    let after: { cursor: string; position: number } | null = null;
    while (!progress.stopped()) {
      const rows: RemoteRow[] = await browser.readRowsAfter(sessionId, after, ROWS_PER_PAGE);
      const hits: SearchHit[] = [];
      for (const r of rows) {
        const entry = remoteEntry(r);
        if (entry.corrupt) continue;
        if (entry.type === 'user') turn++;
        const facts = itemFacts(entry.item);
        if (facts.callId !== null && facts.toolName !== null && !callNames.has(facts.callId)) callNames.set(facts.callId, facts.toolName);
        const at = turn;
        const hit = tester.test(
          sessionId,
          entry.item,
          entry.messageId,
          entry.toolName,
          () => ({ branchId: REMOTE_BRANCH_ID, turn: at, sequenceNumber: entry.sequenceNumber, itemType: displayType(entry.type) }),
          (callId) => callNames.get(callId) ?? null,
        );
        if (hit) hits.push(hit);
      }
      summary.rowsScanned += rows.length;
      progress.emit(hits);
      options.onProgress?.(summary.rowsScanned, Math.max(total, summary.rowsScanned));
      const last = rows[rows.length - 1];
      if (rows.length < ROWS_PER_PAGE || !last) return;
      after = { cursor: last.cursor, position: last.position };
    }
  };

  if (options.sessionId !== undefined) {
    const session = await browser.getSession(options.sessionId);
    total = session?.itemCount ?? 0;
    if (session) await scanSession(options.sessionId);
  } else {
    let cursor: string | null = null;
    // A Redis key scan may return a key twice (when the keyspace grows while it runs): each session is read once.
    const seen = new Set<string>();
    do {
      const page = await browser.listSessions({ limit: SESSIONS_PER_PAGE, cursor });
      total += page.sessions.reduce((n, s) => n + s.itemCount, 0);
      for (const s of page.sessions) {
        if (progress.stopped()) break;
        if (seen.has(s.sessionId)) continue;
        seen.add(s.sessionId);
        await scanSession(s.sessionId);
      }
      cursor = page.nextCursor;
    } while (cursor !== null && !progress.stopped());
  }
  // A server store is read row by row, each read once: the rows read are the items searched.
  return progress.finish(() => progress.summary.rowsScanned);
}
