/**
 * Tool arguments compared as JSON values (src/agents/replay/toolArguments.ts): key order, spacing and number spelling
 * do not make two arguments differ; text that is not JSON is compared as text; the diff says what changed, per path.
 */
import { strict as assert } from 'node:assert';
import { argumentDiff, argumentsKey, parseArguments } from '../../../../src/shared/compare/toolArguments';

const key = (text: string): string => argumentsKey(parseArguments(text));
const diff = (recorded: string, actual: string): string[] => argumentDiff(parseArguments(recorded), parseArguments(actual));

describe('replay: tool arguments as JSON values', () => {
  it('ignores key order at every depth, and spacing', () => {
    assert.equal(key('{"city":"Paris","units":{"t":"C","w":"kmh"}}'), key('{ "units": {"w":"kmh", "t":"C"}, "city": "Paris" }'));
    assert.notEqual(key('{"a":[1,2]}'), key('{"a":[2,1]}'), 'array order is part of the value');
  });

  it('treats 1, 1.0 and 1e0 as one number, and 1 and "1" as two values', () => {
    assert.equal(key('{"n":1}'), key('{"n":1.0}'));
    assert.equal(key('{"n":1}'), key('{"n":1e0}'));
    assert.equal(key('{"n":0.5}'), key('{"n":5e-1}'));
    assert.notEqual(key('{"n":1}'), key('{"n":"1"}'));
    assert.notEqual(key('{"n":1}'), key('{"n":1.5}'));
  });

  it('compares numbers by their exact value, not as JavaScript rounds them', () => {
    assert.notEqual(key('{"order_id":9007199254740992}'), key('{"order_id":9007199254740993}'));
    assert.deepEqual(diff('{"order_id":9007199254740993}', '{"order_id":9007199254740992}'), [
      'order_id: 9007199254740993 → 9007199254740992',
    ]);
    assert.notEqual(key('{"limit":1e400}'), key('{"limit":null}'));
    assert.notEqual(key('{"limit":1e400}'), key('{"limit":1e401}'));
    assert.notEqual(key('{"x":0.1}'), key('{"x":0.10000000000000001}'));
    // Still one value: spellings of one number, either zero, escapes, and a key given twice (the last wins).
    assert.equal(key('{"n":12300}'), key('{"n":1.23e4}'));
    assert.equal(key('{"n":-0}'), key('{"n":0.0e5}'));
    assert.equal(key('{"n":1e400}'), key('{"n":10E399}'));
    assert.equal(key('{"s":"\\u00e9"}'), key('{"s":"é"}'));
    assert.equal(key('{"a":1,"a":2}'), key('{"a":2}'));
    assert.equal(key('{"__proto__":{"x":1}}'), key('{ "__proto__" : {"x":1.0} }'));
    assert.notEqual(key('{"__proto__":{"x":1}}'), key('{}'));
  });

  it('reads as JSON exactly what JSON.parse reads', () => {
    for (const text of ['{}', '[]', ' 1 ', '"x"', 'null', 'true', '[1,{"a":[false]}]', '-1.5E-3'])
      assert.equal(parseArguments(text).json, true, text);
    for (const text of ['{a:1}', '[1,]', '01', '1.', '.5', '+1', '"\\x"', "'x'", '{"a":1}x', '', 'NaN'])
      assert.equal(parseArguments(text).json, false, text);
  });

  it('tells null from an absent key', () => {
    assert.notEqual(key('{"x":null}'), key('{}'));
    assert.deepEqual(diff('{"x":null}', '{}'), ['x: null → (absent)']);
  });

  it('compares arguments that are not JSON as text, and never as equal to a JSON value', () => {
    const p = parseArguments('city=Paris');
    assert.equal(p.json, false);
    assert.equal(key('city=Paris'), key('city=Paris'));
    assert.notEqual(key('city=Paris'), key('city=Paris '), 'text is compared exactly');
    // The text `"x"` is JSON (a string); the text `x` is not: they stay two arguments.
    assert.notEqual(key('"x"'), key('x'));
    assert.deepEqual(diff('city=Paris', 'city=Lisbon'), ['"city=Paris" → "city=Lisbon" (compared as text: not JSON)']);
    assert.deepEqual(diff('city=Paris', 'city=Paris'), []);
  });

  it('diffs one line per changed, added or removed argument, with dotted paths inside objects', () => {
    assert.deepEqual(diff('{"city":"Paris","days":3}', '{"days":3.0,"city":"Lisbon"}'), ['city: "Paris" → "Lisbon"']);
    assert.deepEqual(diff('{"q":{"from":"a","to":"b"}}', '{"q":{"from":"a","to":"c"},"extra":true}'), [
      'extra: (absent) → true',
      'q.to: "b" → "c"',
    ]);
    assert.deepEqual(diff('{"ids":[1,2]}', '{"ids":[1,3]}'), ['ids: [1,2] → [1,3]']);
    assert.deepEqual(diff('{"a":1}', '[1]'), ['(arguments): {"a":1} → [1]']);
    assert.deepEqual(diff('{"a":1,"b":{"c":1}}', '{"b":{"c":1.0},"a":1}'), [], 'equal values: no lines');
  });

  it('keeps the diff short: at most 8 lines, long values cut', () => {
    const many = (v: number) => JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, v])));
    assert.equal(diff(many(1), many(2)).length, 8);
    const [line] = diff(JSON.stringify({ t: 'x'.repeat(500) }), JSON.stringify({ t: 'y'.repeat(500) }));
    assert.ok(line !== undefined && line.length < 200, line);
    assert.match(line, /^t: "x{79}… → "y{79}…$/);
  });
});
