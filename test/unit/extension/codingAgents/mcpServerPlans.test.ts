/**
 * The MCP servers VS Code is offered (issue 46, item 2): their arguments list exactly the open stores, with
 * --only-stores; nothing secret in the arguments or the label; a new version when the open stores change. And the
 * files' server started from those arguments with the CLI's bundle (as VS Code starts it), through a real MCP client:
 * it serves the open files, refuses any other, and ignores an AGENT_SESSIONS_DB in VS Code's environment.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { addressWithoutSecret, mcpServerPlans, type McpServerPlan } from '../../../../src/extension/codingAgents/mcpServerPlans';
import { tempDir } from '../../../support/tempFiles';
import { mcpSuite, type McpSession } from '../../cli/mcpClientKit';

const CLI = '/ext/dist/cli.js';
const storesOf = (plan: McpServerPlan): string[] => plan.args.flatMap((a, i) => (plan.args[i - 1] === '--store' ? [a] : []));

describe('the MCP servers offered to VS Code', () => {
  it('the files server: exactly the open files, --only-stores, the trace store; AGENT_SESSIONS_DB emptied', () => {
    const [files, ...rest] = mcpServerPlans(CLI, ['/w/a.db', '/w/b c.db'], [], '/g/traces.db', '1.2.3');
    assert.equal(rest.length, 0);
    assert.deepEqual(files!.args, [CLI, 'mcp', '--only-stores', '--store', '/w/a.db', '--store', '/w/b c.db', '--traces', '/g/traces.db']);
    assert.deepEqual(files!.env, { ELECTRON_RUN_AS_NODE: '1', AGENT_SESSIONS_DB: '', AGENT_SESSIONS_MCP_LOG: 'client' });
    assert.equal(files!.address, undefined);
    // No file open: still offered (it stays in VS Code's list), serving nothing.
    const [none] = mcpServerPlans(CLI, [], [], undefined, '1.2.3');
    assert.deepEqual(none!.args, [CLI, 'mcp', '--only-stores']);
  });

  it('a new version when the open stores change, the same one when they do not', () => {
    const version = (files: string[]) => mcpServerPlans(CLI, files, [], undefined, '1.2.3')[0]!.version;
    assert.match(version(['/w/a.db']), /^1\.2\.3\+[0-9a-f]{12}$/);
    assert.equal(version(['/w/a.db']), version(['/w/a.db']));
    assert.notEqual(version(['/w/a.db']), version(['/w/a.db', '/w/b.db']));
    assert.notEqual(version(['/w/a.db']), version([]));
  });

  it('a server store: its own --only-stores server; a password in the address goes to the environment, never the arguments', () => {
    const secret = 'hunter2-s3cret';
    const plans = mcpServerPlans(
      CLI,
      [],
      [
        'postgres://app@db.example.com/sessions',
        `postgres://app@db.example.com/other?sslmode=require&password=${secret}`,
        'redis://:x@r:6379/0',
      ],
      undefined,
      '1.2.3',
    );
    assert.equal(plans.length, 4);
    const [, plain, inQuery, inUser] = plans;
    assert.deepEqual(plain!.args, [CLI, 'mcp', '--only-stores', '--store', 'postgres://app@db.example.com/sessions']);
    assert.equal(plain!.address, 'postgres://app@db.example.com/sessions');
    assert.equal(plain!.addressPassword, undefined);
    assert.deepEqual(storesOf(inQuery!), ['postgres://app@db.example.com/other?sslmode=require']);
    assert.equal(inQuery!.addressPassword, secret);
    assert.deepEqual(storesOf(inUser!), ['redis://r:6379/0']);
    assert.equal(inUser!.addressPassword, 'x');
    for (const p of plans) {
      const shown = JSON.stringify([p.label, p.args, p.env, p.version]);
      assert.ok(!shown.includes(secret) && !shown.includes(':x@'), shown);
    }
  });

  it('a server store whose address holds a secret that cannot move to the environment is not offered', () => {
    assert.equal(addressWithoutSecret('postgres://app@h/db?sslpassword=k'), undefined);
    assert.deepEqual(
      addressWithoutSecret('postgres://app:p@h/db?password=q'),
      { address: 'postgres://app@h/db', password: 'q' },
      'pg reads the parameter',
    );
    const plans = mcpServerPlans(CLI, [], ['postgres://app@h/db?sslpassword=k', 'redis://r/0'], undefined, '1.2.3');
    assert.deepEqual(
      plans.map((p) => storesOf(p)),
      [[], ['redis://r/0']],
    );
  });
});

describe('the files server VS Code starts, through a real MCP client', function () {
  this.timeout(60_000);
  const suite = mcpSuite('asi-mcp-plan-', 'open.db');
  const { cli } = suite;
  const open = suite.fixture;
  /** Starts the plan's command line with the test's CLI bundle, in an environment that has AGENT_SESSIONS_DB set. */
  const start = (plan: McpServerPlan, env: Record<string, string>): Promise<McpSession> =>
    suite.start(plan.args.slice(2), { ...env, ...plan.env, ELECTRON_RUN_AS_NODE: '' });

  it('says it started as an MCP log message at level info, not on stderr (which VS Code logs as a warning)', async () => {
    const [files] = mcpServerPlans(cli, [open], [], undefined, '1.2.3');
    const mcp = await start(files!, {});
    await mcp.ok('list_stores', {});
    assert.deepEqual(mcp.logs(), [`info: agent-sessions mcp: serving open (${open}) over stdio`]);
    assert.equal(mcp.stderr(), '');
  });

  it('serves the open file and refuses another, telling the model the user opens it in VS Code first', async () => {
    const folder = tempDir('asi-mcp-unopened-');
    try {
      const other = join(folder.dir, 'unopened.db');
      copyFileSync(open, other);
      const [files] = mcpServerPlans(cli, [open], [], undefined, '1.2.3');
      const mcp = await start(files!, { AGENT_SESSIONS_DB: other });
      assert.match(await mcp.ok('list_stores', {}), /1 store:\n- "open": SQLite session file /);
      assert.match(await mcp.ok('list_sessions', {}), /"weather-trip"/);
      const refused = await mcp.fails('list_sessions', { store: other });
      assert.match(refused, /--only-stores.*open the session file in VS Code's Sessions view first/);
      assert.deepEqual(readdirSync(folder.dir), ['unopened.db'], 'the other file was not opened');
    } finally {
      folder.cleanup();
    }
  });

  it('with no file open it serves nothing, even with AGENT_SESSIONS_DB in the environment', async () => {
    const [files] = mcpServerPlans(cli, [], [], undefined, '1.2.3');
    const mcp = await start(files!, { AGENT_SESSIONS_DB: open });
    assert.match(await mcp.ok('list_stores', {}), /No stores are served/);
    assert.match(await mcp.fails('list_sessions', {}), /No store is being served: .*--only-stores/);
  });
});
