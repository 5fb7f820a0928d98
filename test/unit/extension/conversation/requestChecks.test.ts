/** The host's checks of webview requests: method names and parameter types, before any handler runs. */
import { strict as assert } from 'node:assert';
import type { RequestMethod } from '../../../../src/shared/protocol/conversation';
import { UserFacingError } from '../../../../src/extension/core/userError';
import { handleRequest, isRequestMethod, requestParams, type RequestHandlers } from '../../../../src/extension/conversation/requestChecks';

/** Handlers that record what they were called with and answer with a fixed result. */
function recordingHandlers(): { handlers: RequestHandlers; calls: [RequestMethod, unknown][] } {
  const calls: [RequestMethod, unknown][] = [];
  const record =
    <R>(method: RequestMethod, result: R) =>
    (params: unknown): R => {
      calls.push([method, params]);
      return result;
    };
  const page = { branchId: 'main', turns: [], nextAfterTurn: null, previousBeforeTurn: null };
  const totals = { requests: null, inputTokens: null, outputTokens: null, totalTokens: null, cachedTokens: null, reasoningTokens: null };
  const usage = { rows: [], rowCount: 0, offset: 0, sort: 'turn' as const, descending: false, totals };
  const handlers: RequestHandlers = {
    'view/ready': record('view/ready', null),
    'session/get': record('session/get', {
      dbPath: '/x.db',
      dbName: 'x.db',
      sessionId: 's',
      readonly: true,
      branches: [],
      usedBranchIds: [],
      currentBranchId: 'main',
      problem: null,
    }),
    'turns/get': record('turns/get', page),
    'turn/items': record('turn/items', []),
    'turn/timeline': record('turn/timeline', { state: 'none', spans: [], omitted: 0, traces: 0, totalMs: 0, requests: 0 }),
    'turn/context': record('turn/context', {
      source: 'reconstructed',
      sessionId: 's',
      branchId: 'main',
      ranOn: 'main',
      turn: 1,
      requests: [],
      outside: [],
      outsideCount: 0,
      encoding: 'o200k_base',
      model: null,
      approximate: true,
      usage: null,
      notes: [],
    }),
    'branch/latency': record('branch/latency', { branchId: 'main', turns: [], turnCount: 0, partial: false, p50Ms: null, p95Ms: null }),
    'trace/link': record('trace/link', { linked: true }),
    'reviews/get': record('reviews/get', { branchId: 'main', turns: [], orphaned: [], corrections: [], orphanedCorrections: 0, tags: [] }),
    'review/set': record('review/set', null),
    'correction/set': record('correction/set', null),
    'correction/branch': record('correction/branch', { branchId: null }),
    'turn/askCopilot': record('turn/askCopilot', { opened: false }),
    'tables/get': record('tables/get', { branchId: null, usage, turnsWithoutUsage: [], turnsWithoutUsageCount: 0 }),
    'tools/get': record('tools/get', { branchId: null, tools: [] }),
    'pricing/choose': record('pricing/choose', { model: 'gpt-4.1' }),
    'branch/create': record('branch/create', { branchId: 'new' }),
    'branch/switch': record('branch/switch', { branchId: 'alt' }),
    'branch/delete': record('branch/delete', { deleted: true }),
    'run/start': record('run/start', { runId: 'r1' }),
    'whatIf/models': record('whatIf/models', { configured: 'm', choices: ['m'] }),
    'whatIf/start': record('whatIf/start', { runs: [] }),
    'branch/compare': record('branch/compare', { opened: true }),
    'content/copy': record('content/copy', { copied: true }),
    'content/openJson': record('content/openJson', { opened: true }),
    'branch/export': record('branch/export', { exported: true }),
    'search/session': record('search/session', { hits: [], truncated: false }),
    'apiKey/set': record('apiKey/set', { set: true }),
    'agents/get': record('agents/get', { choices: [], selected: 'builtin', note: null }),
    'agents/select': record('agents/select', { choices: [], selected: 'builtin', note: null }),
    'replay/table': record('replay/table', { branchId: 'main', turn: 1, calls: [], hosted: [], mode: 'replay', nameOnly: [] }),
    'replay/marks': record('replay/marks', { marks: [], runs: [] }),
    'layers/get': record('layers/get', []),
    'layer/items': () => assert.fail('not in these tests'),
    'layer/compare': record('layer/compare', { opened: true }),
    'layer/restore': record('layer/restore', { branchId: null }),
    'run/stop': async (params) => {
      calls.push(['run/stop', params]);
      return { stopped: false };
    },
  };
  return { handlers, calls };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UserFacingError, `a UserFacingError, got ${String(err)}`);
    return err;
  }
  assert.fail('the request succeeded');
}

