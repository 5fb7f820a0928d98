/**
 * Spec §5: `pythonJsonDumps` must write exactly what Python's `json.dumps` (default settings) writes, `previewJson`
 * the same with raw non-ASCII (`ensure_ascii=False`), and `pythonJsonLoads` must read what `json.loads` reads.
 * Every expected text below is what CPython 3 produces for the same value (checked by hand against the json module).
 */
import { strict as assert } from 'node:assert';
import { InvalidArgumentError } from '../../../../src/store/errors';
import { formatNumber, previewJson, pythonJsonDumps, pythonJsonLoads } from '../../../../src/store/format/pythonJson';

/** Asserts `fn` throws an `InvalidArgumentError` (Python `TypeError`/`ValueError` equivalent) with `message`. */
function assertInvalid(fn: () => unknown, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${String(err)}`);
    assert.equal(err.message, message);
    assert.equal(err.pythonType, 'TypeError');
    return true;
  });
}

describe('pythonJson', () => {
  describe('formatNumber (Python float repr / int digits)', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1, '1'],
      [-1, '-1'],
      [42, '42'],
      [2 ** 53, '9007199254740992'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
      [1e15, '1000000000000000'],
      [1e16, '10000000000000000'],
      [1.5e17, '150000000000000000'],
      [1e20, '100000000000000000000'],
      [1e21, '1000000000000000000000'],
      [-1e21, '-1000000000000000000000'],
      [2e22, '20000000000000000000000'],
      [1e23, '99999999999999991611392'],
      [
        1.5e300,
        '1500000000000000078757140382806630373056702871662238732373781173267703686983362293679557062620671796065556665749325817265413784853040645863467188277180060474272580801389863705606745350692182135089053429852456199917621678558451461320111979114170213741868888183230085264257173504208294580298189100810240',
      ],
      [1.5, '1.5'],
      [-1.5, '-1.5'],
      [0.1, '0.1'],
      [0.1 + 0.2, '0.30000000000000004'],
      [1 / 3, '0.3333333333333333'],
      [123456.789, '123456.789'],
      [1e15 + 0.5, '1000000000000000.5'],
      [0.5, '0.5'],
      [0.001, '0.001'],
      [0.0001, '0.0001'],
      [0.00012, '0.00012'],
      [-0.0001, '-0.0001'],
      [9.99e-5, '9.99e-05'],
      [1e-5, '1e-05'],
      [-1e-5, '-1e-05'],
      [1.234e-5, '1.234e-05'],
      [1e-6, '1e-06'],
      [2.5e-7, '2.5e-07'],
      [-2.5e-7, '-2.5e-07'],
      [1e-7, '1e-07'],
      [2 ** -20, '9.5367431640625e-07'],
      [123e-20, '1.23e-18'],
      [1.234e-100, '1.234e-100'],
      [5e-324, '5e-324'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
    ];
    for (const [n, expected] of cases) {
      it(`${String(n)} → ${expected.length > 40 ? expected.slice(0, 40) + '…' : expected}`, () => {
        assert.equal(formatNumber(n), expected);
      });
    }
  });

  describe('pythonJsonDumps: strings (ensure_ascii)', () => {
    const cases: [string, string, string][] = [
      ['empty', '', '""'],
      ['plain ASCII', 'abc XYZ 123', '"abc XYZ 123"'],
      ['double quote', 'say "hi"', '"say \\"hi\\""'],
      ['backslash', 'a\\b', '"a\\\\b"'],
      ['slash is not escaped', 'a/b</script>', '"a/b</script>"'],
      ['single quote, tilde, ampersand', "it's ~&<>", `"it's ~&<>"`],
      ['short escapes', '\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
      ['NUL', '\x00', '"\\u0000"'],
      ['other controls', '\x01\x0b\x0e\x1b\x1f', '"\\u0001\\u000b\\u000e\\u001b\\u001f"'],
      ['space and tilde raw, DEL escaped', ' ~\x7f', '" ~\\u007f"'],
      ['C1 control', '\x80\x9f', '"\\u0080\\u009f"'],
      ['Latin-1', 'é°ß', '"\\u00e9\\u00b0\\u00df"'],
      ['lowercase hex', '\uabcd\u00ff\u0aBc', '"\\uabcd\\u00ff\\u0abc"'],
      ['line separators', '\u2028\u2029', '"\\u2028\\u2029"'],
      ['BMP top', '\uffff\ufeff', '"\\uffff\\ufeff"'],
      ['Kelvin sign', '\u212a', '"\\u212a"'],
      ['astral → surrogate pair', '😀', '"\\ud83d\\ude00"'],
      ['astral mixed', 'a😀b𝄞', '"a\\ud83d\\ude00b\\ud834\\udd1e"'],
      ['lone high surrogate', '\ud800', '"\\ud800"'],
      ['lone low surrogate', '\udfff', '"\\udfff"'],
      ['reversed pair', '\udfff\ud800', '"\\udfff\\ud800"'],
      ['lone surrogate between ASCII', 'a\ud83dz', '"a\\ud83dz"'],
      ['the word NaN', 'NaN Infinity', '"NaN Infinity"'],
      ['spec example', 'Convert 22°C to Fahrenheit', '"Convert 22\\u00b0C to Fahrenheit"'],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => {
        assert.equal(pythonJsonDumps(input), expected);
        // The same escaping applies inside containers and to keys.
        assert.equal(pythonJsonDumps([input]), `[${expected}]`);
        assert.equal(pythonJsonDumps({ [input]: input }), `{${expected}: ${expected}}`);
      });
    }
  });

  describe('pythonJsonDumps: structure and separators', () => {
    const cases: [string, unknown, string][] = [
      [
        'spec §5.1 example',
        { content: 'Convert 22°C to Fahrenheit', role: 'user' },
        '{"content": "Convert 22\\u00b0C to Fahrenheit", "role": "user"}',
      ],
      ['empty object', {}, '{}'],
      ['empty array', [], '[]'],
      ['null', null, 'null'],
      ['true', true, 'true'],
      ['false', false, 'false'],
      ['top-level string', 'x', '"x"'],
      ['top-level number', 7, '7'],
      ['nested arrays', [1, [2, [], [3]]], '[1, [2, [], [3]]]'],
      ['nested objects', { a: {}, b: { c: [] } }, '{"a": {}, "b": {"c": []}}'],
      ['key order kept, not sorted', { b: 1, a: 2, c: 3 }, '{"b": 1, "a": 2, "c": 3}'],
      ['literals in array', [true, false, null], '[true, false, null]'],
      ['non-ASCII key', { é: ['x', { k: null }], b: true, a: 1.5, c: [] }, '{"\\u00e9": ["x", {"k": null}], "b": true, "a": 1.5, "c": []}'],
      [
        'numbers in containers',
        { a: 1e-5, b: [NaN, Infinity, -Infinity], c: 1e21, d: 1.5, e: 1e16, f: 2.5e-7, g: 0.0001 },
        '{"a": 1e-05, "b": [NaN, Infinity, -Infinity], "c": 1000000000000000000000, "d": 1.5, "e": 10000000000000000, "f": 2.5e-07, "g": 0.0001}',
      ],
      [
        'a typical function_call item',
        { type: 'function_call', call_id: 'call_1', name: 'calc', arguments: '{"x":1}' },
        '{"type": "function_call", "call_id": "call_1", "name": "calc", "arguments": "{\\"x\\":1}"}',
      ],
      [
        'list content',
        { role: 'user', content: [{ type: 'input_text', text: 'héllo 😀' }] },
        '{"role": "user", "content": [{"type": "input_text", "text": "h\\u00e9llo \\ud83d\\ude00"}]}',
      ],
      // JS lists integer-like keys first (spec §5.2 accepts this).
      ['integer-like keys first (JS order)', { b: 1, 2: 2, a: 3 }, '{"2": 2, "b": 1, "a": 3}'],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => {
        assert.equal(pythonJsonDumps(input), expected);
      });
    }
  });

  describe('pythonJsonDumps: the value tree JSON.stringify would write', () => {
    it('drops undefined, function and symbol properties', () => {
      assert.equal(pythonJsonDumps({ a: undefined, b: () => 1, c: Symbol('s'), d: 1 }), '{"d": 1}');
      assert.equal(pythonJsonDumps({ a: undefined }), '{}');
      assert.equal(pythonJsonDumps({ x: 1, y: undefined, z: 2 }), '{"x": 1, "z": 2}');
    });

    it('writes null for undefined, function and symbol array entries and holes', () => {
      assert.equal(pythonJsonDumps([undefined, () => 1, Symbol('s'), 1]), '[null, null, null, 1]');
      const sparse: unknown[] = new Array(3);
      sparse[1] = 'b';
      assert.equal(pythonJsonDumps(sparse), '[null, "b", null]');
    });

    it('writes a top-level undefined as null', () => {
      assert.equal(pythonJsonDumps(undefined), 'null');
    });

    it('ignores symbol keys and non-enumerable properties, reads enumerable getters', () => {
      const o: Record<string | symbol, unknown> = { a: 1 };
      o[Symbol('k')] = 2;
      Object.defineProperty(o, 'hidden', { value: 3, enumerable: false });
      Object.defineProperty(o, 'shown', { get: () => 'é', enumerable: true });
      assert.equal(pythonJsonDumps(o), '{"a": 1, "shown": "\\u00e9"}');
    });

    it('honours toJSON (Date)', () => {
      assert.equal(pythonJsonDumps({ d: new Date(0) }), '{"d": "1970-01-01T00:00:00.000Z"}');
      assert.equal(pythonJsonDumps(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))), '"2024-01-02T03:04:05.006Z"');
    });

    it('passes the property key (or index, or "") to toJSON', () => {
      const k = { toJSON: (key: string) => `key=${key}` };
      assert.equal(pythonJsonDumps({ first: k }), '{"first": "key=first"}');
      assert.equal(pythonJsonDumps([k, k]), '["key=0", "key=1"]');
      assert.equal(pythonJsonDumps(k), '"key="');
    });

    it('encodes what toJSON returns, escaping it the Python way', () => {
      assert.equal(pythonJsonDumps({ v: { toJSON: () => ({ s: 'é', n: 1e-5 }) } }), '{"v": {"s": "\\u00e9", "n": 1e-05}}');
      assert.equal(pythonJsonDumps({ v: { toJSON: () => undefined }, w: 1 }), '{"w": 1}');
      assert.equal(pythonJsonDumps([{ toJSON: () => undefined }]), '[null]');
      const self = {
        x: 1,
        toJSON(): unknown {
          return this;
        },
      };
      assert.equal(pythonJsonDumps(self), '{"x": 1}');
    });

    it('unboxes Number, String and Boolean objects', () => {
      assert.equal(pythonJsonDumps([new Number(1e-5), new String('é'), new Boolean(false)]), '[1e-05, "\\u00e9", false]');
    });

    it('writes Map, Set and class instances as JSON.stringify does', () => {
      class Point {
        x = 1;
        y = 'é';
      }
      assert.equal(
        pythonJsonDumps({ m: new Map([[1, 2]]), s: new Set([1]), p: new Point() }),
        '{"m": {}, "s": {}, "p": {"x": 1, "y": "\\u00e9"}}',
      );
    });

    it("rejects BigInt anywhere with Python's message", () => {
      const msg = 'Object of type bigint is not JSON serializable';
      assertInvalid(() => pythonJsonDumps(1n), msg);
      assertInvalid(() => pythonJsonDumps({ a: 1, b: 2n }), msg);
      assertInvalid(() => pythonJsonDumps([1, [2, 3n]]), msg);
      assertInvalid(() => pythonJsonDumps({ content: [{ type: 'input_text', text: 'x', n: 10n }], role: 'user' }), msg);
    });

    it("rejects cycles with Python's message", () => {
      const msg = 'Circular reference detected';
      const a: Record<string, unknown> = { x: 1 };
      a.self = a;
      assertInvalid(() => pythonJsonDumps(a), msg);
      const arr: unknown[] = [1];
      arr.push(arr);
      assertInvalid(() => pythonJsonDumps(arr), msg);
      const p: Record<string, unknown> = {};
      const q: Record<string, unknown> = { p };
      p.q = q;
      assertInvalid(() => pythonJsonDumps({ root: [p] }), msg);
    });

    it('accepts a repeated, non-cyclic shared reference', () => {
      const s = { x: 1 };
      assert.equal(pythonJsonDumps({ a: s, b: s }), '{"a": {"x": 1}, "b": {"x": 1}}');
      assert.equal(pythonJsonDumps([s, [s, { s }]]), '[{"x": 1}, [{"x": 1}, {"s": {"x": 1}}]]');
      const arr = ['é'];
      assert.equal(pythonJsonDumps([arr, arr]), '[["\\u00e9"], ["\\u00e9"]]');
    });
  });

  describe('previewJson (ensure_ascii=False)', () => {
    const cases: [string, unknown, string][] = [
      ['list content, raw non-ASCII', [{ type: 'input_text', text: 'héllo' }], '[{"type": "input_text", "text": "héllo"}]'],
      ['null', null, 'null'],
      ['empty list', [], '[]'],
      ['object with non-ASCII key and value', { é: 'ü' }, '{"é": "ü"}'],
      ['astral raw', ['😀'], '["😀"]'],
      ['DEL raw', ['\x7f'], '["\x7f"]'],
      ['C1 and line separators raw', ['\x80\u2028\u2029'], '["\x80\u2028\u2029"]'],
      ['short escapes', ['\n\r\t\b\f'], '["\\n\\r\\t\\b\\f"]'],
      ['other controls as \\u00XX', ['\x00\x01\x1f'], '["\\u0000\\u0001\\u001f"]'],
      ['quote, backslash, slash', ['"\\/'], '["\\"\\\\/"]'],
      ['numbers as Python writes them', [1e-5, 1.5, 1e21, NaN, -Infinity], '[1e-05, 1.5, 1000000000000000000000, NaN, -Infinity]'],
      ['separators and key order', { b: [1, 2], a: { c: true } }, '{"b": [1, 2], "a": {"c": true}}'],
      // Python: json.dumps(['\ud800'], ensure_ascii=False) leaves the lone surrogate raw (§5.2: only `"`, `\`,
      // the short escapes and code units below 0x20 are escaped).
      ['lone surrogate raw', ['a\ud800b'], '["a\ud800b"]'],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => {
        assert.equal(previewJson(input), expected);
      });
    }

    it('drops undefined properties and honours toJSON like pythonJsonDumps', () => {
      assert.equal(previewJson({ a: undefined, d: new Date(0), f: () => 1 }), '{"d": "1970-01-01T00:00:00.000Z"}');
    });
  });

  describe('pythonJsonLoads', () => {
    const valid: [string, string, unknown][] = [
      ['bare NaN', 'NaN', NaN],
      ['bare Infinity', 'Infinity', Infinity],
      ['bare -Infinity', '-Infinity', -Infinity],
      ['NaN with surrounding whitespace', ' NaN\n', NaN],
      ['Infinity with tabs and CR', '\t\r Infinity \r\n', Infinity],
      ['array of non-finite', '[NaN, Infinity, -Infinity]', [NaN, Infinity, -Infinity]],
      ['array with odd whitespace', '\t[NaN ,Infinity,-Infinity ]\r', [NaN, Infinity, -Infinity]],
      ['nested NaN', '{"a": {"b": [1, NaN]}}', { a: { b: [1, NaN] } }],
      ['nested with spaces', '{"a" : { "b" : [ 1 , NaN ] } }', { a: { b: [1, NaN] } }],
      [
        'NaN next to every kind',
        '[NaN, true, false, null, "s", 1.5, -2, 1e-05, 1E5, {}, []]',
        [NaN, true, false, null, 's', 1.5, -2, 1e-5, 1e5, {}, []],
      ],
      ['string containing NaN next to a real NaN', '{"a": "NaN", "b": NaN}', { a: 'NaN', b: NaN }],
      ['string containing Infinity', '["x Infinity -Infinity y", -Infinity]', ['x Infinity -Infinity y', -Infinity]],
      ['escapes in lenient mode', '["\\"NaN\\\\", NaN]', ['"NaN\\', NaN]],
      ['unicode escapes in lenient mode', '["\\u00e9\\ud83d\\ude00\\ud800", NaN]', ['é😀\ud800', NaN]],
      ['empty containers in lenient mode', '[[], {}, [ ], { }, NaN]', [[], {}, [], {}, NaN]],
      ['string NaN only (no lenient parse needed)', '"NaN"', 'NaN'],
      [
        'plain object',
        '{"content": "Convert 22\\u00b0C to Fahrenheit", "role": "user"}',
        { content: 'Convert 22°C to Fahrenheit', role: 'user' },
      ],
      ['top-level number', '42', 42],
      ['top-level string', '"x"', 'x'],
      ['top-level null', 'null', null],
      ['top-level true', ' true ', true],
      ['huge exponent overflows to Infinity (as Python float)', '1e400', Infinity],
      ['escaped slash', '"a\\/b"', 'a/b'],
      ['duplicate keys: last wins', '{"a": 1, "a": NaN}', { a: NaN }],
    ];
    for (const [name, text, expected] of valid) {
      it(`decodes ${name}`, () => {
        const r = pythonJsonLoads(text);
        assert.ok(r.ok, `expected ok for ${JSON.stringify(text)}: ${r.ok ? '' : r.error}`);
        assert.deepStrictEqual(r.value, expected);
      });
    }

    it('keeps key order, including in lenient mode', () => {
      const plain = pythonJsonLoads('{"b": 1, "a": 2, "c": 3}');
      const lenient = pythonJsonLoads('{"b": NaN, "a": 2, "c": Infinity}');
      assert.ok(plain.ok && lenient.ok);
      assert.deepStrictEqual(Object.keys(plain.value as object), ['b', 'a', 'c']);
      assert.deepStrictEqual(Object.keys(lenient.value as object), ['b', 'a', 'c']);
    });

    it('does not alter strings that contain the words NaN / Infinity', () => {
      const r = pythonJsonLoads('{"content": "NaN is not Infinity; -Infinity NaN", "n": NaN}');
      assert.ok(r.ok);
      assert.deepStrictEqual(r.value, { content: 'NaN is not Infinity; -Infinity NaN', n: NaN });
    });

    it('keeps a "__proto__" key as an own property when NaN forces the lenient parser (as json.loads / JSON.parse)', () => {
      // Python: json.loads('{"__proto__": {"x": 1}, "v": NaN}') == {'__proto__': {'x': 1}, 'v': nan}
      const plain = pythonJsonLoads('{"__proto__": {"x": 1}, "v": 1}');
      assert.ok(plain.ok);
      assert.deepStrictEqual(Object.keys(plain.value as object), ['__proto__', 'v']);
      const r = pythonJsonLoads('{"__proto__": {"x": 1}, "v": NaN}');
      assert.ok(r.ok);
      const obj = r.value as Record<string, unknown>;
      assert.deepStrictEqual(Object.keys(obj), ['__proto__', 'v']);
      assert.equal(Object.getPrototypeOf(obj), Object.prototype);
      assert.equal((obj as { x?: unknown }).x, undefined);
    });

    const invalid: [string, string][] = [
      ['empty text', ''],
      ['whitespace only', '   \n'],
      ['lowercase nan', 'nan'],
      ['uppercase NAN', 'NAN'],
      ['inf', 'inf'],
      ['lowercase infinity', 'infinity'],
      ['-NaN', '-NaN'],
      ['+Infinity', '+Infinity'],
      ['NaN with trailing garbage', 'Infinityx'],
      ['two values', 'NaN NaN'],
      ['trailing bracket', '[NaN]]'],
      ['unterminated array', '[NaN'],
      ['trailing comma in array', '[NaN,]'],
      ['trailing comma in object', '{"a": NaN,}'],
      ['unquoted key', '{a: NaN}'],
      ['single-quoted string', "['NaN', NaN]"],
      ['missing colon', '{"a" NaN}'],
      ['missing comma', '{"a": NaN "b": 1}'],
      ['leading zero', '[01, NaN]'],
      ['bare dot fraction', '[1., NaN]'],
      ['leading dot', '[.5, NaN]'],
      ['bare exponent', '[1e, NaN]'],
      ['lone minus', '-'],
      ['truncated -Infinity', '[-Infinit]'],
      ['raw tab in a string', '["a\tb", NaN]'],
      ['raw newline in a string', '["a\nb"]'],
      ['bad escape', '[NaN, "\\x"]'],
      ['short \\u escape', '[NaN, "\\u12"]'],
      ['unterminated string', '["NaN, NaN]'],
      ['non-breaking space as whitespace', '\u00a0NaN'],
      ['BOM', '\ufeffNaN'],
      ['BOM before plain JSON', '\ufeff{}'],
      ['plain invalid JSON', '{"a": 1'],
      ['plain trailing data', '{"a":1}x'],
      ['Python None', 'None'],
      ['Python True', '[True, NaN]'],
    ];
    for (const [name, text] of invalid) {
      it(`rejects ${name}`, () => {
        const r = pythonJsonLoads(text);
        assert.equal(r.ok, false, `expected failure for ${JSON.stringify(text)}`);
        if (!r.ok) assert.equal(typeof r.error, 'string');
      });
    }

    it('round-trips what pythonJsonDumps writes', () => {
      const values: unknown[] = [
        { content: 'Convert 22°C to Fahrenheit', role: 'user' },
        [NaN, Infinity, -Infinity, 1e-5, 1e21, 'NaN', '😀\ud800', { é: null }],
        { type: 'function_call', name: 'calc', arguments: '{"x": NaN}' },
        'a\x7f\x00\n"\\/',
      ];
      for (const v of values) {
        const r = pythonJsonLoads(pythonJsonDumps(v));
        assert.ok(r.ok);
        assert.deepStrictEqual(r.value, v);
      }
    });
  });
});
