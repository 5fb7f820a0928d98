/**
 * The stream redactor (src/agents/streamRedactor.ts): a secret split across pieces, lines or line breaks never comes
 * out whole or in parts, at any split; text without secrets comes out unchanged, only later.
 */
import { strict as assert } from 'node:assert';
import { LineRedactor, StreamRedactor } from '../../../src/agents/streamRedactor';

const KEY = 'sk-proj-Zq81TESTkeyAbCdEfGh0123456789';
/** A secret that no credential pattern knows: only the secret list can find it. */
const TOKEN = 'tok_9f8e7d6c5b4a3f2e1d0c';

function through(r: StreamRedactor, pieces: string[]): string {
  return pieces.map((p) => r.push(p)).join('') + r.end();
}

/** Every fragment of `secret` at least `min` characters long that would betray it. */
function leaks(out: string, secret: string, min = 6): string[] {
  const found: string[] = [];
  for (let i = 0; i + min <= secret.length; i++) if (out.includes(secret.slice(i, i + min))) found.push(secret.slice(i, i + min));
  return found;
}

describe('StreamRedactor: secrets across the pieces of a stream', () => {
  it('a secret split at every position across two pieces never shows, whole or in halves', () => {
    for (const secret of [KEY, TOKEN]) {
      const text = `the key is ${secret}, done`;
      for (let at = 1; at < text.length; at++) {
        const out = through(new StreamRedactor([secret]), [text.slice(0, at), text.slice(at)]);
        assert.equal(out, 'the key is [redacted], done', `split at ${at}`);
      }
    }
  });

  it('a secret in one-character pieces is redacted; what precedes it is shown before the stream ends', () => {
    const r = new StreamRedactor([TOKEN]);
    const shown: string[] = [];
    for (const c of `hello ${TOKEN}!`) shown.push(r.push(c));
    shown.push(r.end());
    assert.equal(shown.join(''), 'hello [redacted]!');
    assert.ok(shown.slice(0, 6).join('').startsWith('hello'), 'text that cannot start a secret is not held');
  });

  it('text without secrets comes out unchanged', () => {
    const text = 'Mild, 18°C; tomorrow: rain. items tasks sk bearer';
    for (let at = 0; at <= text.length; at++) assert.equal(through(new StreamRedactor([TOKEN]), [text.slice(0, at), text.slice(at)]), text);
  });

  it('an sk- key no one told us about is redacted across pieces too', () => {
    const out = through(new StreamRedactor([]), ['using sk-proj-Zq81TES', 'TkeyAbCdEfGh0123456789 now']);
    assert.equal(out, 'using [redacted] now');
  });

  it('a secret with a line break inside it (printed on two lines) is redacted, the line kept', () => {
    const lines = new LineRedactor([TOKEN]);
    const out = [...lines.push(`key ${TOKEN.slice(0, 9)}`), ...lines.push(`${TOKEN.slice(9)} end`), ...lines.push('next'), ...lines.end()];
    assert.deepEqual(out, ['key [redacted]', ' end', 'next']);
    assert.deepEqual(leaks(out.join('\n'), TOKEN), []);
  });

  it('lines that cannot start a secret come out at once', () => {
    const lines = new LineRedactor([TOKEN]);
    assert.deepEqual(lines.push('plain line'), ['plain line']);
    assert.deepEqual(lines.end(), []);
  });

  it('a long delta made of token-like text costs time linear in its length', () => {
    // Each `sk-` could start a token running to the end; the `!` says none does.
    const text = 'sk-'.repeat(100_000) + '!';
    const t0 = Date.now();
    const r = new StreamRedactor([TOKEN]);
    const out = r.push(text) + r.end();
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
    assert.equal(out, '[redacted]!');
  });

  it('a bearer token or an Authorization header split at every position is redacted as when whole', () => {
    for (const text of [
      'token: Bearer QWERTYUIOPASDFGH! done',
      'Authorization: QWERTYUIOPASDFGH done',
      'authorization=Bearer QWERTYUIOPASDFGH, x',
    ]) {
      const whole = through(new StreamRedactor([]), [text]);
      assert.ok(!whole.includes('QWERTY'), whole);
      for (let at = 1; at < text.length; at++)
        assert.equal(through(new StreamRedactor([]), [text.slice(0, at), text.slice(at)]), whole, `${text} split at ${at}`);
    }
  });

  it("a secret's URL-encoded form split across pieces is redacted", () => {
    const secret = 'pass/word+with=chars&more';
    const text = `url?x=${encodeURIComponent(secret)}&y=1`;
    for (let at = 1; at < text.length; at++) {
      const out = through(new StreamRedactor([secret]), [text.slice(0, at), text.slice(at)]);
      assert.equal(out, 'url?x=[redacted]&y=1', `split at ${at}`);
    }
  });

  it('two secrets, one starting inside the other, never show in parts at any split', () => {
    const secrets = ['abcdEFGH12345678', 'aaaaaaaab'];
    const text = 'x aaaaaaaab y abcdEFGH12345678 z';
    for (let at = 1; at < text.length; at++)
      for (let at2 = at + 1; at2 < text.length; at2++) {
        const out = through(new StreamRedactor(secrets), [text.slice(0, at), text.slice(at, at2), text.slice(at2)]);
        assert.equal(out, 'x [redacted] y [redacted] z', `split at ${at}, ${at2}`);
      }
    // Nine a's and b: an a, then the second secret, which the first one's start (a) once cut in two.
    const out = through(new StreamRedactor(secrets), ['a', 'aa', 'a', 'a', 'aaaa', 'b']);
    assert.equal(out, 'a[redacted]');
  });

  it('short strings and the placeholder are not secrets', () => {
    assert.equal(through(new StreamRedactor(['abc', 'agent-sessions-no-key']), ['abc agent-sessions-no-key']), 'abc agent-sessions-no-key');
  });
});
