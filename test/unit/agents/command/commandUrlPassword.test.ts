/**
 * An agent URL with a password (the extension's `agentSessions.agent.url` is not checked as the CLI's `--url` is): fetch
 * refuses it, and the run fails without the password in any event, message or log line.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandOnBranch } from '../../../../src/agents/command/commandRun';
import { eventLog, seedSession } from '../agentTestKit';
import { failed } from './commandKit';

describe('agent URLs with a password: never shown', function () {
  this.timeout(30_000);
  let dir: string;
  let dbPath: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-url-password-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [['Weather in Paris?', 'Mild.']]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const password of ['s3cretpw', 'Zq9/x#Y@w']) {
    it(`fails the run as unreachable, naming the agent as user:***@ (password ${JSON.stringify(password)})`, async () => {
      const log = eventLog();
      const lines: string[] = [];
      const o = failed(
        await runCommandOnBranch({
          dbPath,
          sessionId: 's1',
          agent: { kind: 'url', url: `http://user:${password}@127.0.0.1:1/agent` },
          input: 'And after?',
          onEvent: log.onEvent,
          log: (l) => void lines.push(l),
        }),
      );
      assert.match(o.message, /^The agent at http:\/\/user:\*\*\*@127\.0\.0\.1:1\/agent could not be reached \(/);
      const started = log.events.find((e) => e.kind === 'run/started');
      assert.equal(started?.agentName, 'http://user:***@127.0.0.1:1/agent');
      const everything = JSON.stringify([log.events, o, lines]);
      assert.ok(!everything.includes(password), everything);
      assert.ok(!everything.includes(encodeURIComponent(password)), everything);
    });
  }
});
