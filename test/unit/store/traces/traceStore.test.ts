/**
 * The trace store on a real SQLite file (either driver: the store phases run this on node:sqlite too): what links a
 * trace and which link wins, a turn's spans by its run's ids and by time, retries replacing spans, manual links,
 * clearing, retention, export that imports back the same, and the files it must refuse untouched.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { exportOtlpJson } from '../../../../src/store/traces/otlpExport';
import { parseOtlpJson } from '../../../../src/store/traces/otlpRequest';
import type { SpanRecord } from '../../../../src/store/traces/spanRecord';
import { spanRecordOf } from '../../../../src/store/traces/spanConventions';
import { TraceStoreError } from '../../../../src/store/traces/traceErrors';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { copyFixture, tempDir } from '../../../support/tempFiles';
import { SPAN_T0_US, spanRecord } from '../../../support/spanRecords';

const ROOT = join(__dirname, '..', '..', '..', '..');
const T0 = SPAN_T0_US;
let counter = 0;

function rec(traceId: string, over: Partial<SpanRecord> = {}): SpanRecord {
  counter++;
  return spanRecord({
    traceId: traceId.padStart(32, '0'),
    spanId: (over.spanId ?? counter.toString(16)).padStart(16, '0'),
    service: 'svc',
    attributes: { n: counter },
    resource: { 'service.name': 'svc' },
    ...over,
  });
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('TraceStore', () => {
  const tmp = tempDir('asi-traces-');
  let store: TraceStore;
  let n = 0;
  beforeEach(() => {
    store = TraceStore.open(join(tmp.dir, `t${++n}.db`));
  });
  afterEach(() => store.close());
  after(() => tmp.cleanup());

  it('links a trace by the strongest link any of its spans gives, and never weakens it later', () => {
    store.addSpans([rec('a'), rec('a', { link: { sessionId: 'alice' } })]);
    assert.equal(store.trace('a'.padStart(32, '0'))!.sessionId, 'alice');
    assert.equal(store.trace('a'.padStart(32, '0'))!.linkedBy, 'attribute');
    store.addSpans([rec('a', { link: { sessionId: 'alice', branchId: 'retry', turnNumber: 2 } })]);
    store.addSpans([rec('a', { link: { sessionId: 'someone-else' } })]);
    const t = store.trace('a'.padStart(32, '0'))!;
    assert.deepEqual([t.sessionId, t.branchId, t.turnNumber, t.linkedBy, t.spanCount], ['alice', 'retry', 2, 'run', 4]);
  });

  it("a turn's spans: its run's traces exactly, and session-only traces that start in its window, by start time", () => {
    const id = (c: string) => c.padStart(32, '0');
    store.addSpans([
      rec('1', { link: { sessionId: 's', branchId: 'main', turnNumber: 1 }, startUs: T0 + 10 }),
      rec('2', { link: { sessionId: 's' }, startUs: T0 + 5_000_000 }),
      rec('2', { parentSpanId: null, startUs: T0 + 5_000_100, name: 'child' }),
      rec('3', { link: { sessionId: 's' }, startUs: T0 + 60_000_000 }),
      rec('4', { link: { sessionId: 's', branchId: 'main', turnNumber: 2 }, startUs: T0 + 6_000_000 }),
      rec('5', { link: { sessionId: 'other' }, startUs: T0 + 5_000_000 }),
    ]);
    const traces = store.tracesOfTurn({ sessionId: 's', branchId: 'main', turnNumber: 1, window: { startUs: T0, endUs: T0 + 30_000_000 } });
    assert.deepEqual(
      traces.map((t) => t.traceId),
      [id('1'), id('2')],
    );
    const spans = store.spansOfTurn({ sessionId: 's', branchId: 'main', turnNumber: 1, window: { startUs: T0, endUs: T0 + 30_000_000 } });
    assert.equal(spans.length, 3);
    assert.deepEqual(spans[0]!.resource, { 'service.name': 'svc' });
    // Without a window, only the run's own.
    assert.equal(store.tracesOfTurn({ sessionId: 's', branchId: 'main', turnNumber: 1 }).length, 1);
    // The last turn's window is open-ended.
    assert.deepEqual(
      store
        .tracesOfTurn({ sessionId: 's', branchId: 'main', turnNumber: 9, window: { startUs: T0 + 50_000_000, endUs: null } })
        .map((t) => t.traceId),
      [id('3')],
    );
  });

  it('a span sent again replaces the earlier copy (an exporter retry), keeping one row', () => {
    store.addSpans([rec('b', { spanId: 'f', name: 'first', link: { sessionId: 'x' } })]);
    store.addSpans([rec('b', { spanId: 'f', name: 'again', link: { sessionId: 'x' } })]);
    const spans = store.spansOfTrace('b'.padStart(32, '0'));
    assert.deepEqual(
      spans.map((s) => s.name),
      ['again'],
    );
    assert.equal(store.counts().spans, 1);
  });

  it("many turns' latency in one read: their runs' traces, session-only ones by window, requests, models, errors", () => {
    const run = (branchId: string, turnNumber: number) => ({ link: { sessionId: 's', branchId, turnNumber } });
    store.addSpans([
      // main turn 1: two traces of its run, 2 s apart; three model requests on two models, one failed tool.
      rec('31', { ...run('main', 1), startUs: T0, endUs: T0 + 1_000_000, kind: 'agent' }),
      rec('31', { startUs: T0 + 100, endUs: T0 + 400_000, kind: 'model', model: 'gpt-4.1' }),
      rec('31', { startUs: T0 + 500_000, endUs: T0 + 900_000, kind: 'model', model: 'gpt-4.1-mini' }),
      rec('32', { ...run('main', 1), startUs: T0 + 2_000_000, endUs: T0 + 3_500_000, kind: 'model', model: 'gpt-4.1' }),
      rec('32', { startUs: T0 + 2_100_000, endUs: T0 + 2_200_000, kind: 'tool', status: 'error', error: 'boom' }),
      // A session-only trace in turn 2's window, and one before every window (counted nowhere).
      rec('33', { link: { sessionId: 's' }, startUs: T0 + 20_000_000, endUs: T0 + 20_250_000, kind: 'model', model: 'o3' }),
      rec('34', { link: { sessionId: 's' }, startUs: T0 - 50_000_000, endUs: T0 - 49_000_000 }),
      // Another branch's turn 1, and another session's trace inside the windows.
      rec('35', { ...run('retry', 1), startUs: T0, endUs: T0 + 700_000, kind: 'model', model: 'o3' }),
      rec('36', { link: { sessionId: 'other' }, startUs: T0 + 20_000_000, endUs: T0 + 29_000_000, kind: 'model' }),
    ]);
    const got = store.turnLatencies('s', [
      { branchId: 'main', turnNumber: 1, window: { startUs: T0 - 2_000_000, endUs: T0 + 18_000_000 } },
      { branchId: 'main', turnNumber: 2, window: { startUs: T0 + 18_000_000, endUs: T0 + 40_000_000 } },
      { branchId: 'main', turnNumber: 3, window: { startUs: T0 + 40_000_000, endUs: null } },
      { branchId: 'retry', turnNumber: 1 },
    ]);
    assert.deepEqual(got, [
      {
        branchId: 'main',
        turnNumber: 1,
        startUs: T0,
        endUs: T0 + 3_500_000,
        traces: 2,
        requests: 3,
        models: ['gpt-4.1', 'gpt-4.1-mini'],
        errors: 1,
      },
      {
        branchId: 'main',
        turnNumber: 2,
        startUs: T0 + 20_000_000,
        endUs: T0 + 20_250_000,
        traces: 1,
        requests: 1,
        models: ['o3'],
        errors: 0,
      },
      { branchId: 'retry', turnNumber: 1, startUs: T0, endUs: T0 + 700_000, traces: 1, requests: 1, models: ['o3'], errors: 0 },
    ]);
    // The same as a turn's own read finds.
    const turn2 = store.tracesOfTurn({
      sessionId: 's',
      branchId: 'main',
      turnNumber: 2,
      window: { startUs: T0 + 18_000_000, endUs: T0 + 40_000_000 },
    });
    assert.deepEqual(
      turn2.map((t) => t.traceId),
      ['33'.padStart(32, '0')],
    );
    assert.deepEqual(store.turnLatencies('s', []), []);
  });

  it('lists unlinked traces with the reason, links one by hand, and a later span does not undo it', () => {
    store.addSpans([rec('c'), rec('d', { link: { sessionId: 'alice' } })]);
    const unlinked = store.unlinkedTraces();
    assert.deepEqual(
      unlinked.map((t) => t.traceId),
      ['c'.padStart(32, '0')],
    );
    assert.match(unlinked[0]!.reason, /gen_ai\.conversation\.id/);
    store.linkTrace('c'.padStart(32, '0'), { sessionId: 'bob', branchId: 'main', turnNumber: 4 });
    store.addSpans([rec('c', { link: { sessionId: 'alice', branchId: 'main', turnNumber: 1 } })]);
    const t = store.trace('c'.padStart(32, '0'))!;
    assert.deepEqual([t.sessionId, t.turnNumber, t.linkedBy], ['bob', 4, 'manual']);
    assert.throws(
      () => store.linkTrace('f'.repeat(32), { sessionId: 'x' }),
      (e: unknown) => e instanceof TraceStoreError && e.problem === 'not-found',
    );
  });

  it("lists a session's traces: all, one branch's (no session-only trace among them), or the session-only ones", () => {
    store.addSpans([
      rec('71', { link: { sessionId: 'carol', branchId: 'main', turnNumber: 1 } }),
      rec('72', { link: { sessionId: 'carol', branchId: 'alt', turnNumber: 2 } }),
      rec('73', { link: { sessionId: 'carol' } }),
    ]);
    const ids = (branchId?: string | null) =>
      store
        .tracesOfSession('carol', branchId === undefined ? {} : { branchId })
        .map((t) => t.traceId.replace(/^0+/, ''))
        .sort();
    assert.deepEqual(ids(), ['71', '72', '73']);
    assert.deepEqual(ids('main'), ['71']);
    assert.deepEqual(ids('alt'), ['72']);
    assert.deepEqual(ids(null), ['73']);
  });

  it("clears one session's traces and keeps the others", () => {
    store.addSpans([rec('e', { link: { sessionId: 'gone' } }), rec('e'), rec('f', { link: { sessionId: 'kept' } })]);
    assert.equal(store.clearSession('gone'), 2);
    assert.deepEqual(store.counts(), { traces: 1, spans: 1 });
    assert.equal(store.tracesOfSession('kept').length, 1);
  });

  it('keeps at most maxSpans spans, dropping the oldest traces first, and drops traces past maxAgeDays', () => {
    const day = 86_400_000;
    store.addSpans([rec('10'), rec('10')], 1_000 * day);
    store.addSpans([rec('11'), rec('11')], 1_005 * day);
    store.addSpans([rec('12'), rec('12')], 1_009 * day);
    assert.equal(store.prune({ maxSpans: 4 }, 1_010 * day), 2);
    assert.equal(store.trace('10'.padStart(32, '0')), undefined);
    assert.equal(store.prune({ maxAgeDays: 3 }, 1_010 * day), 2);
    assert.deepEqual(store.counts(), { traces: 1, spans: 2 });
  });

  it('exports OTLP JSON that imports back to the same spans', () => {
    const otlp = parseOtlpJson(
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '5b8efff798038103d269b633813fc60c',
                    spanId: 'eee19b7ec3c1b174',
                    name: 'invoke_agent Support',
                    kind: 2,
                    startTimeUnixNano: '1764685200000001000',
                    endTimeUnixNano: '1764685203000000000',
                    attributes: [
                      { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
                      { key: 'gen_ai.conversation.id', value: { stringValue: 'alice' } },
                      { key: 'list', value: { arrayValue: { values: [{ intValue: '1' }, { doubleValue: 2.5 }, { boolValue: true }] } } },
                      { key: 'map', value: { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } } },
                    ],
                    events: [{ name: 'note', timeUnixNano: '1764685201000000000', attributes: [] }],
                    status: { code: 2, message: 'boom' },
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    store.addSpans(otlp.spans.map((s) => spanRecordOf(s, 'otlp')));
    const stored = store.spansOfTrace('5b8efff798038103d269b633813fc60c');
    const again = parseOtlpJson(JSON.stringify(exportOtlpJson(stored))).spans;
    assert.deepEqual(
      again,
      otlp.spans.map((s) => ({ ...s, scope: 'agent-session-inspector' })),
    );
  });

  it('refuses a session file untouched, and a store of a newer format', () => {
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    const before = sha(session);
    assert.throws(
      () => TraceStore.open(session),
      (e: unknown) => e instanceof TraceStoreError && e.problem === 'not-trace-store' && /never in a session file/.test(e.message),
    );
    assert.equal(sha(session), before);
    const newer = join(tmp.dir, 'newer.db');
    TraceStore.open(newer).close();
    const db = openDatabase(newer);
    db.prepare("UPDATE trace_store_meta SET value = '2' WHERE key = 'format'").run();
    db.close();
    assert.throws(
      () => TraceStore.open(newer),
      (e: unknown) => e instanceof TraceStoreError && e.problem === 'newer-format',
    );
    const text = join(tmp.dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, but long enough to have a header of sorts '.repeat(20));
    assert.throws(
      () => TraceStore.open(text),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'not-sqlite',
    );
  });
});
