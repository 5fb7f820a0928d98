/**
 * The plain-text context answer (`agent-sessions context`, the `turn_context` tool) counts as English does: a turn's
 * first request usually holds one item and its usage row one request, and those read "1 item", "1 request".
 */
import { strict as assert } from 'node:assert';
import { contextHeader, itemLines, requestLine } from '../../../../src/store/context/contextText';
import type { ContextRequestView, TurnContextView } from '../../../../src/shared/protocol/contextViews';

const request = (over: Partial<ContextRequestView>): ContextRequestView => ({
  index: 1,
  items: [],
  omittedItems: 0,
  itemCount: 1,
  totalTokens: 1,
  shares: [],
  model: null,
  inputTokens: null,
  cachedTokens: null,
  cut: false,
  ...over,
});

const view = (usageRequests: number): TurnContextView => ({
  source: 'reconstructed',
  sessionId: 's',
  branchId: 'main',
  ranOn: 'main',
  turn: 1,
  requests: [request({})],
  outside: [],
  outsideCount: 0,
  encoding: 'o200k_base',
  model: null,
  approximate: true,
  usage: { requests: usageRequests, inputTokens: 1, cachedTokens: 0 },
  notes: [{ code: 'requests-differ', usageRequests, shown: 1 }],
});

describe('the context answer in text counts in the singular and the plural', () => {
  it('one item, one token, one request', () => {
    assert.match(requestLine(request({ inputTokens: 1, cachedTokens: 0 })), /^Request 1: 1 item, 1 token; usage 1 input token, 0 cached/);
    assert.match(contextHeader(view(1)), /Usage row: 1 request, 1 input token, 0 cached/);
    assert.match(contextHeader(view(1)), /The usage row counts 1 request;/);
    const one = itemLines(
      request({ omittedItems: 1, items: [{ kind: 'user', title: 'User', tokens: 1, sequence: 2, preview: 'hi' } as never] }),
    );
    assert.deepEqual(one, ['  … 1 older item not listed\n', '  2. [user] User: 1 token (stored #2) — hi\n']);
  });

  it('several of each', () => {
    assert.match(requestLine(request({ itemCount: 3, totalTokens: 40 })), /^Request 1: 3 items, 40 tokens\./);
    assert.match(contextHeader(view(2)), /Usage row: 2 requests, 1 input token/);
  });
});
