/** Every session of a PostgreSQL or Redis store, read through its browser a page at a time. */
import type { SessionSummary } from '../inspector/inspectorTypes';
import type { RemoteSessionSource } from './remoteSessionSource';

/**
 * Each session once (a Redis key scan may return a key twice). `beforePage` runs before each page is read: a caller
 * that can be cancelled throws its own error there.
 */
export async function allServerSessions(
  source: Pick<RemoteSessionSource, 'listSessionsPage'>,
  beforePage?: () => void,
): Promise<SessionSummary[]> {
  const out: SessionSummary[] = [];
  const seen = new Set<string>();
  let cursor: string | null = null;
  do {
    beforePage?.();
    const page = await source.listSessionsPage({ limit: 200, cursor });
    for (const s of page.sessions) {
      if (seen.has(s.sessionId)) continue;
      seen.add(s.sessionId);
      out.push(s);
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}
