/**
 * What a session file holds reaches the user's terminal through `agent-sessions`: text that sets the window's title,
 * writes the clipboard (OSC 52), clears the screen or moves the cursor must arrive as text (`\uXXXX`), in every
 * command's output and its errors, while `--json` keeps every value and the CLI's own colours stay codes. Run as the
 * real binary, so the writes are the process's own.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { neutralizeControls, paint } from '../../../src/cli/terminal';
import { AdvancedSQLiteSession } from '../../../src/store';
import { execSql } from '../../support/sessionHelpers';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';
import { nodeCommand } from '../agents/command/commandKit';

const c = (code: number) => String.fromCharCode(code);
const ESC = c(0x1b);
const BEL = c(7);
/** A title, a clipboard write, a screen clear, a colour of the terminal's own, a lone CR, a C1 CSI, BS and DEL. */
const HOSTILE = `title ${ESC}]0;PWNED${BEL} clip ${ESC}]52;c;ZWNobyBwd25lZA==${BEL} clear ${ESC}[2J red ${ESC}[5mX cr\rover c1 ${c(0x9b)}31m bs${c(8)} del${c(0x7f)}`;
/** Anything a terminal acts on but tab and line feed, CR LF and the CLI's own colour codes. */
const ACTING = new RegExp(`[${c(0)}-${c(8)}${c(0xb)}-${c(0x1f)}${c(0x7f)}-${c(0x9f)}]`);

describe('the CLI writes no terminal controls from data', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-controls-');
  const cli = sharedCliPath();
  const db = join(tmp.dir, 'evil.db');

  before(async () => {
    await buildSharedCli();
    const s = new AdvancedSQLiteSession({ sessionId: 'evil', dbPath: db, createTables: true });
    await s.addItems([
      { role: 'user', content: `hello ${HOSTILE}` },
      { role: 'assistant', content: `answer ${HOSTILE}` },
    ] as never);
    s.close();
    // A session id with controls, as another writer may store it (ours are checked on the way in).
    execSql(db, `INSERT INTO agent_sessions (session_id) VALUES ('id' || char(27) || ']0;PWNED' || char(7))`);
  });
  after(() => tmp.cleanup());

  function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', PAGER: 'cat' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  for (const args of [
    ['show', db, 'evil'],
    ['search', db, 'hello'],
    ['search', db, 'title'],
    ['export', db, 'evil', '--format', 'md'],
    ['ls', db],
  ]) {
    it(`${[args[0], ...args.slice(2)].join(' ')}: the text arrives, its controls as \\uXXXX`, () => {
      const r = run(args);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, ACTING);
      assert.ok(r.stdout.includes('\\u001b]0;PWNED\\u0007'), r.stdout);
    });
  }

  it('an error quoting a name from outside: the name as text', () => {
    const r = run(['show', db, 'evil', '--branch', `x${ESC}]0;PWNED${BEL}`]);
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stderr, ACTING);
    assert.ok(r.stderr.includes('x\\u001b]0;PWNED\\u0007'), r.stderr);
  });

  it("an agent's streamed text: a CR LF split across two deltas stays CR LF, a lone CR is written out", () => {
    const command = nodeCommand(
      tmp.dir,
      'crlf.js',
      `const out = (e) => console.log(JSON.stringify(e));
       out({ type: 'RUN_STARTED', threadId: 'evil', runId: 'r' });
       for (const delta of ['one\\r', '\\ntwo', ' lone\\r', 'x', ' end\\r']) out({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta });
       process.exit(2);`,
    );
    const r = run(['run', db, 'evil', '--command', command, '-m', 'hi']);
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stdout.replaceAll('\r\n', '\n'), ACTING);
    assert.ok(r.stdout.includes('one\r\ntwo lone\\u000dx end\r\n'), JSON.stringify(r.stdout));
  });

  it('--json keeps every value: the items parse back to what the file holds', () => {
    const r = run(['show', db, 'evil', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, ACTING);
    const items = JSON.parse(r.stdout) as { content: unknown }[];
    assert.equal(JSON.stringify(items).includes(JSON.stringify(`hello ${HOSTILE}`)), true);
  });
});

describe('neutralizeControls', () => {
  it("keeps tab, line feed, CR LF and the CLI's own colours; writes the rest out", () => {
    const own = paint(true, 'red', paint(true, 'bold', 'x'));
    assert.equal(neutralizeControls(`a\tb\nc\r\nd${own}`), `a\tb\nc\r\nd${own}`);
    assert.equal(neutralizeControls(`${ESC}[5mX${ESC}]0;t${BEL}`), '\\u001b[5mX\\u001b]0;t\\u0007');
    assert.equal(neutralizeControls(`a\rb${c(0x9b)}${c(0x7f)}${c(0)}`), 'a\\u000db\\u009b\\u007f\\u0000');
  });

  it('JSON of any text means the same after it', () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => c(i)).join('') + HOSTILE;
    const json = neutralizeControls(JSON.stringify({ all }));
    assert.doesNotMatch(json, ACTING);
    assert.equal((JSON.parse(json) as { all: string }).all, all);
  });
});
