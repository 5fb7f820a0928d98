/**
 * The remote-store benchmark's content (scripts/bench/remoteData.ts): the session sizes add up to exactly the
 * requested store, turns tile each session, and every item is text Python's SDK would have stored (compact
 * `json.dumps`, ASCII, the Responses item shapes). The PostgreSQL load renders the same templates in SQL; the bench
 * itself compares rows read back from both servers with `renderItem`.
 */
import { strict as assert } from 'node:assert';
import { messageTypeOf, pythonJsonDumpsCompact, toolNameOf } from '../../../src/store';
import {
  BIG_SESSIONS,
  MAX_SESSION_ITEMS,
  MIN_SESSION_ITEMS,
  TOOLS,
  bigSessions,
  itemKind,
  messageTextSql,
  remoteDataSpec,
  renderItem,
  sessionId,
  sessionItems,
  sessionRow,
  sessionSizes,
  turnCount,
  turnItems,
  turnStart,
  turnTimeText,
} from '../../../scripts/bench/remoteData';

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

describe('bench remote data: the store the remote benchmark fills', () => {
  it('spreads exactly the requested items over the sessions, 1–199 each apart from the outliers', () => {
    for (const [sessions, messages] of [
      [100_000, 10_000_000],
      [1000, 100_000],
      [10, 1500],
      [20, 2000],
    ] as const) {
      const sizes = sessionSizes(sessions, messages);
      assert.equal(sizes.length, sessions);
      assert.equal(sum(sizes), messages, `${sessions} sessions`);
      const big = bigSessions(sessions, messages);
      const bigIndexes = new Set(big.map((b) => b.index));
      for (const b of big) assert.equal(sizes[b.index], b.size);
      sizes.forEach((n, i) => {
        if (!bigIndexes.has(i)) assert.ok(n >= MIN_SESSION_ITEMS && n <= MAX_SESSION_ITEMS, `session ${i}: ${n} items`);
      });
    }
  });

  it('is the issue’s store at scale 1, deterministic, with the largest session the first outlier', () => {
    const spec = remoteDataSpec(1);
    assert.equal(spec.sessions, 100_000);
    assert.equal(spec.messages, 10_000_000);
    assert.equal(Math.max(...spec.sizes), BIG_SESSIONS[0]![1]);
    assert.equal(spec.sizes.indexOf(Math.max(...spec.sizes)), 25_000);
    assert.deepEqual(remoteDataSpec(0.01).sizes, remoteDataSpec(0.01).sizes);
    assert.throws(() => sessionSizes(10, 5), /cannot be spread/);
    assert.throws(() => remoteDataSpec(0), /scale/);
  });

  it('tiles every session with turns that each open with a user item', () => {
    for (let n = 1; n <= 65; n++) {
      const turns = turnCount(n);
      let covered = 0;
      for (let k = 0; k < turns; k++) {
        assert.equal(turnStart(k), covered, `n=${n} k=${k}`);
        const count = turnItems(n, k);
        assert.ok(count >= 1 && count <= 4);
        assert.equal(itemKind(k, 0), 'user');
        covered += count;
      }
      assert.equal(covered, n);
      assert.equal([...sessionItems(7, n)].length, n);
    }
  });

  it('renders items as Python stores them: compact ASCII JSON in the Responses shapes, 140–330 bytes', () => {
    const kinds = new Map<string, number>();
    for (const i of [0, 1, 97, 25_000, 99_999]) {
      for (let k = 0; k < 12; k++) {
        const callIds = new Set<string>();
        for (let p = 0; p < (k % 3 === 2 ? 2 : 4); p++) {
          const text = renderItem(i, k, p);
          assert.ok(/^[\x20-\x7e]+$/.test(text), 'printable ASCII only');
          assert.ok(text.length >= 140 && text.length <= 330, `${text.length} bytes: ${text}`);
          const value = JSON.parse(text) as Record<string, unknown>;
          assert.equal(pythonJsonDumpsCompact(value), text, 'byte for byte what json.dumps(separators=(",", ":")) writes');
          const kind = itemKind(k, p);
          assert.equal(messageTypeOf(value), kind);
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          if (kind === 'function_call') {
            assert.equal(toolNameOf(value), TOOLS[k % TOOLS.length]);
            assert.deepEqual(Object.keys(JSON.parse(value.arguments as string) as object), ['q', 'limit']);
          }
          if (typeof value.call_id === 'string') callIds.add(value.call_id);
          if (kind === 'user') assert.match(String(value.content), new RegExp(`^Turn ${k + 1}: `));
        }
        assert.ok(callIds.size <= 1, 'a call and its output share the call id');
      }
    }
    assert.deepEqual([...kinds.keys()].sort(), ['assistant', 'function_call', 'function_call_output', 'user']);
  });

  it('dates each session by its first and last turn, in PostgreSQL’s and Redis’s forms', () => {
    for (const [i, n] of [
      [0, 1],
      [5, 199],
      [25_000, 100_000],
    ] as const) {
      const row = sessionRow(i, n);
      assert.equal(row.sessionId, sessionId(i));
      assert.match(row.createdText, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
      assert.ok(row.createdText <= row.updatedText);
      assert.equal(row.updatedText, turnTimeText(i, turnCount(n) - 1));
      for (const [text, unix] of [
        [row.createdText, row.createdUnix],
        [row.updatedText, row.updatedUnix],
      ] as const) {
        assert.equal(String(Math.floor(Date.parse(`${text.slice(0, 19).replace(' ', 'T')}Z`) / 1000)), unix);
      }
    }
    assert.equal(sessionId(42), 'acct-042-0000042');
    const share = Array.from({ length: 10_000 }, (_, i) => sessionId(i)).filter((id) => id.startsWith('acct-042-')).length;
    assert.ok(share > 90 && share < 120, `${share} of 10,000 sessions share a prefix`);
  });

  it('builds the SQL twin of the templates from the same parts', () => {
    const sql = messageTextSql({ i: 'x.i', k: 'x.k', p: 'x.p', h: 'x.h' });
    assert.doesNotMatch(sql, /undefined|NaN|\[object/);
    assert.equal((sql.match(/\(/g) ?? []).length, (sql.match(/\)/g) ?? []).length);
    for (const tool of TOOLS) assert.ok(sql.includes(`'${tool}'`));
    assert.ok(sql.includes(`'","type":"function_call_output"}'`));
  });
});
