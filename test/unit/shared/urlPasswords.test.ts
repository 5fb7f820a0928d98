import { strict as assert } from 'node:assert';
import { hideUrlPasswords, urlHasPassword, urlWithoutPassword } from '../../../src/shared/urlPasswords';

describe('urlPasswords: the password of an address kept out of text', () => {
  it('masks the password of every address in a message, and leaves the rest of the text as it was', () => {
    assert.equal(
      hideUrlPasswords('There is no review store postgresql://bob:Pw0rdXyZ@127.0.0.1:1/db.'),
      'There is no review store postgresql://bob:***@127.0.0.1:1/db.',
    );
    // What fetch said of the agent URL it refused, inside our own message that quoted it first.
    assert.equal(
      hideUrlPasswords(
        'The agent at http://user:s3cretpw@127.0.0.1:1/x could not be reached (Request cannot be constructed from a URL that includes credentials: http://user:s3cretpw@127.0.0.1:1/x).',
      ),
      'The agent at http://user:***@127.0.0.1:1/x could not be reached (Request cannot be constructed from a URL that includes credentials: http://user:***@127.0.0.1:1/x).',
    );
    assert.equal(
      hideUrlPasswords("ENOENT: no such file or directory, open 'postgresql://bob:Pw0rdXyZ@127.0.0.1:1/db'"),
      "ENOENT: no such file or directory, open 'postgresql://bob:***@127.0.0.1:1/db'",
    );
    assert.equal(hideUrlPasswords('redis://:s3cret@cache:6379/0 and REDISS://U:P4ss@H'), 'redis://:***@cache:6379/0 and REDISS://U:***@H');
    // A line break ends an address: the next line's `@` is no part of it.
    assert.equal(hideUrlPasswords('at http://u:pw@h/x\nmail admin@example.com'), 'at http://u:***@h/x\nmail admin@example.com');
  });

  it('keeps the user name, and whatever holds no password', () => {
    for (const text of [
      'https://bob@host/x',
      'http://u:@host/x',
      'http://host:8080/agent',
      'https://registry.example/@scope/pkg',
      'write to bob@example.com or user:pw@host (no scheme: not an address)',
      'C:\\Users\\bob@work\\conversations.db',
      'notaurl',
      '',
    ])
      assert.equal(hideUrlPasswords(text), text);
  });

  it('takes the user info to the last @, so a password holding @ / ? # : or percent-escapes goes whole', () => {
    const passwords = ['p@ss', 'p%40ss%2Fw%3F', 'a/b', 'a?b=c', 'a#b', 'a:b:c', '@@', 'x@y/z?w#v:u', 'q/w@e?r#t', 'it’s)(', '"q"', 'ü€\\'];
    for (const scheme of ['postgresql', 'redis', 'http', 'mysql'])
      for (const password of passwords) {
        const text = `cannot open ${scheme}://user:${password}@db.internal:5432/prod.`;
        assert.equal(hideUrlPasswords(text), `cannot open ${scheme}://user:***@db.internal:5432/prod.`, text);
      }
  });

  it('masks more than the password where the address cannot say where it ends (an @ after a port), never less', () => {
    assert.equal(hideUrlPasswords('http://host:8080/@scope'), 'http://host:***@scope');
    // Two addresses run together: the last @ is the second's, and both passwords go.
    assert.equal(hideUrlPasswords('http://a:b1b1@h1,http://c:d2d2@h2/x'), 'http://a:***@h2/x');
  });

  it('masks a query or fragment parameter named like a secret, in addresses only', () => {
    assert.equal(
      hideUrlPasswords('postgresql://bob@h/db?sslmode=require&password=Pw0rd&sslpassword=k3y x?password=kept'),
      'postgresql://bob@h/db?sslmode=require&password=***&sslpassword=*** x?password=kept',
    );
    assert.equal(hideUrlPasswords('https://h/agent?api_key=abc&x=1#access_token=t0k'), 'https://h/agent?api_key=***&x=1#access_token=***');
  });

  it('urlWithoutPassword: one address whole, spaces and a missing scheme too', () => {
    assert.equal(urlWithoutPassword('http://user:my pass@host/x'), 'http://user:***@host/x');
    assert.equal(urlWithoutPassword('user:pw@host/x'), 'user:***@host/x');
    assert.equal(urlWithoutPassword('http://user:s3/cr#et@127.0.0.1:1/x'), 'http://user:***@127.0.0.1:1/x');
    assert.equal(urlWithoutPassword('http://127.0.0.1:8000/agent?token=abc'), 'http://127.0.0.1:8000/agent?token=***');
    assert.equal(urlWithoutPassword('http://127.0.0.1:8000/agent'), 'http://127.0.0.1:8000/agent');
    assert.equal(urlWithoutPassword('notaurl'), 'notaurl');
  });

  it('urlHasPassword: a password as text reads it, also where a URL parser finds none; not a secret in the query', () => {
    // A parser reads this as host `u`, port 12 and a path: no password, but 12/34 is one.
    assert.equal(new URL('http://u:12/34@host/x').password, '');
    for (const url of ['http://u:p@h', 'http://u:12/34@host/x', 'http://u:my pass@h', 'redis://:pw@h'])
      assert.equal(urlHasPassword(url), true, url);
    for (const url of ['http://u@h', 'http://h/x?token=abc', 'notaurl', 'https://h/@scope', 'http://u:@h'])
      assert.equal(urlHasPassword(url), false, url);
  });
});
