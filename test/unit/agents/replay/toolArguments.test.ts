/**
 * Tool arguments compared as JSON values (src/agents/replay/toolArguments.ts): key order, spacing and number spelling
 * do not make two arguments differ; text that is not JSON is compared as text; the diff says what changed, per path.
 */
import { strict as assert } from 'node:assert';
import { argumentDiff, argumentsKey, parseArguments } from '../../../../src/agents/replay/toolArguments';

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
