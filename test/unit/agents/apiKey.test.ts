/** Key resolution order, what counts as a local server, and redaction. */
import { strict as assert } from 'node:assert';
import {
  NoApiKeyError,
  PLACEHOLDER_API_KEY,
  describeBaseUrl,
  isLocalBaseUrl,
  redactSecrets,
  resolveApiKey,
} from '../../../src/agents/apiKey';

describe('apiKey', () => {
  describe('resolveApiKey', () => {
    it('prefers the stored key, then OPENAI_API_KEY', () => {
      assert.deepEqual(resolveApiKey({ stored: 'sk-stored', env: { OPENAI_API_KEY: 'sk-env' } }), {
        key: 'sk-stored',
        source: 'secret-storage',
      });
      assert.deepEqual(resolveApiKey({ stored: '  ', env: { OPENAI_API_KEY: 'sk-env' } }), { key: 'sk-env', source: 'environment' });
      assert.deepEqual(resolveApiKey({ stored: null, env: { OPENAI_API_KEY: 'sk-env' }, baseUrl: 'http://localhost:11434/v1' }), {
        key: 'sk-env',
        source: 'environment',
      });
    });

    it('uses a placeholder for a local server without a key', () => {
      assert.deepEqual(resolveApiKey({ env: {}, baseUrl: 'http://127.0.0.1:11434/v1' }), {
        key: PLACEHOLDER_API_KEY,
        source: 'placeholder',
      });
    });

    it('fails with the remedy for the OpenAI API or a remote server without a key', () => {
      for (const baseUrl of [undefined, 'https://api.openai.com/v1', 'https://user:pw@models.example.com/v1?x=1']) {
        assert.throws(
          () => resolveApiKey({ env: {}, baseUrl }),
          (err: unknown) =>
            err instanceof NoApiKeyError &&
            /Run 'Agent Sessions: Set API Key'/.test(err.message) &&
            /OPENAI_API_KEY/.test(err.message) &&
            !err.message.includes('pw@'),
        );
      }
    });

    it('reads process.env when no environment is passed, and only then', () => {
      const saved = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = 'sk-from-process-env';
      try {
        assert.deepEqual(resolveApiKey({ baseUrl: 'https://api.openai.com/v1' }), { key: 'sk-from-process-env', source: 'environment' });
        assert.throws(() => resolveApiKey({ env: {}, baseUrl: 'https://api.openai.com/v1' }), NoApiKeyError);
      } finally {
        if (saved === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = saved;
      }
    });
  });

  it('isLocalBaseUrl: loopback, private ranges, local names; not public hosts', () => {
    const local = [
      'http://localhost:11434/v1',
      'http://127.0.0.1:8000/v1',
      'http://127.8.9.10/v1',
      'http://[::1]:8000/v1',
      'http://10.1.2.3/v1',
      'http://172.16.0.1/v1',
      'http://172.31.255.255/v1',
      'http://192.168.1.20:1234/v1',
      'http://169.254.1.1/v1',
      'http://[fd12:3456::1]/v1',
      'http://[fe80::1]/v1',
      'http://[::ffff:192.168.0.1]/v1',
      'http://gpu-box.local:8000/v1',
      'http://ollama:11434/v1',
      'http://api.localhost/v1',
    ];
    const remote = [
      'https://api.openai.com/v1',
      'http://172.32.0.1/v1',
      'http://8.8.8.8/v1',
      'http://[2001:db8::1]/v1',
      'https://example.com/v1',
      'not a url',
    ];
    for (const u of local) assert.equal(isLocalBaseUrl(u), true, u);
    for (const u of remote) assert.equal(isLocalBaseUrl(u), false, u);
  });

  it('describeBaseUrl drops credentials, query and fragment', () => {
    assert.equal(describeBaseUrl('https://me:secret@host.example:8443/v1/?key=abc#x'), 'https://host.example:8443/v1');
  });

  it('redactSecrets removes the key and credential-shaped text', () => {
    const key = 'sk-proj-abcdefghijklmnop0123456789';
    assert.equal(redactSecrets(`401 Incorrect API key provided: ${key}.`, [key]), '401 Incorrect API key provided: [redacted].');
    assert.equal(redactSecrets(`bad key ${encodeURIComponent('k+/=k123456789')}`, ['k+/=k123456789']), 'bad key [redacted]');
    assert.equal(redactSecrets('Authorization: Bearer abcdef123456789'), 'Authorization: Bearer [redacted]');
    assert.equal(redactSecrets('{"authorization":"Bearer xyz987654321"}'), '{"authorization":"Bearer [redacted]"}');
    assert.equal(redactSecrets('key sk-abc***********wxyz here'), 'key [redacted] here');
    assert.equal(redactSecrets('GET /v1/models?api_key=zzz&x=1'), 'GET /v1/models?api_key=[redacted]&x=1');
    assert.equal(redactSecrets('a short token abc', ['abc']), 'a short token abc', 'short strings are not treated as secrets');
    assert.equal(redactSecrets(`uses ${PLACEHOLDER_API_KEY}`, [PLACEHOLDER_API_KEY]), `uses ${PLACEHOLDER_API_KEY}`);
  });
});
