/**
 * What the model saw, outside VS Code: `agent-sessions context` (the CLI bundle, as a user runs it) and the MCP tool
 * `turn_context` through a real MCP client, on the export fixture's session. Without a trace store the answer is
 * reconstructed and says so; with one holding the turn's recorded input (a model span carrying
 * `gen_ai.input.messages`, as our runs and agent commands write it) it is recorded, item for item; both bounded.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TurnContextView } from '../../../src/shared/protocol/contextViews';
import { inputAttributes } from '../../../src/store/traces/recordedInput';
import { TraceStore } from '../../../src/store/traces/traceStore';
import { ROOT } from '../store/export/exportFixtures';
import { dataBlocks } from '../../support/dataBlocks';
import { SPAN_T0_US, spanRecord } from '../../support/spanRecords';
import { mcpSuite } from './mcpClientKit';

/** The input the span records for turn 1 of the fixture's main branch. */
const RECORDED_ITEMS = [{ role: 'user', content: 'Hi! What can you do?' }];

describe('turn context: the CLI command and the MCP tool', function () {
  this.timeout(120_000);
  const suite = mcpSuite('asi-context-cli-');
  const traces = (): string => join(suite.dir, 'traces.db');

  before(() => {
    const store = TraceStore.open(traces());
    store.addSpans([
      spanRecord({
        spanId: '2'.padStart(16, '0'),
        name: 'response gpt-4o',
        kind: 'model',
        model: 'gpt-4o',
        inputTokens: 40,
        cachedTokens: 10,
        source: 'command',
        link: { sessionId: 'weather-trip', branchId: 'main', turnNumber: 1 },
        startUs: SPAN_T0_US,
        attributes: inputAttributes(RECORDED_ITEMS, 'Be brief. <|endoftext|> is text here.', [{ type: 'function', name: 'get_weather' }]),
      }),
    ]);
    store.close();
  });

  function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [suite.cli, ...args], {
      cwd: suite.dir,
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), AGENT_SESSIONS_DB: '', NO_COLOR: '1' },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('context: reconstructed without a trace store, labelled so, with the limit applied and the items outside', () => {
    const r = cli('context', suite.fixture, 'weather-trip', '--turn', '3', '--limit', '2', '--no-pager');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Turn 3 of branch "main": 3 model requests, RECONSTRUCTED from the stored items \(not what was recorded\)\./);
    assert.match(r.stdout, /Note: The session's limit \(2 items\) was applied to the history\./);
    assert.match(r.stdout, /Usage row: 3 requests, \d+ input tokens, \d+ cached \(\d+%\)\./);
    assert.match(
      r.stdout,
      /Outside the window: 4 stored items:\n {2}- #1 \[user\] User: \d+ tokens, older than the window \(session limit\)/,
    );
    const json = cli('context', suite.fixture, 'weather-trip', '--turn', '3', '--limit', '2', '--model', 'gpt-4', '--json');
    assert.equal(json.status, 0, json.stderr);
    const view = JSON.parse(json.stdout) as TurnContextView;
    assert.equal(view.source, 'reconstructed');
    assert.equal(view.encoding, 'cl100k_base', 'gpt-4 counts with cl100k_base');
    assert.equal(view.approximate, false);
    assert.deepEqual(
      view.requests.map((q) => q.itemCount),
      [3, 5, 7],
    );
    assert.equal(view.outsideCount, 4);
  });

  it('context: recorded from the trace store, item for item, the instructions and tools with it', () => {
    const json = cli('context', suite.fixture, 'weather-trip', '--turn', '1', '--traces', traces(), '--json');
    assert.equal(json.status, 0, json.stderr);
    const view = JSON.parse(json.stdout) as TurnContextView;
    assert.equal(view.source, 'recorded');
    assert.equal(view.model, 'gpt-4o');
    assert.equal(view.encoding, 'o200k_base');
    const [request] = view.requests;
    assert.deepEqual(
      request!.items.map((i) => [i.kind, i.preview]),
      [
        ['instructions', 'Be brief. <|endoftext|> is text here.'],
        ['tool-definitions', 'get_weather'],
        ['user', 'Hi! What can you do?'],
      ],
    );
    assert.equal(request!.items[2]!.sequence, 1, 'the recorded message is the stored item #1');
    assert.deepEqual([request!.inputTokens, request!.cachedTokens], [40, 10]);
    const text = cli('context', suite.fixture, 'weather-trip', '--turn', '1', '--traces', traces(), '--no-pager');
    assert.match(text.stdout, /RECORDED by the run\./);
  });

  it('context: bad input is a usage error or not found, with the exit code', () => {
    assert.equal(cli('context', suite.fixture, 'weather-trip').status, 2, 'no --turn');
    assert.equal(cli('context', suite.fixture, 'weather-trip', '--turn', 'x').status, 2);
    const missing = cli('context', suite.fixture, 'weather-trip', '--turn', '99');
    assert.equal(missing.status, 3);
    assert.match(missing.stderr, /no turn 99/);
    assert.equal(cli('context', suite.fixture, 'no-such-session', '--turn', '1').status, 3);
  });

  it('turn_context through a real MCP client: reconstructed without --traces, recorded with it, bounded', async () => {
    const plain = await suite.start(['--store', suite.fixture]);
    const rebuilt = await plain.ok('turn_context', { store: 'demo', session: 'weather-trip', turn: 3, limit: 2 });
    assert.match(rebuilt, /^Source: store "demo"/);
    assert.match(rebuilt, /RECONSTRUCTED from the stored items/);
    assert.match(rebuilt, /Items of request 3, in the order sent:/);
    const first = await plain.ok('turn_context', { store: 'demo', session: 'weather-trip', turn: 3, request: 1, maxChars: 900 });
    const m = /call turn_context again with afterItem=(\d+)\./.exec(first);
    assert.ok(m, first.slice(-300));
    const rest = await plain.ok('turn_context', { store: 'demo', session: 'weather-trip', turn: 3, request: 1, afterItem: Number(m[1]) });
    assert.match(rest, /Outside the window/);
    assert.match(await plain.fails('turn_context', { store: 'demo', session: 'weather-trip', turn: 99 }), /no turn 99/);
    const traced = await suite.start(['--store', suite.fixture, '--traces', traces()]);
    const recorded = await traced.ok('turn_context', { store: 'demo', session: 'weather-trip', turn: 1 });
    assert.match(recorded, /RECORDED by the run/);
    assert.match(recorded, /\[instructions\] Instructions: \d+ tokens — Be brief\./);
    assert.match(recorded, /\[user\] User: \d+ tokens \(stored #1\) — Hi! What can you do\?/);
  });

  it('turn_context: every continuation moves on; a maxChars with no room for a line after the header is refused', async () => {
    const mcp = await suite.start(['--store', suite.fixture]);
    const at = { store: 'demo', session: 'weather-trip', turn: 3 };
    // 200 characters do not hold the header of a turn of three requests: once, a page of the cut header and no line
    // said "call again with afterItem=0", which gave the same page for ever.
    const refused = await mcp.fails('turn_context', { ...at, maxChars: 200 });
    const m = /maxChars 200 is too small .* Pass maxChars (\d+) or more\. Example: turn_context \{[^\n]*"maxChars":(\d+)/.exec(refused);
    assert.ok(m, refused);
    assert.equal(m[1], m[2]);
    const maxChars = Number(m[1]);
    let afterItem = 0;
    for (let page = 1; ; page++) {
      assert.ok(page <= 100, 'the continuations come to an end');
      const text = await mcp.ok('turn_context', { ...at, maxChars, ...(afterItem > 0 ? { afterItem } : {}) });
      const [block] = dataBlocks(text);
      assert.ok(block && block.end - block.start - 2 <= maxChars, `page ${page} within maxChars`);
      const next = /call turn_context again with afterItem=(\d+)\./.exec(text);
      if (!next) {
        assert.match(text, /Outside the window/);
        break;
      }
      assert.ok(Number(next[1]) > afterItem, `page ${page} moves on: afterItem=${next[1]} after ${afterItem}`);
      afterItem = Number(next[1]);
    }
    assert.ok(afterItem > 0, 'the answer took more than one page');
  });
});
