/** The Markdown transcript: one turn, a branch, a whole session with its fork structure, on our files and Python's. */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession, TransferError, openSessionDatabase, turnToMarkdown } from '../../../../src/store';
import { namedByItsCall } from '../../../../src/store/export/markdown';
import { PNG_BASE64 } from '../../../support/builtinToolItems';
import { query } from '../../../support/sessionHelpers';
import { tempDir } from '../../../support/tempFiles';
import { PYTHON_FIXTURES, copyPythonFixture, exportText, writeExportFixture } from './exportFixtures';

describe('export: Markdown', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-export-md-');
  const db = join(tmp.dir, 'demo.db');
  before(async () => writeExportFixture(db));
  after(() => tmp.cleanup());

  it('renders one turn: heading, time, messages as text, tool call and output fenced with the tool name', () => {
    const reader = openSessionDatabase(db);
    try {
      const md = turnToMarkdown(2, reader.getTurnItems('weather-trip', 'main', 2));
      assert.match(md, /^## Turn 2\n\n_\d{4}-\d\d-\d\d \d\d:\d\d:\d\d_\n\n\*\*User\*\*\n\nWhat's the weather in Paris\?\n/);
      assert.match(md, /\*\*Tool call\*\* `get_weather` \(`call_\w+`\)\n\n```json get_weather\n\{\n {2}"city": "Paris"\n\}\n```/);
      // Python's outputs carry no name: the renderer names them after their call.
      assert.match(md, /\*\*Tool output\*\* `get_weather` \(`call_\w+`\)\n\n```text get_weather\nParis: 18°C, light rain\n```/);
      assert.match(md, /\*\*Assistant\*\*\n\nHere is what I found: Paris: 18°C, light rain\.\n$/);
    } finally {
      reader.close();
    }
  });

  it('names an output by its call when the store recorded no tool name (server stores, plain files)', () => {
    const reader = openSessionDatabase(db);
    try {
      const items = reader.getTurnItems('weather-trip', 'main', 2).map((e) => ({ ...e, toolName: null }));
      const md = turnToMarkdown(2, items);
      assert.match(md, /\*\*Tool output\*\* `get_weather` \(`call_\w+`\)\n\n```text get_weather\nParis: 18°C, light rain\n```/);
    } finally {
      reader.close();
    }
  });

  it('names outputs by their calls holding only the calls still unanswered (a long branch keeps none of them)', () => {
    const reader = openSessionDatabase(db);
    try {
      const items = reader.getTurnItems('weather-trip', 'main', 2).map((e) => ({ ...e, toolName: null }));
      const callNames = new Map<string, string>();
      const named = items.map((e) => namedByItsCall(e, callNames));
      const output = named.find((e) => !e.corrupt && (e.item as { type?: string }).type === 'function_call_output');
      assert.equal(output?.toolName, 'get_weather');
      // Each call was answered: nothing of the turn is kept for the rest of the branch.
      assert.equal(callNames.size, 0);
    } finally {
      reader.close();
    }
  });

  it('a whole session lists the branch tree and gives a forked branch only its own turns', async () => {
    const md = await exportText(db, 'md', { sessionId: 'weather-trip' });
    assert.match(md, /^# Session `weather-trip`\n/);
    assert.match(
      md,
      /## Branches\n\n- `main`: 4 turns\n {2}- `lisbon-instead`: 4 turns \(from `main` at turn 3\)\n {2}- `oslo-retry`: 4 turns \(from `main` at turn 4\)\n/,
    );
    const lisbon = md.slice(md.indexOf('## Branch `lisbon-instead`'), md.indexOf('## Branch `oslo-retry`'));
    assert.match(lisbon, /_The first 6 items are shared with `main` \(above\)\._/);
    assert.doesNotMatch(lisbon, /### Turn [12]\n/, 'shared turns are not repeated');
    assert.match(lisbon, /### Turn 3\n[\s\S]*And in Lisbon/);
    // Every turn of main appears once, in order.
    const main = md.slice(md.indexOf('## Branch `main`'), md.indexOf('## Branch `lisbon-instead`'));
    assert.deepEqual(
      [...main.matchAll(/### Turn (\d+)/g)].map((m) => m[1]),
      ['1', '2', '3', '4'],
    );
  });

  it('one branch is complete on its own (shared turns included)', async () => {
    const md = await exportText(db, 'md', { sessionId: 'weather-trip', branchId: 'lisbon-instead' });
    assert.match(md, /^# Session `weather-trip` — branch `lisbon-instead`\n/);
    assert.deepEqual(
      [...md.matchAll(/^## Turn (\d+)/gm)].map((m) => m[1]),
      ['1', '2', '3', '4'],
    );
    assert.doesNotMatch(md, /## Branches/);
    // What this branch's conversation cost: its own turns' usage and that of the two turns it shares with main (it
    // was forked at turn 3), not the whole session's.
    const [branch] = query<{ total: number; input: number; output: number }>(
      db,
      `SELECT sum(total_tokens) AS total, sum(input_tokens) AS input, sum(output_tokens) AS output FROM turn_usage
       WHERE session_id = 'weather-trip' AND (branch_id = 'lisbon-instead' OR (branch_id = 'main' AND user_turn_number < 3))`,
    );
    const [session] = query<{ total: number }>(db, "SELECT sum(total_tokens) AS total FROM turn_usage WHERE session_id = 'weather-trip'");
    assert.ok(branch!.total > 0 && branch!.total < session!.total);
    assert.match(md, new RegExp(`\\n- Tokens: ${branch!.total} \\(${branch!.input} in, ${branch!.output} out\\)\\n`));
    assert.match(
      await exportText(db, 'md', { sessionId: 'weather-trip' }),
      new RegExp(`\\n- Tokens: ${session!.total} \\(`),
      'the whole session says the whole session',
    );
  });

  it('built-in tools are fenced JSON under their type; reasoning shows its summary only', async () => {
    const md = await exportText(db, 'md', { sessionId: 'tools' });
    for (const [title, type] of [
      ['web search', 'web_search_call'],
      ['file search', 'file_search_call'],
      ['computer', 'computer_call'],
      ['code interpreter', 'code_interpreter_call'],
      ['MCP deepwiki.ask_question', 'mcp_call'],
    ]) {
      assert.match(md, new RegExp(`\\*\\*${title}\\*\\* \\(\`${type}\`\\)`), type);
    }
    assert.doesNotMatch(md, /encrypted_content/);
    // A screenshot's data URL is shortened to its start and size; the tool output is named after the tool.
    assert.match(md, /\*\*Tool output\*\* `computer`/);
    assert.match(md, /data:image\/png;base64,iVBORw0KGgoAAAAN… \(\d+ bytes\)/);
    assert.ok(!md.includes(PNG_BASE64));
  });

  it('a fence is longer than any backtick run in the text, so stored text cannot close it', async () => {
    const path = join(tmp.dir, 'ticks.db');
    const s = new AdvancedSQLiteSession({ sessionId: 't', dbPath: path, createTables: true });
    await s.addItems([
      { role: 'user', content: 'go' },
      { type: 'function_call', callId: 'c1', name: 'sh', arguments: '{"cmd":"echo ```"}', status: 'completed' },
      { type: 'function_call_result', callId: 'c1', name: 'sh', status: 'completed', output: '````\n# not a heading\n````' },
    ] as never);
    s.close();
    const md = await exportText(path, 'md', { sessionId: 't' });
    assert.match(md, /`````text sh\n````\n# not a heading\n````\n`````/);
  });

  it('renders the Python-written fixtures, every session', async () => {
    for (const fixture of PYTHON_FIXTURES) {
      const path = copyPythonFixture(fixture, tmp.dir);
      const reader = openSessionDatabase(path);
      const sessions = reader.listSessions();
      reader.close();
      assert.ok(sessions.length > 0);
      for (const s of sessions) {
        const md = await exportText(path, 'md', { sessionId: s.sessionId });
        assert.match(md, new RegExp(`^# Session \`${s.sessionId}\``));
        assert.match(md, /\*\*User\*\*\n\n\S/, `${fixture} ${s.sessionId}`);
      }
    }
  });

  it('an unknown session or branch is a not-found TransferError', async () => {
    await assert.rejects(
      exportText(db, 'md', { sessionId: 'nope' }),
      (e: unknown) => e instanceof TransferError && e.problem === 'not-found',
    );
    await assert.rejects(
      exportText(db, 'md', { sessionId: 'weather-trip', branchId: 'nope' }),
      (e: unknown) => e instanceof TransferError && e.problem === 'not-found',
    );
  });
});
