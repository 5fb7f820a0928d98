/**
 * The Context answer on a long branch (docs/context.md, "Limits"): the builder reads the recent history only, counts
 * the older items exactly (from the branch's row count and its turns' counts, never by reading them) and estimates
 * their tokens; with a limit they are outside, without one in the window; for the last turn and for one in the middle.
 * And a turn's requests split where the model answered after tool outputs.
 */
import { strict as assert } from 'node:assert';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { HISTORY_READ_ITEMS, buildTurnContext, requestPrefixes } from '../../../../src/store/context/turnContext';
import { countedItem } from '../../../../src/store/context/contextItems';
import { noteText } from '../../../../src/store/context/contextText';
import { Workspace } from '../../../support/sessionHelpers';

const TURNS = 1500;

describe('turn context on a long branch', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let db: SessionDatabase;

  before(async () => {
    ws = new Workspace('asi-context-long-');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), createTables: true });
    const items: AgentInputItem[] = [];
    for (let t = 1; t <= TURNS; t++)
      items.push(
        { role: 'user', content: `Question ${t}` } as AgentInputItem,
        {
          role: 'assistant',
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', text: `Answer ${t}`, annotations: [] }],
        } as unknown as AgentInputItem,
      );
    await s.addItems(items);
    s.close();
    db = openSessionDatabase(ws.path(), { readonly: true });
  });
  after(() => {
    db.close();
    ws.cleanup();
  });

  it('counts the history it does not read, in the window without a limit and outside with one', async () => {
    assert.ok(2 * TURNS > 2 * HISTORY_READ_ITEMS, 'the branch is longer than the builder reads');
    const whole = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn: TURNS, model: 'gpt-4o' });
    const [request] = whole.requests;
    assert.equal(request!.itemCount, 2 * (TURNS - 1) + 1, 'every item before the turn, and its user message');
    assert.equal(request!.items.at(-1)!.preview, `Question ${TURNS}`);
    assert.equal(request!.items.at(-2)!.preview, `Answer ${TURNS - 1}`);
    assert.ok(
      whole.notes.some((n) => n.code === 'estimated'),
      'the unread items are estimated, and said so',
    );
    assert.ok(whole.approximate);
    assert.equal(whole.outsideCount, 0);

    const limited = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn: TURNS, limit: 10, model: 'gpt-4o' });
    assert.equal(limited.requests[0]!.itemCount, 11);
    assert.equal(limited.outsideCount, 2 * (TURNS - 1) - 10);
    assert.equal(limited.outside.at(-1)!.preview, `Answer ${TURNS - 6}`, 'the newest item outside is the one before the window');
  });

  it('counts right for a turn in the middle (the turns after it are not history)', async () => {
    const turn = 700;
    const mid = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn, limit: 4, model: 'gpt-4o' });
    assert.equal(mid.outsideCount, 2 * (turn - 1) - 4);
    assert.deepEqual(
      mid.requests[0]!.items.map((i) => i.preview),
      [`Question ${turn - 2}`, `Answer ${turn - 2}`, `Question ${turn - 1}`, `Answer ${turn - 1}`, `Question ${turn}`],
    );
    const unlimited = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn, model: 'gpt-4o' });
    assert.equal(unlimited.requests[0]!.itemCount, 2 * (turn - 1) + 1);
  });

  it('words an unknown model as unknown', () => {
    assert.equal(
      noteText({ code: 'unknown-model', model: 'claude-sonnet-4' }),
      'The model "claude-sonnet-4" is not known to the tokenizer: counts use o200k_base and are approximate.',
    );
    assert.match(noteText({ code: 'unknown-model', model: null }), /^No model is known to the tokenizer/);
  });

  it('splits a turn into its requests: one more after each batch of tool outputs', () => {
    const c = (item: unknown) => countedItem(item);
    const user = c({ role: 'user', content: 'q' });
    const call = (id: string) => c({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
    const out = (id: string) => c({ type: 'function_call_output', call_id: id, output: 'x' });
    const reasoning = c({ type: 'reasoning', summary: [] });
    const answer = c({ role: 'assistant', content: 'a' });
    assert.deepEqual(requestPrefixes([user, answer]), [1]);
    // reasoning + two calls, their outputs, reasoning + a call, its output, the answer: three requests.
    assert.deepEqual(
      requestPrefixes([user, reasoning, call('1'), call('2'), out('1'), out('2'), reasoning, call('3'), out('3'), answer]),
      [1, 6, 9],
    );
  });
});