describe('webview requests', () => {
  it('knows exactly the methods of the protocol', () => {
    const methods: Record<RequestMethod, true> = {
      'view/ready': true,
      'session/get': true,
      'turns/get': true,
      'turn/items': true,
      'turn/timeline': true,
      'turn/context': true,
      'branch/latency': true,
      'trace/link': true,
      'reviews/get': true,
      'review/set': true,
      'correction/set': true,
      'correction/branch': true,
      'turn/askCopilot': true,
      'tables/get': true,
      'tools/get': true,
      'pricing/choose': true,
      'agents/get': true,
      'agents/select': true,
      'branch/create': true,
      'branch/switch': true,
      'branch/delete': true,
      'run/start': true,
      'run/stop': true,
      'whatIf/models': true,
      'whatIf/start': true,
      'branch/compare': true,
      'content/copy': true,
      'content/openJson': true,
      'branch/export': true,
      'search/session': true,
      'apiKey/set': true,
      'replay/table': true,
      'replay/marks': true,
      'layers/get': true,
      'layer/items': true,
      'layer/compare': true,
      'layer/restore': true,
    };
    assert.deepEqual(Object.keys(requestParams).sort(), Object.keys(methods).sort());
    assert.ok(isRequestMethod('turns/get'));
    assert.ok(!isRequestMethod('toString'), 'not an inherited property');
    assert.ok(!isRequestMethod('turns/GET'));
  });

  it('runs the handler of a known method with its checked parameters and returns its result', async () => {
    const { handlers, calls } = recordingHandlers();
    assert.deepEqual(await handleRequest(handlers, 'turns/get', { branchId: 'main', afterTurn: null, limit: 100 }), {
      branchId: 'main',
      turns: [],
      nextAfterTurn: null,
      previousBeforeTurn: null,
    });
    await handleRequest(handlers, 'turns/get', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 100 });
    await handleRequest(handlers, 'turns/get', { branchId: 'main', afterTurn: null, beforeTurn: 501, limit: 100 });
    const window = { sort: 'totalTokens', descending: true, offset: 200, limit: 200 };
    await handleRequest(handlers, 'tables/get', { branchId: null, usage: { ...window, extra: 1 } });
    assert.deepEqual(await handleRequest(handlers, 'run/stop', { runId: 'r1', extra: 'ignored' }), { stopped: false });
    await handleRequest(handlers, 'run/start', { branchId: 'main', input: 'Hi', tools: 'strict' });
    assert.equal(await handleRequest(handlers, 'view/ready', { extra: 'ignored' }), null);
    assert.deepEqual(calls, [
      ['turns/get', { branchId: 'main', afterTurn: null, limit: 100 }],
      ['turns/get', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 100 }],
      ['turns/get', { branchId: 'main', afterTurn: null, beforeTurn: 501, limit: 100 }],
      ['tables/get', { branchId: null, usage: window }],
      ['run/stop', { runId: 'r1' }],
      ['run/start', { branchId: 'main', input: 'Hi', tools: 'strict' }],
      ['view/ready', {}],
    ]);
  });

  it('rejects an unknown method with an error, without calling any handler', async () => {
    const { handlers, calls } = recordingHandlers();
    for (const method of ['branch/rename', '', '__proto__', 'constructor']) {
      const err = await rejection(handleRequest(handlers, method, {}));
      assert.match(err.message, /^Invalid request: unknown method '.*'\.$/);
    }
    assert.deepEqual(calls, []);
  });

  it('rejects parameters of the wrong type, naming the parameter', async () => {
    const { handlers, calls } = recordingHandlers();
    const window = { sort: 'turn', descending: false, offset: 0, limit: 200 };
    const cases: [RequestMethod, unknown, string][] = [
      ['turns/get', { branchId: 7, afterTurn: null, limit: 10 }, 'Invalid request: branchId must be a string.'],
      ['turns/get', { branchId: 'main', afterTurn: 1.5, limit: 10 }, 'Invalid request: afterTurn must be an integer.'],
      ['turns/get', { branchId: 'main', afterTurn: null }, 'Invalid request: limit must be an integer.'],
      ['turn/items', { branchId: 'main', turn: '2' }, 'Invalid request: turn must be an integer.'],
      ['turns/get', { branchId: 'main', afterTurn: null, beforeTurn: 'end', limit: 10 }, 'Invalid request: beforeTurn must be an integer.'],
      [
        'turns/get',
        { branchId: 'main', afterTurn: 3, beforeTurn: null, limit: 10 },
        'Invalid request: afterTurn must be null when beforeTurn is given.',
      ],
      ['tables/get', { branchId: 1, usage: window }, 'Invalid request: branchId must be a string or null.'],
      ['tables/get', { branchId: null }, 'Invalid request: usage must be an object.'],
      [
        'tables/get',
        { branchId: null, usage: { ...window, sort: 'preview' } },
        'Invalid request: usage.sort must be one of turn, branchId, requests, inputTokens, outputTokens, totalTokens, cachedTokens, reasoningTokens.',
      ],
      ['tables/get', { branchId: null, usage: { ...window, descending: 'yes' } }, 'Invalid request: usage.descending must be a boolean.'],
      ['tables/get', { branchId: null, usage: { ...window, offset: 0.5 } }, 'Invalid request: usage.offset must be an integer.'],
      ['branch/create', { fromBranchId: 'main', branchTurnNumber: 2 }, 'Invalid request: name must be a string.'],
      ['branch/delete', {}, 'Invalid request: branchId must be a string.'],
      ['run/start', { branchId: 'main', input: null }, 'Invalid request: input must be a string.'],
      ['run/start', { branchId: 'main', input: 'Hi', tools: 'off' }, 'Invalid request: tools must be one of replay, strict, live.'],
      [
        'whatIf/start',
        { branchId: 'main', turn: 2, branchTurnNumber: 2, editedText: null, models: ['m'], tools: 'mock' },
        'Invalid request: tools must be one of replay, strict, live.',
      ],
      ['replay/table', { branchId: 'main', turn: 'last' }, 'Invalid request: turn must be an integer.'],
      ['replay/marks', { branchId: null }, 'Invalid request: branchId must be a string.'],
      ['layer/items', { layerId: '3' }, 'Invalid request: layerId must be an integer.'],
      ['layer/restore', { layerId: 3, name: 7 }, 'Invalid request: name must be a string.'],
      ['run/stop', [], 'Invalid request: params must be an object.'],
      ['session/get', 'all', 'Invalid request: params must be an object.'],
      [
        'content/copy',
        { ref: { branchId: 'main', turn: 1, sequenceNumber: 3 }, part: 'html' },
        'Invalid request: part must be one of text, arguments, output, json, markdown.',
      ],
      [
        'content/copy',
        { ref: { branchId: 'main', turn: null, sequenceNumber: 3 }, part: 'json' },
        'Invalid request: ref.turn must be set with sequenceNumber.',
      ],
      ['content/openJson', { ref: 'main' }, 'Invalid request: ref must be an object.'],
      ['branch/export', {}, 'Invalid request: branchId must be a string or null.'],
      ['content/openJson', { ref: { branchId: 'main', turn: 1 } }, 'Invalid request: ref.sequenceNumber must be an integer.'],
      ['search/session', { query: 3, branchId: 'main' }, 'Invalid request: query must be a string.'],
      ['search/session', { query: 'x'.repeat(1001), branchId: 'main' }, 'Invalid request: query must be at most 1000 characters.'],
    ];
    for (const [method, params, message] of cases) {
      const err = await rejection(handleRequest(handlers, method, params));
      assert.equal(err.message, message, `${method} ${JSON.stringify(params)}`);
    }
    assert.deepEqual(calls, []);
  });
});
