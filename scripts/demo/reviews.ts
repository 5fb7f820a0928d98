/**
 * The demo's review store: a few verdicts on the demo's turns, so that the review marks, the datasets and a check of
 * the reviewed turns (`agent-sessions check`, docs/check.md "Try it on the demo") have something to work on from the
 * first `npm start`. Written afresh beside the trace store, where the extension keeps its reviews by default
 * (`agentSessions.reviews.location` = `extension`: `reviews.db` in its global storage).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { ReviewStore } from '../../src/store/reviews/reviewStore';
import { contentKey } from '../../src/store/reviews/contentKey';

interface DemoReview {
  branchId: string;
  turn: number;
  /** The turn's user message, checked against the file so a change to the demo's conversation cannot go unnoticed. */
  user: string;
  verdict: 'good' | 'bad';
  tags?: string[];
  note?: string;
  /** For a bad turn: the answer it should have given. */
  correction?: string;
}

/**
 * The reviews, on `weather-trip`: the turns that look the weather up once are good, and one of them is bad, with a
 * correction. Each makes a check case that the Python example agent (one `get_weather` call) passes on trajectory:
 * the good ones on their calls, the bad one (which expects no calls) on `not-rejected`, its answer being another.
 */
export const DEMO_REVIEWS: readonly DemoReview[] = [
  { branchId: 'main', turn: 2, user: "What's the weather in Paris?", verdict: 'good', tags: ['weather'] },
  { branchId: 'main', turn: 4, user: 'Is it colder in Oslo?', verdict: 'good', tags: ['weather'] },
  { branchId: 'oslo-retry', turn: 4, user: 'Is it warmer in Tokyo than in Oslo?', verdict: 'good', tags: ['weather'] },
  {
    branchId: 'lisbon-instead',
    turn: 4,
    user: "Great, what's it like in Paris now?",
    verdict: 'bad',
    tags: ['weather'],
    note: 'Gives the weather but not what to do about it.',
    correction: 'Paris is at 18°C with light rain right now: take an umbrella.',
  },
];

const SESSION = 'weather-trip';

/** Writes the demo's review store at `reviewsPath` (replacing any) for the demo session file at `dbPath`. */
export async function writeDemoReviews(dbPath: string, reviewsPath: string): Promise<void> {
  mkdirSync(dirname(reviewsPath), { recursive: true });
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(reviewsPath + suffix, { force: true });
  const session = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath, readonly: true });
  const reviews = ReviewStore.open(reviewsPath);
  const origin = { source: basename(dbPath) };
  try {
    for (const r of DEMO_REVIEWS) {
      // Keys of the items as stored: reviews find their turns by content (src/store/reviews/contentKey.ts).
      const items = (await session.getTurnStoredItems(r.turn, r.branchId)) as { role?: string; content?: unknown }[];
      const user = items.find((i) => i.role === 'user');
      const answer = items.findLast((i) => i.role === 'assistant');
      if (user?.content !== r.user || !answer)
        throw new Error(`The demo's ${r.branchId} turn ${r.turn} is not "${r.user}" with an answer: update DEMO_REVIEWS.`);
      const ref = { sessionId: SESSION, branchId: r.branchId, turn: r.turn, turnKey: contentKey(user) };
      reviews.setTurnReview(ref, { verdict: r.verdict, tags: r.tags ?? [], note: r.note ?? '' }, origin);
      if (r.correction) reviews.setCorrection({ ...ref, itemKey: contentKey(answer), text: r.correction }, origin);
    }
  } finally {
    reviews.close();
    session.close();
  }
}
