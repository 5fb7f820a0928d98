/**
 * `--redact` on its own (redaction.ts): JSON text redacted string by string, decoded, the rest of it kept byte for byte;
 * text that is not JSON searched whole and between its escapes; nothing else touched.
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_REDACTIONS, redactText, redactValue } from '../../../../src/store/datasets/redaction';

const KEY = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234';
const redact = (text: string) => redactText(text, DEFAULT_REDACTIONS);

describe('redaction', () => {
  it('JSON text: each string decoded, only those that change encoded again, the rest of the text as it was', () => {
    // A big integer and the spacing survive (a parse and a stringify of the whole would lose both).
    const text = `{ "id": 12345678901234567890,\n  "text": "line\\n${KEY}", "keep": "a\\u00e9b" }`;
    assert.equal(redact(text), `{ "id": 12345678901234567890,\n  "text": "line\\n[redacted]", "keep": "a\\u00e9b" }`);
    // A key spelled with escapes inside the key itself, and one in a name.
    assert.equal(redact(`{"k":"sk-\\u0070roj-ABCDEFGHIJKLMNOPQRSTUVWX1234"}`), '{"k":"[redacted]"}');
    assert.equal(redact(`{"ana@example.com":1}`), '{"[redacted]":1}');
    assert.equal(redact(`["a\\tana@example.com"]`), '["a\\t[redacted]"]');
    assert.equal(redact(`"${KEY}"`), '"[redacted]"');
    // JSON text inside JSON text.
    const inner = JSON.stringify({ again: `x\n${KEY}` });
    assert.deepEqual(JSON.parse(redact(JSON.stringify({ inner }))), { inner: JSON.stringify({ again: 'x\n[redacted]' }) });
    const clean = '{"path": ".env",  "n": 1.50}';
    assert.equal(redact(clean), clean);
  });

  it('text that is not JSON: whole, then between its backslash escapes', () => {
    assert.equal(redact(`key: ${KEY}, mail ana@example.com.`), 'key: [redacted], mail [redacted].');
    assert.equal(redact(`{'text': '# deploy\\n${KEY}\\n'}`), `{'text': '# deploy\\n[redacted]\\n'}`);
    assert.equal(redact(`log\\t${KEY}`), 'log\\t[redacted]');
    assert.equal(redact('no secret in {this: text}'), 'no secret in {this: text}');
    // Not a key: no word boundary before it, and no escape either.
    assert.equal(redact('task-ABCDEFGHIJKLMNOPQRSTUV'), 'task-ABCDEFGHIJKLMNOPQRSTUV');
  });

  it('every string of a value, keys kept', () => {
    assert.deepEqual(redactValue({ a: [`${KEY}`, 1, null], b: { c: 'ana@example.com' } }, DEFAULT_REDACTIONS), {
      a: ['[redacted]', 1, null],
      b: { c: '[redacted]' },
    });
  });
});
