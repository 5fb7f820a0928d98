/**
 * The `agent-sessions` command line, run as a real child process from its esbuild bundle (built here with the same
 * options as dist/cli.js and the package's bin) on real files: every command, `--json`, exit codes, no colours when
 * piped, and the errors for bad files.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execSql, query, tables } from '../../support/sessionHelpers';
import { tempDir } from '../../support/tempFiles';
import { PYTHON_FIXTURES, ROOT, copyPythonFixture, writeExportFixture } from '../store/export/exportFixtures';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';

/** The start of an ANSI colour code (a RegExp built from a string: eslint forbids control characters in literals). */
const ESC = new RegExp(String.fromCharCode(27) + '\\[');

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('agent-sessions CLI (the real binary)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-');
  const cli = sharedCliPath();
  const db = join(tmp.dir, 'demo.db');

  before(async () => {
    await buildSharedCli();
    await writeExportFixture(db);
  });
  after(() => tmp.cleanup());

  function run(args: string[], env: Record<string, string> = {}): Result {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: tmp.dir,
      encoding: 'utf8',
      // The bundle lives outside the repository: let it find better-sqlite3 in this checkout's node_modules.
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', PAGER: 'cat', ...env },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  const ok = (r: Result) => {
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
    assert.doesNotMatch(r.stdout + r.stderr, ESC, 'no colours when piped');
    return r.stdout;
  };

  it('ls: sessions with item, turn and branch counts (table and --json; the file as argument or --db)', () => {
    const out = ok(run(['ls', db]));
    assert.match(out, /^SESSION\s+ITEMS\s+TURNS\s+BRANCHES\s+TOKENS\s+UPDATED\n/);
    assert.match(out, /\nweather-trip\s+30\s+7\s+3\s+\d+\s+\d{4}-/);
    const rows = JSON.parse(ok(run(['ls', '--db', db, '--json']))) as {
      sessionId: string;
      items: number;
      turns: number;
      branches: number;
    }[];
    assert.deepEqual(
      rows.filter((r) => r.sessionId === 'weather-trip').map((r) => [r.items, r.turns, r.branches]),
      [[30, 7, 3]],
    );
    assert.equal(ok(run(['ls', db], { AGENT_SESSIONS_DB: '' })), out);
  });

  it('branches: the tree with fork points', () => {
    const out = ok(run(['branches', 'weather-trip', '-d', db]));
    assert.equal(
      out.replace(/ +/g, ' '),
      'main 4 turns 16 items\n├─ lisbon-instead 4 turns 16 items from main at turn 3\n└─ oslo-retry 4 turns 16 items from main at turn 4\n',
    );
    const tree = JSON.parse(ok(run(['branches', 'weather-trip', '-d', db, '--json']))) as { branchId: string; forkTurn: number | null }[];
    assert.deepEqual(
      tree.map((b) => [b.branchId, b.forkTurn]),
      [
        ['main', null],
        ['lisbon-instead', 3],
        ['oslo-retry', 4],
      ],
    );
  });

  it('takes the file as the first argument too (only an existing file), like ls', () => {
    assert.equal(ok(run(['branches', db, 'weather-trip'])), ok(run(['branches', 'weather-trip', '-d', db])));
    assert.equal(ok(run(['show', db, 'weather-trip', '--turn', '2'])), ok(run(['show', 'weather-trip', '-d', db, '--turn', '2'])));
    assert.match(ok(run(['search', db, 'light', 'rain'])), /light rain/);
    // A first argument that is no file stays a session id: two of them is a usage error that says so.
    const r = run(['show', 'nope', 'weather-trip'], { AGENT_SESSIONS_DB: db });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /show takes only a session id \(got 2 arguments\)/);
    // Unless it names a file (a path, a SQLite file's extension) that is not there: that is the mistake to report.
    const typo = run(['show', 'nofile.db', 'weather-trip'], { AGENT_SESSIONS_DB: db });
    assert.equal(typo.code, 3);
    assert.match(typo.stderr, /nofile\.db does not exist/);
  });

  it('branches: a session listed without items says it has no branches yet (not an empty line)', () => {
    const copy = join(tmp.dir, 'hollow.db');
    writeFileSync(copy, readFileSync(db));
    execSql(copy, "INSERT INTO agent_sessions (session_id) VALUES ('hollow')");
    assert.match(ok(run(['ls', copy])), /\nhollow\s+0\s+0\s+0\s/);
    assert.equal(ok(run(['branches', copy, 'hollow'])), 'hollow: no items, so no branches yet\n');
  });

  it('usage: per turn with totals, equal to the file', () => {
    const out = ok(run(['usage', 'weather-trip', '-d', db]));
    const total = query<{ t: number }>(db, "SELECT sum(total_tokens) AS t FROM turn_usage WHERE session_id = 'weather-trip'")[0]!.t;
    assert.match(out, new RegExp(`\\ntotal\\s+7\\s+.*\\s${total}\\n$`));
    const json = JSON.parse(ok(run(['usage', 'weather-trip', '-d', db, '--branch', 'main', '--json']))) as {
      rows: unknown[];
      totals: { turns: number };
    };
    assert.equal(json.rows.length, 4);
    assert.equal(json.totals.turns, 4);
  });

  it("usage --branch: the branch's whole conversation, each shared turn under the branch that ran it", () => {
    // ref-multisession.db (Python): alice's alt forks from main at turn 2, so its turn 1 ran on main (36 tokens).
    const path = copyPythonFixture(
      PYTHON_FIXTURES.find((f) => f.endsWith('ref-multisession.db'))!,
      tmp.dir,
    );
    const out = ok(run(['usage', path, 'alice', '--branch', 'alt']));
    assert.match(out, /\nmain\s+1\s+1\s+30\s+0\s+6\s+0\s+36\n/);
    assert.match(out, /\nalt\s+2\s+1\s+47\s+0\s+8\s+0\s+55\n/);
    assert.match(out, /\ntotal\s+2\s+2\s+77\s+0\s+14\s+0\s+91\n$/);
    const json = JSON.parse(ok(run(['usage', path, 'alice', '--branch', 'alt', '--json']))) as {
      rows: { branchId: string; turn: number; sharedFrom?: string }[];
      totals: { turns: number; totalTokens: number };
    };
    assert.deepEqual(
      json.rows.map((r) => [r.branchId, r.turn, r.sharedFrom ?? null]),
      [
        ['alt', 1, 'main'],
        ['alt', 2, null],
      ],
    );
    assert.deepEqual([json.totals.turns, json.totals.totalTokens], [2, 91]);
  });

  it('show: the whole session, one branch, one turn; --json gives the items', () => {
    const all = ok(run(['show', 'weather-trip', '-d', db]));
    assert.match(all, /## Branch `oslo-retry` \(from `main` at turn 4\)/);
    const turn = ok(run(['show', 'weather-trip', '-d', db, '--turn', '2']));
    assert.match(turn, /^## Turn 2\n/);
    assert.match(turn, /```json get_weather\n/);
    const branch = ok(run(['show', 'weather-trip', '-d', db, '-b', 'lisbon-instead']));
    assert.match(branch, /— branch `lisbon-instead`/);
    const json = JSON.parse(ok(run(['show', 'weather-trip', '-d', db, '--turn', '2', '--json']))) as { items: { type: string }[] };
    assert.deepEqual(
      json.items.map((i) => i.type),
      ['user', 'function_call', 'function_call_output', 'assistant'],
    );
  });

  it('export and import: JSON round trip through files, JSONL, Markdown on stdout', () => {
    const first = join(tmp.dir, 'trip.json');
    const report = JSON.parse(ok(run(['export', 'weather-trip', '-d', db, '-o', first, '--json']))) as { items: number; format: string };
    assert.deepEqual([report.items, report.format], [30, 'json']);
    const target = join(tmp.dir, 'copy.db');
    // Without the flag: nothing is made, and the error names the flag that allows it.
    const refused = run(['import', first, '--db', target]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /copy\.db does not exist.*Pass --create-tables to create them\./);
    assert.equal(existsSync(target), false, 'no file made without --create-tables');
    const imported = ok(run(['import', first, '--db', target, '--create-tables']));
    assert.match(imported, /^Imported 30 item\(s\) into session weather-trip of .*copy\.db \(3 branches, tables created\)\n$/);
    const second = join(tmp.dir, 'trip2.json');
    ok(run(['export', 'weather-trip', '-d', target, '--format', 'json', '-o', second]));
    assert.equal(readFileSync(second, 'utf8'), readFileSync(first, 'utf8'));
    const jsonl = ok(run(['export', 'weather-trip', '-d', db, '--format', 'jsonl']));
    assert.equal(jsonl.trim().split('\n').length, 16);
    const md = ok(run(['export', 'support-chat', '-d', db, '-f', 'md']));
    assert.match(md, /^# Session `support-chat`\n/);
    // JSONL import: the session id defaults to the file's name.
    const file = join(tmp.dir, 'eval-set.jsonl');
    writeFileSync(file, jsonl);
    const r = JSON.parse(ok(run(['import', file, '--db', target, '--json']))) as { sessionId: string; items: number };
    assert.deepEqual([r.sessionId, r.items], ['eval-set', 16]);
    // A branch's JSON export: under its own name, a note that the session has no main; with --as-main, it is main.
    const branch = join(tmp.dir, 'oslo.json');
    ok(run(['export', 'weather-trip', '-d', db, '--branch', 'oslo-retry', '-f', 'json', '-o', branch]));
    const kept = run(['import', branch, '--db', target, '--session', 'oslo-kept']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stderr, /^note: the session has no branch 'main', only 'oslo-retry': .* --as-main imports the branch as main\.\n$/);
    const asMain = run(['import', branch, '--db', target, '--session', 'oslo-main', '--as-main']);
    assert.equal(asMain.code, 0, asMain.stderr);
    assert.equal(asMain.stderr, '');
    assert.match(asMain.stdout, /\(1 branch, branch 'oslo-retry' as main\)\n$/);
    assert.match(ok(run(['branches', target, 'oslo-main'])), /^main /);
    const whole = run(['import', first, '--db', target, '--session', 'whole', '--as-main']);
    assert.equal(whole.code, 2, whole.stderr);
    assert.match(whole.stderr, /--as-main takes a branch's export/);
  });

  it('search: hits with session, branch, turn and snippet; filters; --max; --json', () => {
    const out = ok(run(['search', 'light', 'rain', '-d', db]));
    assert.match(out, /^SESSION\s+BRANCH\s+TURN\s+ITEM\s+MATCH\n/);
    assert.match(out, /\nweather-trip\s+main\s+2\s+function_call_output get_weather\s+Paris: 18°C, light rain\n/);
    // Every message of the file, each once: what `ls` counts as items, not the structure rows' largest id.
    const items = query<{ n: number }>(db, 'SELECT count(*) AS n FROM agent_messages')[0]!.n;
    assert.match(out, new RegExp(`\\n\\d+ hits, ${items} items searched in \\d+ ms\\n$`));
    const json = JSON.parse(ok(run(['search', 'tool:convert_temperature', '-d', db, '--max', '1', '--json']))) as {
      hits: { toolName: string }[];
      summary: { truncated: boolean };
    };
    assert.deepEqual([json.hits.length, json.hits[0]?.toolName, json.summary.truncated], [1, 'convert_temperature', true]);
    assert.match(ok(run(['search', 'zebra-that-is-nowhere', '-d', db])), new RegExp(`^No hits \\(${items} items searched\\)\\.\\n$`));
    // A scan stopped at --max does not know how many items the whole search would have covered.
    assert.match(ok(run(['search', 'tool:convert_temperature', '-d', db, '--max', '1'])), /\n1 hit \(stopped at --max\) in \d+ ms\n$/);
    fails(run(['search', 'rain', '-d', db, '--max', '0']), 2, /--max takes a whole number of 1 or more, got '0'/);
    const bad = run(['search', 'is:bogus', '-d', db]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is:bogus/);
  });

  it('search: tool: and is:failed keep an index in the cache folder, never beside the file; --no-index goes without', () => {
    const cache = join(tmp.dir, 'xdg-cache');
    const indexes = join(cache, 'agent-session-inspector', 'search-index');
    const env = { XDG_CACHE_HOME: cache };
    const listed = (): string[] => (existsSync(indexes) ? readdirSync(indexes).filter((n) => n.endsWith('.db')) : []);
    const without = ok(run(['search', 'tool:convert_temperature', '-d', db, '--no-index', '--json'], env));
    assert.deepEqual(listed(), [], '--no-index makes no index');
    const first = ok(run(['search', 'tool:convert_temperature', '-d', db, '--json'], env));
    assert.equal(listed().length, 1, 'the first tool: search builds the index');
    const again = ok(run(['search', 'tool:convert_temperature', '-d', db, '--json'], env));
    const hitsOf = (out: string): unknown => (JSON.parse(out) as { hits: unknown }).hits;
    assert.deepEqual(hitsOf(first), hitsOf(without));
    assert.deepEqual(hitsOf(again), hitsOf(without));
    assert.ok((hitsOf(without) as unknown[]).length > 0);
    assert.deepEqual(
      readdirSync(tmp.dir).filter((n) => n.startsWith('demo.db') && n !== 'demo.db' && !/-(wal|shm)$/.test(n)),
      [],
    );
    ok(run(['search', 'rain', '-d', db], { XDG_CACHE_HOME: join(tmp.dir, 'text-only') }));
    assert.ok(!existsSync(join(tmp.dir, 'text-only', 'agent-session-inspector', 'search-index')), 'a text search needs no index');
    const off = ok(
      run(['search', 'is:failed', '-d', db, '--json'], { XDG_CACHE_HOME: join(tmp.dir, 'off'), AGENT_SESSIONS_SEARCH_INDEX: 'off' }),
    );
    assert.ok(!existsSync(join(tmp.dir, 'off', 'agent-session-inspector', 'search-index')));
    assert.deepEqual(hitsOf(off), hitsOf(ok(run(['search', 'is:failed', '-d', db, '--json'], env))));
  });

  it('reads the Python-written fixtures', () => {
    for (const fixture of PYTHON_FIXTURES) {
      const path = copyPythonFixture(fixture, tmp.dir);
      const sessions = JSON.parse(ok(run(['ls', path, '--json']))) as { sessionId: string }[];
      for (const s of sessions) assert.match(ok(run(['show', s.sessionId, '-d', path])), /\*\*User\*\*/);
    }
  });

  // `script` runs the CLI on a pseudo-terminal, where colours and the pager switch on.
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  function onTty(args: string[], env: Record<string, string> = {}): string {
    const command = [process.execPath, cli, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const r = spawnSync('script', ['-qec', command, '/dev/null'], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', TERM: 'xterm', ...env },
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  }

  it('on a terminal: colours unless NO_COLOR or --no-color, long output through $PAGER unless --no-pager', function () {
    if (!hasScript) this.skip();
    assert.match(onTty(['ls', db, '--no-pager']), /\[1mSESSION/);
    assert.doesNotMatch(onTty(['ls', db, '--no-pager'], { NO_COLOR: '1' }), ESC);
    assert.doesNotMatch(onTty(['ls', db, '--no-pager', '--no-color']), ESC);
    const paged = onTty(['show', 'weather-trip', '-d', db, '--no-color'], { PAGER: 'sed s/^/paged:/', LINES: '10', COLUMNS: '80' });
    assert.match(paged, /^paged:# Session `weather-trip`/m);
    const direct = onTty(['show', 'weather-trip', '-d', db, '--no-color', '--no-pager'], { PAGER: 'sed s/^/paged:/' });
    assert.doesNotMatch(direct, /paged:/);
  });

  const fails = (r: Result, code: number, message: RegExp) => {
    assert.equal(r.code, code, `expected exit ${code}, got ${r.code}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  };

  describe('exit codes and errors', () => {
    it('2 for usage mistakes, with a pointer to --help', () => {
      fails(run([]), 2, /no command given/);
      fails(run(['frob']), 2, /unknown command 'frob'/);
      fails(run(['show', '-d', db]), 2, /show needs a session id/);
      fails(run(['show', 'weather-trip', '-d', db, '--turn', 'two']), 2, /--turn takes a whole number/);
      // Past 2^53 the number read is not the one given: refused, not echoed as another.
      fails(
        run(['show', 'weather-trip', '-d', db, '--turn', '99999999999999999999']),
        2,
        /--turn takes a whole number up to 9007199254740991, got '99999999999999999999'/,
      );
      fails(run(['ls', db, '--format', 'md']), 2, /ls takes no --format/);
      fails(run(['ls', db, '--bogus']), 2, /Unknown option '--bogus'/);
      fails(run(['branches', 'weather-trip']), 2, /no database: pass --db/);
      fails(run(['export', 'weather-trip', '-d', db]), 2, /pass --format md\|json\|jsonl/);
      fails(run(['export', 'weather-trip', '-d', db, '-f', 'md', '-o', '']), 2, /--output \(-o\) needs a file name/);
      fails(run(['ls', db, db]), 2, /ls takes one file/);
      fails(run(['ls', '--db', db, db]), 2, /ls takes one file/);
      assert.match(run(['frob']).stderr, /Run 'agent-sessions --help'/);
    });

    it('3 for a missing file, session, branch or turn', () => {
      fails(run(['ls', join(tmp.dir, 'missing.db')]), 3, /does not exist/);
      fails(run(['show', 'nope', '-d', db]), 3, /no session 'nope'/);
      fails(run(['usage', 'weather-trip', '-d', db, '--branch', 'nope']), 3, /has no branch 'nope'/);
      fails(run(['show', 'weather-trip', '-d', db, '--turn', '99']), 3, /has no turn 99/);
      fails(run(['export', 'nope', '-d', db, '-f', 'json']), 3, /There is no session 'nope'/);
      // A mistyped file as the first argument is named as missing, not read as a session id or a query's first word.
      fails(run(['show', 'nofile.db', 'weather-trip']), 3, /^agent-sessions: nofile\.db does not exist\.\n$/);
      fails(run(['search', 'nofile.db', 'rain']), 3, /^agent-sessions: nofile\.db does not exist\.\n$/);
      fails(run(['branches', join('sub', 'trip'), 'weather-trip']), 3, /trip does not exist/);
      fails(run(['search', 'is:bad', '-d', db, '--reviews', 'no-reviews.db']), 3, /There is no review store no-reviews\.db\./);
      fails(
        run(['context', 'weather-trip', '-d', db, '--turn', '1', '--traces', 'no-traces.db']),
        3,
        /There is no trace store no-traces\.db\./,
      );
    });

    it('4 for a folder where the session file goes, named as such', () => {
      fails(run(['ls', tmp.dir]), 4, /is a folder, not a session database file\./);
      fails(run(['show', tmp.dir, 'weather-trip']), 4, /is a folder, not a session database file\./);
      fails(run(['usage', 'weather-trip', '-d', tmp.dir]), 4, /is a folder, not a session database file\./);
    });

    it('4 for a pipe where a file is read (it would wait for a writer forever) and a folder as an export, named as such', () => {
      const pipe = (name: string): string => {
        const path = join(tmp.dir, name);
        assert.equal(spawnSync('mkfifo', [path]).status, 0, 'mkfifo');
        return path;
      };
      fails(run(['ls', pipe('pipe.db')]), 4, /pipe\.db is not a regular file \(a pipe, a device or a socket\)/);
      const into = join(tmp.dir, 'into.db');
      fails(run(['import', pipe('pipe.json'), '--db', into, '--create-tables']), 4, /pipe\.json is not a regular file/);
      fails(run(['import', pipe('pipe.jsonl'), '--db', into, '--create-tables', '--session', 's']), 4, /pipe\.jsonl is not a regular file/);
      const folder = join(tmp.dir, 'folder.json');
      mkdirSync(folder);
      fails(run(['import', folder, '--db', into, '--create-tables']), 4, /folder\.json is a folder, not an export file\./);
      assert.equal(existsSync(into), false, 'nothing created');
    });

    it('4 for files that are not session databases or not valid exports (naming the line)', () => {
      const text = join(tmp.dir, 'notes.txt');
      writeFileSync(text, 'hello, not a database at all, but long enough to have a header'.repeat(20));
      fails(run(['ls', text]), 4, /is not a SQLite database/);
      const other = join(tmp.dir, 'other.db');
      const created = spawnSync(
        process.execPath,
        ['-e', `new (require('better-sqlite3'))(${JSON.stringify(other)}).exec('CREATE TABLE t (x)')`],
        {
          cwd: ROOT,
        },
      );
      assert.equal(created.status, 0, String(created.stderr));
      fails(run(['ls', other]), 4, /./);
      const bad = join(tmp.dir, 'bad.jsonl');
      writeFileSync(bad, '{"role":"user","content":"hi"}\n{oops\n');
      const before = tables(db);
      fails(run(['import', bad, '--db', db, '--session', 'x']), 4, /Line 2: not valid JSON/);
      assert.deepEqual(tables(db), before, 'nothing written');
    });

    it('2 for a blank --session of import, before anything is read or created', () => {
      const items = join(tmp.dir, 'blank-session.jsonl');
      writeFileSync(items, '{"role":"user","content":"hi"}\n');
      const target = join(tmp.dir, 'blank-session.db');
      for (const session of ['', '   '])
        fails(
          run(['import', items, '--db', target, '--create-tables', '--session', session]),
          2,
          /--session names the new session: give an id that is not blank/,
        );
      assert.equal(existsSync(target), false);
    });

    it('4 for an export holding rows the doctor would report, naming the JSON path; nothing written', () => {
      const file = join(tmp.dir, 'turn-zero.json');
      ok(run(['export', 'support-chat', '-d', db, '-o', file]));
      const edited = readFileSync(file, 'utf8').replace(/^(\{"branch_id":"main","user_turn_number":)1,/m, '$10,');
      assert.notEqual(edited, readFileSync(file, 'utf8'));
      writeFileSync(file, edited);
      const before = tables(db);
      fails(run(['import', file, '--db', db, '--session', 'turn-zero']), 4, /\$\.usage\[0\]\.user_turn_number is 0.*turn-zero-usage/);
      assert.deepEqual(tables(db), before, 'nothing written');
    });

    it("typed errors with their codes where a raw message was: nesting, a query's length, a review store's columns", async () => {
      // Nested deeper than the stack reaches: the bound's message, not "Maximum call stack size exceeded".
      const deep = join(tmp.dir, 'deep.jsonl');
      writeFileSync(deep, `{"role":"user","content":${'['.repeat(200_000)}${']'.repeat(200_000)}}\n`);
      const before = tables(db);
      const nested = run(['import', deep, '--db', db, '--session', 'deep']);
      fails(nested, 4, /Line 1: the item nests arrays and objects more than 512 levels deep/);
      assert.doesNotMatch(nested.stderr, /call stack/);
      assert.deepEqual(tables(db), before, 'nothing written');
      // A search query past its bound: a usage mistake, not SQLite's "LIKE or GLOB pattern too complex".
      const long = run(['search', 'a'.repeat(100_000), '--db', db]);
      fails(long, 2, /a search query may be at most 10,000/);
      assert.doesNotMatch(long.stderr, /LIKE or GLOB/);
      // A review store's header with other columns: a bad file (4), not SQLite's "no such column" (1).
      const { ReviewStore } = await import('../../../src/store/reviews/reviewStore');
      const reviews = join(tmp.dir, 'renamed.reviews.db');
      const raw = ReviewStore.open(reviews);
      raw.db.exec('ALTER TABLE turn_reviews RENAME COLUMN session_id TO sid');
      raw.close();
      const columns = run(['review', 'ls', '--store', reviews]);
      fails(columns, 4, /lacks the column turn_reviews\.session_id/);
      assert.doesNotMatch(columns.stderr, /no such column/);
    });

    it('5 when another connection holds the write lock past the busy timeout; nothing written', async () => {
      const file = join(tmp.dir, 'chat-locked.json');
      ok(run(['export', 'support-chat', '-d', db, '-o', file]));
      const holder = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'support', 'lockHolder.ts'), db, '8000'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
        const r = await new Promise<Result>((resolve) => {
          const child = spawn(process.execPath, [cli, 'import', file, '--db', db, '--session', 'while-locked'], {
            cwd: tmp.dir,
            env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
          });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        });
        assert.equal(r.code, 5, r.stderr);
        assert.match(r.stderr, /is locked by another connection beyond the busy timeout .*Try again when the writer has finished\.\n$/);
        // Reading it read-only is no way to import into it.
        assert.doesNotMatch(r.stderr, /read-only/);
      } finally {
        holder.kill();
      }
      assert.equal(query(db, "SELECT 1 FROM agent_messages WHERE session_id = 'while-locked'").length, 0);
    });

    it('6 when the import cannot be written: a taken id, missing tables; --json errors are JSON on stderr', () => {
      const file = join(tmp.dir, 'chat.json');
      ok(run(['export', 'support-chat', '-d', db, '-o', file]));
      fails(run(['import', file, '--db', db]), 6, /already has a session 'support-chat'/);
      const r = run(['import', file, '--db', join(tmp.dir, 'new.db'), '--json']);
      assert.equal(r.code, 6);
      assert.equal(existsSync(join(tmp.dir, 'new.db')), false);
      const err = JSON.parse(r.stderr) as { error: { code: number; problem: string; message: string } };
      assert.deepEqual([err.error.code, err.error.problem], [6, 'missing-tables']);
    });

    it('--help for each command, --version', () => {
      for (const command of ['ls', 'show', 'branches', 'usage', 'search', 'export', 'import', 'otlp', 'traces', 'review', 'dataset']) {
        assert.match(ok(run([command, '--help'])), new RegExp(`^Usage: agent-sessions ${command}`));
      }
      assert.match(ok(run(['--help'])), /Exit codes: 0 ok, 1 error, 2 usage, 3 not found/);
      assert.match(ok(run(['--version'])), /^\d+\.\d+\.\d+/);
    });
  });

  describe('traces', () => {
    const otlp = (sessionId: string | null, spanId: string) => ({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bot' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: `${spanId}`.padStart(32, '7'),
                  spanId: spanId.padStart(16, '0'),
                  name: 'chat gpt-4.1',
                  startTimeUnixNano: '1764685200000000000',
                  endTimeUnixNano: '1764685201250000000',
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                    { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4.1' } },
                    { key: 'gen_ai.usage.input_tokens', value: { intValue: '900' } },
                    ...(sessionId ? [{ key: 'gen_ai.conversation.id', value: { stringValue: sessionId } }] : []),
                  ],
                },
              ],
            },
          ],
        },
      ],
    });

    it("imports OTLP JSON, lists a session's traces and the unlinked ones, shows a trace, exports what imports back", () => {
      const store = join(tmp.dir, 'traces.db');
      const file = join(tmp.dir, 'spans.json');
      writeFileSync(file, JSON.stringify(otlp('weather-trip', 'a1')));
      const lonely = join(tmp.dir, 'lonely.json');
      writeFileSync(lonely, JSON.stringify(otlp(null, 'b2')));
      assert.match(
        ok(run(['traces', 'import', file, lonely, '--store', store])),
        /spans\.json: 1 span in 1 trace\n.*lonely\.json: 1 span /s,
      );
      const listed = ok(run(['traces', 'ls', '--session', 'weather-trip', '--store', store]));
      assert.match(listed, /^7{30}a1 {2}2025-12-02T14:20:00\.000Z\s+1,250 ms\s+1 span {3}weather-trip \(attribute\)\n$/);
      assert.match(
        ok(run(['traces', 'ls', '--unlinked', '--store', store])),
        /7{30}b2 .* unlinked\n\nunlinked: none of its spans names a session/s,
      );
      assert.match(
        ok(run(['traces', 'show', '7'.repeat(30) + 'a1', '--store', store])),
        /\nmodel\s+chat gpt-4\.1 {2}\+0 ms {2}1,250 ms {2}\(gpt-4\.1, 900 in \/ 0 out\)\n$/,
      );
      const out = join(tmp.dir, 'out.otlp.json');
      ok(run(['traces', 'export', '--session', 'weather-trip', '-o', out, '--store', store]));
      const again = join(tmp.dir, 'again.db');
      const json = JSON.parse(ok(run(['traces', 'import', out, '--store', again, '--json']))) as { spans: number; traces: number }[];
      assert.deepEqual([json[0]!.spans, json[0]!.traces], [1, 1]);
      const a = JSON.parse(ok(run(['traces', 'show', '7'.repeat(30) + 'a1', '--store', store, '--json']))) as { spans: unknown[] };
      const b = JSON.parse(ok(run(['traces', 'show', '7'.repeat(30) + 'a1', '--store', again, '--json']))) as { spans: unknown[] };
      const strip = (spans: unknown[]) => spans.map((s) => ({ ...(s as object), id: 0, source: '' }));
      assert.deepEqual(strip(b.spans), strip(a.spans));
    });

    it("ls --branch lists the branch's traces, and those linked to the session but to no branch only under a note", () => {
      const store = join(tmp.dir, 'branches.traces.db');
      // A run's ids link a trace to its branch and turn; gen_ai.conversation.id alone links it to the session only.
      const onBranch = (branch: string, spanId: string) => {
        const body = otlp(null, spanId);
        body.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes.push(
          { key: 'agent_sessions.session_id', value: { stringValue: 'weather-trip' } },
          { key: 'agent_sessions.branch_id', value: { stringValue: branch } },
          { key: 'agent_sessions.turn_number', value: { intValue: '1' } },
        );
        return body;
      };
      const files = [
        ['main.json', onBranch('main', 'c3')],
        ['alt.json', onBranch('alt', 'e5')],
        ['session-only.json', otlp('weather-trip', 'f6')],
      ] as const;
      for (const [name, body] of files) writeFileSync(join(tmp.dir, name), JSON.stringify(body));
      ok(run(['traces', 'import', ...files.map(([name]) => join(tmp.dir, name)), '--store', store]));
      const listed = ok(run(['traces', 'ls', '--session', 'weather-trip', '--branch', 'main', '--store', store]));
      const [mine, apart] = listed.split('\nlinked to session weather-trip but to no branch');
      assert.match(mine!, /^7{30}c3 .* weather-trip main turn 1 \(run\)\n$/);
      assert.match(apart ?? '', /^ \(a turn's Timeline finds them by when they start\):\n7{30}f6 .* weather-trip \(attribute\)\n$/);
      assert.doesNotMatch(listed, /7{30}e5/);
      const json = JSON.parse(ok(run(['traces', 'ls', '--session', 'weather-trip', '--branch', 'main', '--store', store, '--json'])));
      assert.deepEqual(
        (json as { traceId: string }[]).map((t) => t.traceId),
        ['7'.repeat(30) + 'c3'],
      );
      const none = ok(run(['traces', 'ls', '--session', 'weather-trip', '--branch', 'other', '--store', store]));
      assert.match(none, /^no traces for session weather-trip on branch other\n\nlinked to session weather-trip but to no branch/);
    });

    it('imports several files in one transaction: a bad one among them stores nothing and names itself (4)', () => {
      const store = join(tmp.dir, 'all-or-nothing.db');
      const good = join(tmp.dir, 'good.json');
      writeFileSync(good, JSON.stringify(otlp('weather-trip', 'd4')));
      const bad = join(tmp.dir, 'bad.json');
      writeFileSync(bad, 'nope');
      fails(run(['traces', 'import', good, bad, '--store', store]), 4, /bad\.json: .*Nothing was imported\./);
      assert.equal(existsSync(store), false, 'no store is created for an import that stores nothing');
      ok(run(['traces', 'import', good, '--store', store]));
      fails(run(['traces', 'import', good, bad, '--store', store]), 4, /bad\.json: /);
      assert.match(ok(run(['traces', 'ls', '--session', 'weather-trip', '--store', store])), /^7{30}d4 .*\n$/);
      const exported = join(tmp.dir, 'one-trace.json');
      assert.match(ok(run(['traces', 'export', '--session', 'weather-trip', '-o', exported, '--store', store])), /^wrote 1 trace to /);
    });

    it('reads no store that is not there (3), and creates none', () => {
      const missing = join(tmp.dir, 'no-traces.db');
      fails(run(['traces', 'ls', '--session', 'weather-trip', '--store', missing]), 3, /There is no trace store .*no-traces\.db/);
      fails(run(['traces', 'show', 'f'.repeat(32), '--store', missing]), 3, /There is no trace store/);
      fails(run(['traces', 'export', '--session', 'weather-trip', '--store', missing]), 3, /There is no trace store/);
      fails(run(['traces', 'prune', '--store', missing]), 2, /traces needs an action/);
      assert.equal(existsSync(missing), false);
    });

    it('refuses a session file as the store (4), an unknown trace (3), a missing --store (2), a bad --listen (2)', () => {
      fails(run(['traces', 'ls', '--session', 'x', '--store', db]), 4, /not a trace store .* never in a session file/);
      fails(run(['traces', 'show', 'f'.repeat(32), '--store', join(tmp.dir, 'traces.db')]), 3, /no trace/);
      fails(run(['traces', 'ls', '--session', 'x']), 2, /--store/);
      fails(run(['otlp', '--listen', 'nope', '--store', join(tmp.dir, 'x.db')]), 2, /\[host:\]port/);
    });

    it('otlp receives spans over HTTP until Ctrl+C, logging each request', async () => {
      const store = join(tmp.dir, 'live.db');
      const child = spawn(process.execPath, [cli, 'otlp', '--listen', '127.0.0.1:0', '--store', store], {
        cwd: tmp.dir,
        env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '' },
      });
      let stderr = '';
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const seen = (re: RegExp) =>
        new Promise<RegExpExecArray>((resolve, reject) => {
          const check = () => {
            const m = re.exec(stderr);
            if (m) resolve(m);
          };
          child.stderr.on('data', (d: Buffer) => {
            stderr += d.toString();
            check();
          });
          child.on('exit', () => reject(new Error(`exited: ${stderr}`)));
          check();
        });
      const [, url] = await seen(/receiving OTLP traces at (\S+) /);
      const res = await fetch(url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(otlp('alice', 'c3')),
      });
      assert.equal(res.status, 200);
      await seen(/stored 1 span from bot/);
      const code = new Promise<number | null>((r) => child.on('exit', r));
      child.kill('SIGINT');
      assert.equal(await code, 0, stderr);
      assert.match(stdout, /^stopped: 1 span in 1 request; the store holds 1 span in 1 trace\n$/);
    });
  });

  describe('review and dataset', () => {
    let session: string;
    let store: string;
    before(async () => {
      const { AdvancedSQLiteSession } = await import('../../../src/store');
      const { ReviewStore } = await import('../../../src/store/reviews/reviewStore');
      const { contentKey } = await import('../../../src/store/reviews/contentKey');
      session = join(tmp.dir, 'reviewed.db');
      const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: session, createTables: true });
      await s.addItems([
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: 'Rain, 7 °C. Write to me at ana@example.com' } as never,
      ]);
      await s.addItems([{ role: 'user', content: 'Umbrella?' }, { role: 'assistant', content: 'No.' } as never]);
      s.close();
      store = join(tmp.dir, 'reviews.db');
      const r = ReviewStore.open(store);
      r.setTurnReview(
        { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: contentKey({ role: 'user', content: 'Weather in Oslo?' }) },
        { verdict: 'good', tags: ['weather'] },
      );
      r.setTurnReview(
        { sessionId: 'trip', branchId: 'main', turn: 2, turnKey: contentKey({ role: 'user', content: 'Umbrella?' }) },
        { verdict: 'bad', note: 'it rains' },
      );
      r.close();
    });

    it('search and export: review filters and review data from --reviews (or the store beside the file)', () => {
      assert.match(ok(run(['search', session, 'is:bad', '--reviews', store])), /\ntrip\s+main\s+2\s+user\s+Umbrella\?\n1 hit,/);
      assert.match(ok(run(['search', session, 'reviewed:no', '--reviews', store])), /^No hits/);
      assert.match(
        ok(run(['search', session, 'tag:weather oslo', '--reviews', store])),
        /\ntrip\s+main\s+1\s+user\s+Weather in Oslo\?\n1 hit,/,
      );
      // The transcript carries the reviews; a run's input does not.
      assert.match(ok(run(['export', session, 'trip', '-f', 'md', '--reviews', store])), /\*\*Review:\*\* ✗ bad\n\n> it rains\n/);
      assert.doesNotMatch(ok(run(['export', session, 'trip', '-f', 'jsonl', '--reviews', store])), /it rains/);
      const missing = run(['search', session, 'is:bad']);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /--reviews <file> \(.*reviewed\.db\.reviews\.db does not exist\)/);
    });

    it('lists, exports and imports review data', () => {
      assert.match(
        ok(run(['review', 'ls', '--store', store])),
        /trip {2}main {2}turn 1 {2}good {2}\[weather\]\n.*turn 2 {2}bad {2}it rains\n2 turn reviews, 0 pairwise verdicts, 0 corrections\n/s,
      );
      const exported = join(tmp.dir, 'reviews.json');
      assert.match(ok(run(['review', 'export', '--store', store, '-o', exported])), /^wrote /);
      const copy = join(tmp.dir, 'reviews-copy.db');
      assert.equal(
        ok(run(['review', 'import', exported, '--store', copy, '--json'])),
        `${JSON.stringify({ added: 2, updated: 0, kept: 0 })}\n`,
      );
      writeFileSync(
        join(tmp.dir, 'broken.json'),
        JSON.stringify({ format: 'agent-session-inspector/reviews', version: 1, turnReviews: [{ turn: 1 }] }),
      );
      const bad = run(['review', 'import', join(tmp.dir, 'broken.json'), '--store', copy]);
      assert.equal(bad.code, 4, 'a malformed review file is a bad input file (exit 4)');
      assert.match(bad.stderr, /turnReviews\[0\]: A review needs a session id/);
      writeFileSync(join(tmp.dir, 'not-json.json'), 'verdicts: good');
      fails(run(['review', 'import', join(tmp.dir, 'not-json.json'), '--store', copy]), 4, /not-json\.json is not JSON/);
      // A store that is not there: named as missing (3), not SQLite's "unable to open" taken for a folder problem (6).
      for (const args of [
        ['review', 'ls'],
        ['review', 'export'],
        ['dataset', 'sft', session, '-o', join(tmp.dir, 'never.jsonl')],
      ]) {
        fails(run([...args, '--store', join(tmp.dir, 'nope.db')]), 3, /^agent-sessions: There is no review store .*nope\.db\.\n$/);
      }
      assert.equal(existsSync(join(tmp.dir, 'nope.db')), false, 'reading never creates a store');
      assert.equal(existsSync(join(tmp.dir, 'never.jsonl')), false);
    });

    it('writes each dataset format, checked, with what was skipped and why; check refuses a broken file', () => {
      const sft = join(tmp.dir, 'sft.jsonl');
      const report = ok(run(['dataset', 'sft', session, '--store', store, '-o', sft, '--redact']));
      assert.match(report, /^wrote 1 record to .*sft\.jsonl\nfirst records:\n {2}\{"messages"/);
      assert.match(readFileSync(sft, 'utf8'), /Write to me at \[redacted\]/);
      assert.match(ok(run(['dataset', 'check', 'sft', sft])), /^1 record, 1 valid\n$/);
      const evalOut = join(tmp.dir, 'eval.csv');
      const evalReport = ok(run(['dataset', 'eval', session, '--store', store, '-o', evalOut, '--csv']));
      assert.match(evalReport, /skipped 1:\n {2}trip main turn 2: a bad turn without a correction has no reference answer/);
      const row = 'Weather in Oslo?,"Rain, 7 °C. Write to me at ana@example.com",weather,good-turn,trip,main,1';
      assert.equal(readFileSync(evalOut, 'utf8').split('\r\n')[1], row);
      // The preview shows what was written: the CSV row, not the record as JSON.
      assert.match(evalReport, /^wrote 1 record to .*eval\.csv\nfirst records:\n {2}(.*)\n/);
      assert.equal(/first records:\n {2}(.*)\n/.exec(evalReport)?.[1], row);
      writeFileSync(join(tmp.dir, 'bad.jsonl'), `${JSON.stringify({ messages: [{ role: 'user', content: 'q' }] })}\n`);
      const checked = run(['dataset', 'check', 'sft', join(tmp.dir, 'bad.jsonl')]);
      assert.equal(checked.code, 1);
      assert.match(checked.stdout, /line 1: no assistant message to learn from/);
      assert.equal(run(['dataset', 'sft', session, '--store', store]).code, 2, '--output is needed');
      assert.equal(run(['dataset', 'sft', session, '--store', store, '-o', sft, '--csv']).code, 2);
      fails(run(['dataset', 'sft', session, '--store', store, '-o', '-']), 2, /dataset writes a file/);
      assert.equal(existsSync(join(tmp.dir, '-')), false, 'no file named -');
      // An unknown session or branch is named (exit 3), not an empty dataset; a tool list that is not one is refused
      // before anything is read, naming its file; no output is written for any of them.
      const never = join(tmp.dir, 'never-written.jsonl');
      fails(run(['dataset', 'sft', session, '--store', store, '-o', never, '--session', 'nosuch']), 3, /no session 'nosuch'/);
      fails(
        run(['dataset', 'sft', session, '--store', store, '-o', never, '--session', 'trip', '--branch', 'nosuch']),
        3,
        /session 'trip' has no branch 'nosuch'/,
      );
      writeFileSync(join(tmp.dir, 'tools.txt'), 'hello world');
      fails(
        run(['dataset', 'sft', session, '--store', store, '-o', never, '--tools', join(tmp.dir, 'tools.txt')]),
        4,
        /tools\.txt is not JSON/,
      );
      writeFileSync(join(tmp.dir, 'tools-numbers.json'), '[1, 2]');
      fails(
        run(['dataset', 'sft', session, '--store', store, '-o', never, '--tools', join(tmp.dir, 'tools-numbers.json')]),
        2,
        /tools-numbers\.json: tools\[0\] must be \{ "type": "function"/,
      );
      assert.equal(existsSync(never), false);
    });
  });
});
