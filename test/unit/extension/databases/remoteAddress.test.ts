/**
 * The address without its secret (src/extension/databases/remoteAddress.ts): a password given as `user:pass@` or as
 * `?password=` — both read by pg and ioredis — leaves the address, which is what the workspace state, the tree, the MCP
 * server definitions and the chat prompts hold, and the password split off is the one the driver would have used,
 * checked against the drivers' own address parsers.
 */
import { strict as assert } from 'node:assert';
import { parse as parsePostgresUrl } from 'pg-connection-string';
import { splitPassword } from '../../../../src/extension/databases/remoteAddress';
import { turnPrompt } from '../../../../src/extension/codingAgents/handOverPrompts';
import { redactUrl, secretOf } from '../../../../src/store/remote/remoteErrors';
import { createPostgresPool } from '../../../../src/store/remote/postgresConnection';
import { connectRedis } from '../../../../src/store/remote/redisConnection';
import { UserFacingError } from '../../../../src/extension/core/userError';

// ioredis's own address parser, the one `new Redis(url)` uses (not in its typings).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseURL: parseRedisUrl } = require('ioredis/built/utils') as { parseURL: (url: string) => { password?: string } };

const SECRET = 'S3cret-pa55';

/** The password the driver for `url` would send. */
const driverPassword = (url: string): string | undefined =>
  (url.startsWith('postgres') ? parsePostgresUrl(url).password : parseRedisUrl(url).password) || undefined;

const CASES: { url: string; address: string; driverIgnores?: true }[] = [
  { url: `postgresql://agents@db.internal:5432/prod?password=${SECRET}`, address: 'postgresql://agents@db.internal:5432/prod' },
  { url: `postgres://agents@db/prod?sslmode=require&password=${SECRET}`, address: 'postgres://agents@db/prod?sslmode=require' },
  { url: `postgres://agents:${SECRET}@db/prod`, address: 'postgres://agents@db/prod' },
  // pg lets the parameter win over `user:pass@`: that is the password to keep.
  { url: `postgres://agents:old@db/prod?password=${SECRET}`, address: 'postgres://agents@db/prod' },
  { url: `redis://db:6379/0?password=${SECRET}`, address: 'redis://db:6379/0' },
  // ioredis reads the parameter only when the address has no user name; it is a secret all the same, moved like the
  // others, and given to the driver apart from the address, which it then uses.
  { url: `rediss://default@db:6380/2?password=${SECRET}`, address: 'rediss://default@db:6380/2', driverIgnores: true },
  { url: `redis://:${SECRET}@db:6379/0`, address: 'redis://db:6379/0' },
  // ioredis lets `user:pass@` win over the parameter.
  { url: `redis://:${SECRET}@db:6379/0?password=old`, address: 'redis://db:6379/0' },
];

describe('server addresses without their password', () => {
  for (const { url, address, driverIgnores } of CASES)
    it(url, () => {
      const split = splitPassword(url);
      assert.equal(split.address, address);
      assert.equal(split.password, SECRET);
      if (!driverIgnores) assert.equal(driverPassword(url), SECRET, 'the driver reads the same password from the address as given');
      assert.ok(!split.address.includes(SECRET) && !split.address.includes('old'));
      assert.equal(redactUrl(split.address), split.address, 'nothing is left to mask');
      // The address is what a hand-over prompt shows as the store.
      assert.ok(!turnPrompt({ dbPath: split.address, sessionId: 's', branchId: 'main', turn: 1 }).includes(SECRET));
    });

  it('decodes a percent-encoded password and keeps the other parameters', () => {
    const url = 'postgres://agents@db/prod?application_name=x&password=p%40ss%26w%3Drd&sslmode=require';
    assert.deepEqual(splitPassword(url), {
      address: 'postgres://agents@db/prod?application_name=x&sslmode=require',
      password: 'p@ss&w=rd',
    });
    assert.equal(driverPassword(url), 'p@ss&w=rd');
  });

  // A password holding `/`, `?` or `#` unencoded: the parser fails, or reads `u:12/34@host` as host u, port 12.
  const UNCLEAR: [string, string, string][] = [
    ['postgresql://user:se/cret@localhost:1/db', 'postgresql://user:***@localhost:1/db', 'se/cret'],
    ['postgres://u:12/34@host/db', 'postgres://u:***@host/db', '12/34'],
    ['postgres://u:a#b@h/db', 'postgres://u:***@h/db', 'a#b'],
    ['postgres://u:a?b@h/db', 'postgres://u:***@h/db', 'a?b'],
    ['redis://:top/secret@h:6379/0', 'redis://:***@h:6379/0', 'top/secret'],
    ['rediss://to/ken@h:6380/0', 'rediss://***@h:6380/0', 'to/ken'],
  ];
  for (const [url, shown, secret] of UNCLEAR)
    it(`an address whose password ends it early is refused, and shown without it: ${shown}`, () => {
      assert.equal(redactUrl(url), shown);
      assert.equal(secretOf(url), secret);
      assert.throws(
        () => splitPassword(url),
        (err: Error) => err instanceof UserFacingError && err.message.includes(shown) && !err.message.includes(secret),
      );
    });

  it('an address whose host or port cannot be read is refused for that, not for its password, which it never shows', async () => {
    const unreadable: [string, string][] = [
      ['postgresql://bob:Pw0rdXyZ@127.0.0.1:99999/db', 'postgresql://bob:***@127.0.0.1:99999/db'],
      ['postgresql://bob:Pw0rdXyZ@/db', 'postgresql://bob:***@/db'],
      ['redis://:Pw0rdXyZ@h:70000/0', 'redis://:***@h:70000/0'],
    ];
    for (const [url, shown] of unreadable) {
      const refused = (err: Error): boolean =>
        err.message.includes(shown) &&
        /check its host and port/.test(err.message) &&
        !/password in/.test(err.message) &&
        !err.message.includes('Pw0rdXyZ');
      assert.throws(
        () => splitPassword(url),
        (err: Error) => err instanceof UserFacingError && refused(err),
        url,
      );
      if (url.startsWith('postgresql:')) assert.throws(() => createPostgresPool({ url }), refused, url);
      else await assert.rejects(connectRedis({ url }), refused, url);
    }
  });

  it('an address that does not parse shows no secret of its query', () => {
    assert.equal(
      redactUrl('postgres://db:99999999/x?sslpassword=s3cr&password=p4ss'),
      'postgres://db:99999999/x?sslpassword=***&password=***',
    );
    assert.equal(redactUrl('redis://h:port/0?db=1&api_key=k#f'), 'redis://h:port/0?db=1&api_key=***#f');
  });

  it("an '@' in the query of an address without credentials is no password", () => {
    const url = 'postgres://db/prod?application_name=a@b';
    assert.equal(redactUrl(url), url);
    assert.deepEqual(splitPassword(url), { address: url, password: undefined });
  });

  it('takes an empty password as none, and leaves an address without one as it is', () => {
    assert.deepEqual(splitPassword('redis://db:6379/0?password='), { address: 'redis://db:6379/0', password: undefined });
    assert.deepEqual(splitPassword('postgres://agents@db/prod?sslmode=require'), {
      address: 'postgres://agents@db/prod?sslmode=require',
      password: undefined,
    });
  });
});
