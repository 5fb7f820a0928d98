/**
 * Writes the CI example's committed fixtures (examples/ci/README.md): `conversations.db`, a session recorded by running
 * the Python example agent (examples/python/replay_agent.py) on three questions, and `reviews.db`, a review store with
 * its verdicts. Run from the repository, which has the sources and `tsx`:
 *
 *   node --import tsx examples/ci/make-fixtures.mjs
 *
 * The agent runs offline on the stand-in `agents` package of the tests (test/fixtures/agent-commands/python-standin),
 * whose scripted model always calls `get_weather` with {"city": "Paris"} and answers "It is sunny in Paris.", and
 * which writes the turn through a Python-conformant session (STANDIN_WRITE=1). So the session holds what the example
 * does, as the real SDK stores it, and a check that re-runs the example the same way passes: the file is recorded
 * the way the stand-in answers. Except turn 2, the one reviewed bad: it was recorded before the agent's fix, when its
 * model answered "Take an umbrella: it is raining in Paris." though the tool said sunny (the stand-in answering that:
 * STANDIN_ANSWER). Today's agent no longer gives that answer, so its check passes; one
 * that gave it again would fail that case (`not-rejected`, docs/check.md "Cases"). Both files are rewritten from
 * scratch.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AdvancedSQLiteSession } from '../../src/store/index.ts';
import { ReviewStore } from '../../src/store/reviews/reviewStore.ts';
import { contentKey } from '../../src/store/reviews/contentKey.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..');
const DB = join(HERE, 'conversations.db');
const REVIEWS = join(HERE, 'reviews.db');
const SESSION = 'weather-ci';
const STANDIN = join(REPO, 'test', 'fixtures', 'agent-commands', 'python-standin');

/** The questions, one turn each, and how each turn is reviewed. */
const TURNS = [
  { text: "What's the weather in Paris?", verdict: 'good' },
  // A bad answer, given before the agent's fix (`before`), with the answer it should have been: a case whose expected
  // answer is the correction, and whose recorded answer a run must not give again.
  {
    text: 'Do I need an umbrella in Paris today?',
    before: 'Take an umbrella: it is raining in Paris.',
    verdict: 'bad',
    note: 'says rain where the forecast says sun',
    correction: 'No umbrella needed: it is sunny in Paris.',
  },
  { text: 'Weather in Paris for my run, please.', verdict: 'good', tags: ['weather'] },
];

function removeDatabase(path) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/**
 * One turn on `main`, written by the example agent itself, as `agent-sessions run` would run it; `answer` makes the
 * stand-in's model answer that instead of "It is sunny in Paris." (STANDIN_ANSWER).
 */
function runExample(text, answer) {
  const runId = randomUUID();
  const input = {
    threadId: SESSION,
    runId,
    state: {},
    messages: [{ id: `${runId}-user`, role: 'user', content: text }],
    tools: [],
    context: [],
    forwardedProps: {
      agentSessions: {
        version: 1,
        store: { kind: 'sqlite', path: DB, sessionsTable: 'agent_sessions', messagesTable: 'agent_messages' },
        sessionId: SESSION,
        branchId: 'main',
        fork: null,
        model: null,
        input: [{ content: text, role: 'user' }],
      },
    },
  };
  const r = spawnSync('python3', [join(REPO, 'examples', 'python', 'replay_agent.py')], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    env: {
      ...process.env,
      PYTHONPATH: STANDIN,
      PYTHONDONTWRITEBYTECODE: '1',
      STANDIN_WRITE: '1',
      ...(answer === undefined ? {} : { STANDIN_ANSWER: answer }),
    },
  });
  if (r.status !== 0) throw new Error(`the example agent failed on "${text}" (exit ${r.status}):\n${r.stderr}${r.stdout}`);
}

/** A committed SQLite file is one file: its WAL folded in and the rollback journal set, so reading it adds none. */
function asSingleFile(path) {
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('journal_mode = DELETE');
    db.exec('VACUUM');
  } finally {
    db.close();
  }
}

async function main() {
  removeDatabase(DB);
  removeDatabase(REVIEWS);
  // The example never creates tables (create_tables=False, as a user's agent would open the real file).
  new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: DB, createTables: true }).close();
  for (const turn of TURNS) runExample(turn.text, turn.before);

  const session = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: DB, readonly: true });
  const reviews = ReviewStore.open(REVIEWS);
  try {
    for (const [i, turn] of TURNS.entries()) {
      const items = await session.getTurnStoredItems(i + 1, 'main');
      const userItem = items.find((item) => item.role === 'user');
      const answer = items.findLast((item) => item.role === 'assistant');
      const said = answer.content.map((part) => part.text).join('');
      if (said !== (turn.before ?? 'It is sunny in Paris.')) throw new Error(`turn ${i + 1} was answered ${JSON.stringify(said)}`);
      const ref = { sessionId: SESSION, branchId: 'main', turn: i + 1, turnKey: contentKey(userItem) };
      reviews.setTurnReview(ref, { verdict: turn.verdict, note: turn.note ?? '', tags: turn.tags ?? [] });
      if (turn.correction) reviews.setCorrection({ ...ref, itemKey: contentKey(answer), text: turn.correction });
    }
  } finally {
    reviews.close();
    session.close();
  }
  asSingleFile(DB);
  asSingleFile(REVIEWS);
  console.log(`wrote ${DB} (${TURNS.length} turns of session ${SESSION}) and ${REVIEWS}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
