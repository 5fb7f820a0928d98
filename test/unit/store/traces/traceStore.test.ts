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
import { TraceInputError } from '../../../../src/store/traces/traceErrors';
import { tracesCommand } from '../../../../src/cli/tracesCommand';
import type { CommandContext } from '../../../../src/cli/commands';
import type { Terminal } from '../../../../src/cli/terminal';
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

/** One span of trace `traceId` (padded) under the scope `scope`, as OTLP JSON. */
const otlpWithScope = (traceId: string, scope: string) => ({
  resourceSpans: [
    {
      scopeSpans: [
        {
          scope: { name: scope },
          spans: [{ traceId: traceId.padStart(32, '0'), spanId: 'a'.repeat(16), startTimeUnixNano: `${SPAN_T0_US + 1}000` }],
        },
      ],
    },
  ],
});

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

  it("a span sent again with other times moves its trace's first start and last end, either way", () => {
    const id = 'e6'.padStart(32, '0');
    store.addSpans([
      rec('e6', { spanId: '1', startUs: T0, endUs: T0 + 1_000_000, link: { sessionId: 'eve' } }),
      rec('e6', { spanId: '2', startUs: T0 + 100, endUs: T0 + 200 }),
    ]);
    // The exporter's retry, with the times corrected: later start, earlier end.
    store.addSpans([rec('e6', { spanId: '1', startUs: T0 + 50, endUs: T0 + 500, link: { sessionId: 'eve' } })]);
    const t = store.trace(id)!;
    assert.deepEqual([t.startUs, t.endUs, t.spanCount], [T0 + 50, T0 + 500, 2]);
    assert.deepEqual(
      store.tracesOfSession('eve').map((x) => [x.startUs, x.endUs]),
      [[T0 + 50, T0 + 500]],
    );
  });

  it('exports OTLP JSON that imports back to the same spans: value kinds, scopes, status messages, odd attribute names', () => {
    const TRACE = '5b8efff798038103d269b633813fc60c';
    const kv = (key: string, value: unknown) => ({ key, value });
    const span = (spanId: string, attributes: unknown[], extra: Record<string, unknown> = {}) => ({
      traceId: TRACE,
      spanId,
      name: 'invoke_agent Support',
      kind: 2,
      startTimeUnixNano: '1764685200000001000',
      endTimeUnixNano: '1764685203000000000',
      attributes,
      ...extra,
    });
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [kv('service.name', { stringValue: 'bot' }), kv('host.cpus', { doubleValue: 8 })] },
          scopeSpans: [
            {
              scope: { name: 'openai-agents', version: '0.3.0' },
              spans: [
                span(
                  'eee19b7ec3c1b174',
                  [
                    kv('gen_ai.operation.name', { stringValue: 'invoke_agent' }),
                    kv('gen_ai.conversation.id', { stringValue: 'alice' }),
                    kv('int', { intValue: '2' }),
                    kv('whole double', { doubleValue: 2.0 }),
                    kv('big double', { doubleValue: 1e21 }),
                    kv('double', { doubleValue: 2.5 }),
                    kv('nan', { doubleValue: 'NaN' }),
                    kv('int64', { intValue: '9007199254740993' }),
                    kv('digits', { stringValue: '9007199254740993' }),
                    kv('bytes', { bytesValue: Buffer.from('hi').toString('base64') }),
                    kv('empty', {}),
                    kv('list', {
                      arrayValue: {
                        values: [
                          { intValue: '1' },
                          { doubleValue: 2 },
                          { boolValue: true },
                          { arrayValue: { values: [{ doubleValue: 3 }] } },
                        ],
                      },
                    }),
                    kv('map', { kvlistValue: { values: [kv('k', { stringValue: 'v' }), kv('d', { doubleValue: 4 })] } }),
                    kv('constructor', { stringValue: 'c' }),
                    kv('__proto__', { doubleValue: 5 }),
                  ],
                  {
                    events: [{ name: 'note', timeUnixNano: '1764685201000000000', attributes: [kv('score', { doubleValue: 1 })] }],
                    status: { code: 1, message: 'fine' },
                  },
                ),
              ],
            },
            {
              scope: { name: 'app' },
              spans: [
                span('eee19b7ec3c1b175', [], { parentSpanId: 'eee19b7ec3c1b174', status: { code: 2, message: 'boom' } }),
                // An error only `error.type` tells: the record's status is error, the status sent was unset.
                span('eee19b7ec3c1b176', [kv('error.type', { stringValue: 'timeout' })]),
              ],
            },
            { spans: [span('eee19b7ec3c1b177', [])] },
          ],
        },
      ],
    };
    const first = parseOtlpJson(JSON.stringify(request)).spans;
    store.addSpans(first.map((s) => spanRecordOf(s, 'otlp')));
    const stored = store.spansOfTrace(TRACE);
    const root = stored.find((s) => s.spanId === 'eee19b7ec3c1b174')!;
    assert.ok(Object.hasOwn(root.attributes, '__proto__'), 'kept through the store');
    assert.equal(root.attributes.constructor, 'c');
    assert.deepEqual(
      [...stored].sort((a, b) => a.spanId.localeCompare(b.spanId)).map((s) => [s.status, s.error]),
      [
        ['ok', null],
        ['error', 'boom'],
        ['error', 'timeout'],
        ['unset', null],
      ],
    );
    const exported = exportOtlpJson(stored);
    const again = parseOtlpJson(JSON.stringify(exported)).spans;
    const bySpanId = (spans: typeof first) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
    assert.deepEqual(bySpanId(again), bySpanId(first));
    // In the file itself: each value of the kind it was sent as, the scopes and the status as sent.
    type Exported = {
      scopeSpans: {
        scope: { name?: string };
        spans: { spanId: string; attributes: { key: string; value: unknown }[]; status: unknown }[];
      }[];
    }[];
    const scopes = (exported.resourceSpans as Exported)[0]!.scopeSpans;
    assert.deepEqual(
      scopes.map((s) => s.scope.name),
      ['openai-agents', 'app', undefined],
    );
    const value = (key: string) => scopes[0]!.spans[0]!.attributes.find((a) => a.key === key)!.value;
    assert.deepEqual(['whole double', 'big double', 'int', 'int64', 'nan', 'bytes', 'empty'].map(value), [
      { doubleValue: 2 },
      { doubleValue: 1e21 },
      { intValue: '2' },
      { intValue: '9007199254740993' },
      { doubleValue: 'NaN' },
      { bytesValue: 'aGk=' },
      {},
    ]);
    assert.deepEqual(scopes[0]!.spans[0]!.status, { code: 1, message: 'fine' });
    assert.deepEqual(Object.fromEntries(scopes[1]!.spans.map((s) => [s.spanId, s.status])), {
      eee19b7ec3c1b175: { code: 2, message: 'boom' },
      eee19b7ec3c1b176: { code: 0 },
    });
  });

  it('a store from before spans.otlp: read-only it reads as it is, to write it gains the column; its spans export as before', () => {
    const path = join(tmp.dir, 'before-otlp-column.db');
    const old = TraceStore.open(path);
    // A span with no OTLP detail, as every span stored before the column (and each of our own runs') has.
    old.addSpans([rec('f7', { attributes: { big: 1e21, n: 2, half: 0.5 } })]);
    /** The span's scope and attributes as exported. */
    const exported = (store: TraceStore) => {
      const [span] = store.spansOfTrace('f7'.padStart(32, '0'));
      assert.equal('otlp' in span!, false);
      const otlp = exportOtlpJson([span!]) as { resourceSpans: { scopeSpans: { scope: unknown; spans: { attributes: unknown[] }[] }[] }[] };
      const scope = otlp.resourceSpans[0]!.scopeSpans[0]!;
      return [scope.scope, scope.spans[0]!.attributes];
    };
    // Kinds unknown: a number is an int when it is one JS holds exactly, else a double (1e21 is no int64).
    const asBefore = [
      { name: 'agent-session-inspector' },
      [
        { key: 'big', value: { doubleValue: 1e21 } },
        { key: 'n', value: { intValue: '2' } },
        { key: 'half', value: { doubleValue: 0.5 } },
      ],
    ];
    assert.deepEqual(exported(old), asBefore);
    old.close();
    const raw = openDatabase(path);
    raw.exec('ALTER TABLE spans DROP COLUMN otlp');
    raw.close();
    const hasColumn = () => {
      const db = openDatabase(path, { readonly: true });
      try {
        return db.prepare("SELECT 1 FROM pragma_table_info('spans') WHERE name = 'otlp'").get() !== undefined;
      } finally {
        db.close();
      }
    };
    const reader = TraceStore.open(path, { readonly: true });
    try {
      assert.deepEqual(exported(reader), asBefore);
    } finally {
      reader.close();
    }
    assert.equal(hasColumn(), false, 'a read-only open changes nothing');
    const writer = TraceStore.open(path);
    try {
      assert.equal(hasColumn(), true);
      writer.addSpans(parseOtlpJson(JSON.stringify(otlpWithScope('f7', 'later'))).spans.map((s) => spanRecordOf(s, 'otlp')));
      assert.deepEqual(
        writer.spansOfTrace('f7'.padStart(32, '0')).map((s) => s.otlp?.scope ?? null),
        [null, 'later'],
      );
    } finally {
      writer.close();
    }
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

  describe('agent-sessions traces (in this process)', () => {
    const ctx: CommandContext = { term: {} as Terminal, json: false, signal: new AbortController().signal };

    it('lists and shows a trace longer than 24.8 days, and one stored past what a date can show, without failing', () => {
      const path = join(tmp.dir, 'cli-times.db');
      const s = TraceStore.open(path);
      s.addSpans([
        rec('d1', { link: { sessionId: 'carol' }, startUs: T0, endUs: T0 + 30 * 86_400_000_000 }),
        // 1e22 ns, stored before times were bounded on the way in.
        rec('d2', { link: { sessionId: 'bob' }, startUs: 1e19, endUs: 1e19 }),
      ]);
      s.close();
      assert.match(tracesCommand(ctx, 'ls', [], { store: path, session: 'carol' }), /Z {2}2,592,000,000 ms {6}1 span /);
      assert.match(tracesCommand(ctx, 'show', ['d1'.padStart(32, '0')], { store: path }), /\+0 ms {2}2,592,000,000 ms\n$/);
      assert.match(tracesCommand(ctx, 'ls', [], { store: path, session: 'bob' }), /^0{30}d2 {2}10000000000000000000 µs {8}0 ms /);
      assert.match(tracesCommand(ctx, 'show', ['d2'.padStart(32, '0')], { store: path }), /^0{30}d2 {2}10000000000000000000 µs /);
    });

    it('imports a file that starts with a UTF-8 byte order mark; one that is not JSON says so in sentences', () => {
      const path = join(tmp.dir, 'cli-bom.db');
      const file = join(tmp.dir, 'bom.json');
      writeFileSync(file, `\ufeff${JSON.stringify(otlpWithScope('b0', 'notepad'))}`);
      assert.match(tracesCommand(ctx, 'import', [file], { store: path }), /bom\.json: 1 span in 1 trace\n$/);
      const bad = join(tmp.dir, 'cut-short.json');
      writeFileSync(bad, '{"resourceSpans": [');
      assert.throws(
        () => tracesCommand(ctx, 'import', [bad], { store: path }),
        (e: unknown) =>
          e instanceof TraceInputError && /cut-short\.json: The body is not valid JSON: .*[^.]\. Nothing was imported\.$/.test(e.message),
      );
    });
  });
});
