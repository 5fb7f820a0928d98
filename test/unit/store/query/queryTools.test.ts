/**
 * The query surface in process, on the demo database: every tool's JSON Schema says what its parameters are, every
 * query stops at once on an aborted signal (before reading), and a default answer names its source.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { QueryError } from '../../../../src/store/query/queryErrors';
import { fileQueryStore } from '../../../../src/store/query/queryStore';
import { QUERY_TOOLS, runQueryTool, toolInputSchema, type QueryToolHost } from '../../../../src/store/query/queryTools';
import { tempDir } from '../../../support/tempFiles';
import { writeExportFixture } from '../export/exportFixtures';

describe('query tools (in process)', () => {
  const tmp = tempDir('asi-query-');
  const path = join(tmp.dir, 'demo.db');
  let db: SessionDatabase;
  let host: QueryToolHost;

  before(async () => {
    await writeExportFixture(path);
    db = openSessionDatabase(path, { readonly: true });
    const store = fileQueryStore(db, 'demo');
    host = { store: async () => store, stores: () => [{ name: 'demo', location: path, kind: 'file' }] };
  });
  after(() => {
    db.close();
    tmp.cleanup();
  });

  const ARGS: Record<string, Record<string, unknown>> = {
    list_stores: {},
    list_sessions: {},
    branch_tree: { session: 'weather-trip' },
    read_turns: { session: 'weather-trip' },
    search_sessions: { query: 'weather' },
    token_usage: { session: 'weather-trip' },
    compare_branches: { session: 'weather-trip', branch: 'main', otherBranch: 'oslo-retry' },
    turn_timeline: { session: 'weather-trip', turn: 1 },
    turn_context: { session: 'weather-trip', turn: 1 },
  };

  it('gives each tool a JSON Schema of its parameters, required ones listed', () => {
    assert.deepEqual(QUERY_TOOLS.map((t) => t.name).sort(), Object.keys(ARGS).sort());
    const schema = toolInputSchema(QUERY_TOOLS.find((t) => t.name === 'search_sessions')!);
    assert.equal(schema.type, 'object');
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ['query']);
    assert.deepEqual(schema.properties.maxHits, {
      type: 'integer',
      description: schema.properties.maxHits!.description,
      minimum: 1,
      maximum: 200,
    });
  });

  it('stops every query at once when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    for (const tool of QUERY_TOOLS) {
      if (tool.name === 'list_stores') continue;
      await assert.rejects(
        // The tool itself, not runQueryTool (which checks the signal first): each query checks before it reads.
        tool.run(host, ARGS[tool.name]!, controller.signal),
        (err: unknown) => err instanceof QueryError && err.problem === 'cancelled',
        tool.name,
      );
    }
  });

  it("search_sessions refuses a query past the parser's bound, as the CLI and the extension do, without echoing it", async () => {
    const search = QUERY_TOOLS.find((t) => t.name === 'search_sessions')!;
    await assert.rejects(
      search.run(host, { query: 'a'.repeat(100_000) }, new AbortController().signal),
      (err: unknown) =>
        err instanceof QueryError &&
        err.problem === 'bad-query' &&
        /a search query may be at most 10,000/.test(err.message) &&
        err.message.length < 2_000,
    );
  });

  it('answers every tool with its source first (turn_timeline without a trace store says how to get one)', async () => {
    const signal = new AbortController().signal;
    for (const tool of QUERY_TOOLS) {
      if (tool.name === 'turn_timeline') {
        await assert.rejects(runQueryTool(host, tool.name, ARGS[tool.name]!, signal), /start the server with --traces/);
        continue;
      }
      const answer = await runQueryTool(host, tool.name, ARGS[tool.name]!, signal);
      assert.match(answer.text, /^Source: store "/, tool.name);
      assert.ok(answer.text.length < 20_000, tool.name);
    }
  });
});
