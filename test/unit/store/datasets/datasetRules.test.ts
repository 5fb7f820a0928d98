/**
 * Datasets: the rules a tester's reproductions showed broken, each over a real session file. Redaction reaches the
 * secrets inside JSON text and keeps that text JSON; a record the checker refuses is reported under its reviewed turn;
 * a pairwise verdict's two answers share one whole input; `--tag` keeps a tagged bad turn's correction; the JS SDK's
 * tool items are read; images are counted wherever they are left out, and leave no empty message; the checker takes
 * what OpenAI's fine-tuning format takes (content parts, images in user messages) and refuses `developer`.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { chatMessages } from '../../../../src/store/datasets/chatMessages';
import { checkJsonl, preferenceProblems, sftProblems } from '../../../../src/store/datasets/datasetChecks';
import { exportDataset } from '../../../../src/store/datasets/datasetExport';
import { DEFAULT_REDACTIONS, type DatasetOptions } from '../../../../src/store/datasets/datasetRecords';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import type { Correction, PairwiseReview, ReviewData, TurnReview } from '../../../../src/store/reviews/reviewTypes';
import { tempDir } from '../../../support/tempFiles';

const user = (content: unknown) => ({ role: 'user', content });
const answer = (text: string) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
const call = (id: string, name: string, args: string) => ({ type: 'function_call', call_id: id, name, arguments: args });
const output = (id: string, out: unknown) => ({ type: 'function_call_output', call_id: id, output: out });
const image = (url: string) => ({ type: 'input_image', image_url: url, detail: 'auto' });

const KEY = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234';
const times = { createdMs: 1, updatedMs: 2 };

function reviewData(parts: { turnReviews?: TurnReview[]; corrections?: Correction[]; pairwise?: PairwiseReview[] }): ReviewData {
  return {
    format: 'agent-session-inspector/reviews',
    version: 1,
    turnReviews: parts.turnReviews ?? [],
    corrections: parts.corrections ?? [],
    pairwise: parts.pairwise ?? [],
  };
}

describe('dataset rules', () => {
  const tmp = tempDir('asi-dataset-rules-');
  const open: SessionDatabase[] = [];
  after(() => {
    for (const db of open) db.close();
    tmp.cleanup();
  });

  /** A session file with one session `s` whose turns are `turns` (each a list of items), on branch main. */
  async function sessionFile(name: string, turns: unknown[][], more?: (s: AdvancedSQLiteSession) => Promise<void>) {
    const path = join(tmp.dir, `${name}.db`);
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    for (const items of turns) await s.addItems(items as never);
    await more?.(s);
    s.close();
    const db = openSessionDatabase(path);
    open.push(db);
    return { path, db };
  }

  /** A good-verdict review of each of `turns` of branch `branchId` (their user messages as `db` holds them). */
  function goodTurns(db: SessionDatabase, turns: number[], extra: Partial<TurnReview> = {}, branchId = 'main'): TurnReview[] {
    return turns.map((turn) => {
      const u = db.getTurnItems('s', branchId, turn).find((i) => !i.corrupt && (i.item as { role?: string }).role === 'user');
      assert.ok(u && !u.corrupt);
      return { sessionId: 's', branchId, turn, turnKey: contentKey(u.item), verdict: 'good', tags: [], note: '', ...times, ...extra };
    });
  }

  async function write(db: SessionDatabase, reviews: ReviewData, name: string, options: DatasetOptions) {
    const out = join(tmp.dir, `${name}.jsonl`);
    const report = await exportDataset(db, reviews, out, { ...options, overwrite: true });
    const text = readFileSync(out, 'utf8');
    const lines = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { report, text, lines, checked: checkJsonl(options.format, text) };
  }

  it('--redact: no API key passes behind an escape of JSON text (or of text that is not JSON)', async () => {
    const payload = {
      text: `# deploy key\n${KEY}\n`,
      tab: `a\t${KEY}`,
      cr: `a\r${KEY}`,
      control: `a\u0007${KEY}`,
      quoted: `"${KEY}"`,
      nested: JSON.stringify({ again: `x\n${KEY}` }),
    };
    // A key split by an escape is one key once decoded; a Python dict's repr is not JSON: its \n is two characters.
    const split = `{"key":"sk-\\u0070roj-ABCDEFGHIJKLMNOPQRSTUVWX1234"}`;
    const pythonRepr = `{'path': '.env', 'text': '# deploy\\n${KEY}\\n'}`;
    const { db } = await sessionFile('redact-keys', [
      [
        user('Which keys does the deploy use?'),
        call('c1', 'read', '{"path":".env"}'),
        output('c1', payload),
        call('c2', 'read', split),
        output('c2', pythonRepr),
        answer('The ones in .env.'),
      ],
    ]);
    const { lines, checked, report, text } = await write(db, reviewData({ turnReviews: goodTurns(db, [1]) }), 'redact-keys', {
      format: 'sft',
      redact: [...DEFAULT_REDACTIONS],
    });
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(checked.problems, []);
    assert.doesNotMatch(text, /sk-|ABCDEFGHIJKLMNOP/, 'no key in the file');
    const messages = lines[0]!.messages as { content: string | null; tool_calls?: { function: { arguments: string } }[] }[];
    assert.deepEqual(JSON.parse(messages[2]!.content!), {
      text: '# deploy key\n[redacted]\n',
      tab: 'a\t[redacted]',
      cr: 'a\r[redacted]',
      control: 'a\u0007[redacted]',
      quoted: '"[redacted]"',
      nested: JSON.stringify({ again: 'x\n[redacted]' }),
    });
    assert.equal(messages[1]!.tool_calls![0]!.function.arguments, '{"path":".env"}', 'JSON text with nothing to redact is left as it was');
    assert.deepEqual(JSON.parse(messages[3]!.tool_calls![0]!.function.arguments), { key: '[redacted]' });
    assert.equal(messages[4]!.content, `{'path': '.env', 'text': '# deploy\\n[redacted]\\n'}`);
  });

  it('--redact: an address in tool-call arguments is replaced alone, and the arguments stay JSON', async () => {
    const { db } = await sessionFile('redact-mail', [
      [
        user('Send the summary to the team.'),
        call('c1', 'send_mail', JSON.stringify({ to: 'team@example.com', body: 'Hi,\nalice@example.com asked for this.' })),
        output('c1', 'sent'),
        answer('Sent.'),
      ],
    ]);
    const { lines, checked, report, text } = await write(db, reviewData({ turnReviews: goodTurns(db, [1]) }), 'redact-mail', {
      format: 'sft',
      redact: [...DEFAULT_REDACTIONS],
    });
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(checked.problems, []);
    assert.doesNotMatch(text, /@example/);
    const messages = lines[0]!.messages as { tool_calls?: { function: { arguments: string } }[] }[];
    assert.deepEqual(JSON.parse(messages[1]!.tool_calls![0]!.function.arguments), {
      to: '[redacted]',
      body: 'Hi,\n[redacted] asked for this.',
    });
  });

  it('a record the checker refuses is reported under its session, branch and turn', async () => {
    const { db } = await sessionFile('broken', [
      [user('one'), call('c1', 'f', '{not json'), output('c1', 'o'), answer('1')],
      [user('two'), call('c2', 'f', '{nor this'), output('c2', 'o'), answer('2')],
    ]);
    const { report, lines } = await write(db, reviewData({ turnReviews: goodTurns(db, [1, 2]) }), 'broken', { format: 'sft' });
    assert.equal(lines.length, 0);
    assert.equal(report.records, 0);
    assert.deepEqual(
      report.skipped.map((s) => s.where),
      ['s main turn 1', 's main turn 2'],
    );
    assert.equal(report.skipped[0]!.reason, "breaks the format's rules: messages[1].tool_calls[0].function.arguments is not valid JSON");
  });

  it('preference: two answers to the same user message through different conversations have no one input', async () => {
    const { db } = await sessionFile(
      'forked',
      [
        [user('Pick a city for my trip.'), answer('How about Paris?')],
        [user('Tell me more about it.'), answer('Paris: Louvre, Eiffel Tower.')],
        [user('Great, book it.'), answer('Booked your trip to Paris.')],
      ],
      async (s) => {
        await s.createBranchFromTurn(2, 'alt');
        await s.addItems([user('Actually, I prefer Tokyo. Tell me more about it.'), answer('Tokyo: Shibuya, Asakusa.')] as never);
        await s.addItems([user('Great, book it.'), answer('Booked your trip to Tokyo.')] as never);
        await s.createBranchFromTurn(3, 'retry');
        await s.addItems([user('Great, book it.'), answer('Booked: Tokyo, 3 nights.')] as never);
      },
    );
    const key = contentKey(user('Great, book it.'));
    const verdict = (leftBranch: string, rightBranch: string): PairwiseReview => ({
      sessionId: 's',
      leftBranch,
      rightBranch,
      turn: 3,
      leftKey: key,
      rightKey: key,
      outcome: 'left',
      reason: '',
      leftModel: null,
      rightModel: null,
      ...times,
    });
    const { report, lines, checked } = await write(
      db,
      reviewData({ pairwise: [verdict('alt', 'main'), verdict('alt', 'retry')] }),
      'forked',
      {
        format: 'preference',
      },
    );
    assert.deepEqual(report.skipped, [
      {
        where: 's alt/main turn 3',
        reason: 'the two sides reach the user message through different conversations: no one input to prefer an answer to',
      },
    ]);
    // Branches that share the whole conversation up to the message still pair their answers.
    assert.deepEqual(checked.problems, []);
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]!.preferred_output, [{ role: 'assistant', content: 'Booked your trip to Tokyo.' }]);
    assert.deepEqual(lines[0]!.non_preferred_output, [{ role: 'assistant', content: 'Booked: Tokyo, 3 nights.' }]);
    const input = (lines[0]!.input as { messages: { content: string }[] }).messages.map((m) => m.content);
    assert.deepEqual(input, [
      'Pick a city for my trip.',
      'How about Paris?',
      'Actually, I prefer Tokyo. Tell me more about it.',
      'Tokyo: Shibuya, Asakusa.',
      'Great, book it.',
    ]);
    // The input compared is the one the record carries: with no earlier turn in it, the two are the same.
    const bare = await write(db, reviewData({ pairwise: [verdict('alt', 'main')] }), 'forked-bare', {
      format: 'preference',
      contextTurns: 0,
    });
    assert.deepEqual(bare.report.skipped, []);
    assert.deepEqual(bare.lines[0]!.input, { messages: [{ role: 'user', content: 'Great, book it.' }] });
  });

  it('--tag: a tagged bad turn with a correction gives the records it gives without the filter; nothing is dropped unsaid', async () => {
    const { db } = await sessionFile('tagged', [
      [user('Capital of Italy?'), answer('Paris is the capital of Italy.')],
      [user('Capital of France?'), answer('Paris.')],
      [user('Capital of Spain?'), answer('Lisbon.')],
    ]);
    const [one, two, three] = goodTurns(db, [1, 2, 3]);
    const wrong = db.getTurnItems('s', 'main', 1).find((i) => !i.corrupt && (i.item as { role?: string }).role === 'assistant');
    const lisbon = db.getTurnItems('s', 'main', 3).find((i) => !i.corrupt && (i.item as { role?: string }).role === 'assistant');
    assert.ok(wrong && !wrong.corrupt && lisbon && !lisbon.corrupt);
    const reviews = reviewData({
      turnReviews: [
        { ...one!, verdict: 'bad', tags: ['hallucination'] },
        { ...two!, tags: ['geography'] },
        { ...three!, verdict: 'bad', tags: ['hallucination'], updatedMs: 50 },
      ],
      corrections: [
        { ...one!, itemKey: contentKey(wrong.item), text: 'Rome.', ...times },
        // Older than --since below: left out by the filters, so its bad turn is reported.
        { ...three!, itemKey: contentKey(lisbon.item), text: 'Madrid.', createdMs: 1, updatedMs: 5 },
      ],
    });
    for (const format of ['sft', 'preference', 'eval'] as const) {
      const all = await write(db, reviews, `tag-all-${format}`, { format });
      const tagged = await write(db, reviews, `tag-${format}`, { format, tags: ['hallucination'] });
      const rome = (lines: Record<string, unknown>[]) => lines.filter((l) => JSON.stringify(l).includes('Rome.'));
      assert.equal(rome(all.lines).length, 1, format);
      assert.deepEqual(rome(tagged.lines), rome(all.lines), `${format}: the correction's record, as without --tag`);
      assert.deepEqual(tagged.checked.problems, []);
      if (format === 'eval') {
        assert.deepEqual(
          tagged.lines.map((l) => [l.kind, l.reference, l.tags]),
          [
            ['correction', 'Rome.', ['hallucination']],
            ['correction', 'Madrid.', ['hallucination']],
          ],
        );
      }
    }
    const since = await write(db, reviews, 'tag-since', { format: 'eval', tags: ['hallucination'], sinceMs: 10 });
    assert.deepEqual(since.lines, []);
    assert.deepEqual(since.report.skipped, [
      { where: 's main turn 3', reason: 'a bad turn has no reference answer but its correction, which the filters leave out' },
    ]);
  });

  it("reads the JS SDK's tool items (callId, function_call_result) as the store does", async () => {
    const c = chatMessages([
      user('Weather in Paris?'),
      { type: 'function_call', id: 'fc_c1', callId: 'c1', name: 'weather', status: 'completed', arguments: '{"city":"Paris"}' },
      {
        type: 'function_call_result',
        id: 'fco_1',
        callId: 'c1',
        name: 'weather',
        status: 'completed',
        output: { type: 'text', text: '12C' },
      },
      answer('It is 12C in Paris.'),
    ]);
    assert.deepEqual(c.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '12C' },
      { role: 'assistant', content: 'It is 12C in Paris.' },
    ]);
    assert.deepEqual(c.leftOut, []);
    // In a file, as earlier versions of the store wrote them.
    const { path, db } = await sessionFile('js', [
      [user('Weather in Paris?'), call('c1', 'weather', '{"city":"Paris"}'), output('c1', '12C'), answer('It is 12C in Paris.')],
    ]);
    const raw = openDatabase(path);
    const rows = raw.prepare('SELECT id, message_data FROM agent_messages ORDER BY id').all() as { id: number; message_data: string }[];
    const set = raw.prepare('UPDATE agent_messages SET message_data = ? WHERE id = ?');
    for (const row of rows) {
      const item = JSON.parse(row.message_data) as { type?: string };
      if (item.type === 'function_call')
        set.run(
          JSON.stringify({ type: 'function_call', id: 'fc_c1', callId: 'c1', name: 'weather', arguments: '{"city":"Paris"}' }),
          row.id,
        );
      if (item.type === 'function_call_output')
        set.run(
          JSON.stringify({ type: 'function_call_result', callId: 'c1', name: 'weather', output: { type: 'text', text: '12C' } }),
          row.id,
        );
    }
    raw.close();
    const { lines, report } = await write(db, reviewData({ turnReviews: goodTurns(db, [1]) }), 'js', { format: 'sft' });
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(report.leftOut, {});
    assert.deepEqual(
      (lines[0]!.messages as { role: string }[]).map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
  });

  it('images: counted wherever they are left out; no empty message; text parts kept apart', async () => {
    const c = chatMessages([
      user([
        { type: 'input_text', text: 'Translate to French:' },
        { type: 'input_text', text: 'Good morning.' },
      ]),
      user([image('https://example.com/cat.png')]),
      call('c1', 'screenshot', '{}'),
      output('c1', [{ type: 'input_text', text: 'A page:' }, image('data:image/png;base64,AAAA')]),
    ]);
    assert.deepEqual(c.messages.slice(0, 1), [{ role: 'user', content: 'Translate to French:\nGood morning.' }]);
    assert.equal(
      c.messages.some((m) => m.role === 'user' && m.content === ''),
      false,
      'an image-only message is no empty message',
    );
    assert.deepEqual(c.messages[2], { role: 'tool', tool_call_id: 'c1', content: 'A page:' });
    assert.deepEqual(c.leftOut, ['a input_image part of a message', 'a user message without text', 'a input_image part of a tool output']);

    const { db } = await sessionFile('images', [
      [
        user([
          { type: 'input_text', text: 'Translate to French:' },
          { type: 'input_text', text: 'Good morning.' },
        ]),
        answer('Bonjour.'),
      ],
      [user([image('https://example.com/cat.png')]), answer('A cat on a sofa.')],
      [
        user('Take a screenshot and describe it'),
        call('c1', 'screenshot', '{}'),
        output('c1', [image('data:image/png;base64,AAAA')]),
        answer('A login page.'),
      ],
    ]);
    const reviews = reviewData({ turnReviews: goodTurns(db, [1, 2, 3]) });
    const sft = await write(db, reviews, 'images-sft', { format: 'sft', contextTurns: 0 });
    assert.deepEqual(sft.checked.problems, []);
    assert.deepEqual(
      sft.lines.map((l) => l.messages),
      [
        [
          { role: 'user', content: 'Translate to French:\nGood morning.' },
          { role: 'assistant', content: 'Bonjour.', weight: 1 },
        ],
      ],
    );
    assert.deepEqual(sft.report.skipped, [
      { where: 's main turn 2', reason: 'the user message has no text (images and other parts with no chat form are left out)' },
      {
        where: 's main turn 3',
        reason: 'the output of tool call c1 has no text (images and other parts with no chat form are left out)',
      },
    ]);
    assert.equal(sft.report.leftOut['a input_image part of a tool output'], 1);
    const evalSet = await write(db, reviews, 'images-eval', { format: 'eval', contextTurns: 0 });
    assert.deepEqual(
      evalSet.lines.map((l) => (l.input as { content: string }[]).map((m) => m.content)),
      [['Translate to French:\nGood morning.'], ['Take a screenshot and describe it']],
    );
    assert.equal(evalSet.report.skipped[0]!.where, 's main turn 2');
  });

  it("the checker takes OpenAI's fine-tuning format: content parts, images in user messages; no developer role", () => {
    // OpenAI's own vision fine-tuning example.
    const vision = {
      messages: [
        { role: 'system', content: 'You identify cheeses.' },
        { role: 'user', content: 'What is this cheese?' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://upload.wikimedia.org/Danbo_Cheese.jpg' } }] },
        { role: 'assistant', content: 'Danbo' },
      ],
    };
    assert.deepEqual(sftProblems(vision), []);
    const parts = {
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        // Content may be left out when the assistant calls tools (OpenAI's tool-calling example).
        { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 'o' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
      ],
    };
    assert.deepEqual(sftProblems(parts), []);
    assert.match(
      sftProblems({
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
        ],
      }).join(),
      /messages\[0\]\.role "developer" is not system, user, assistant or tool/,
    );
    const wrongParts = sftProblems({
      messages: [
        { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
        { role: 'user', content: [] },
        { role: 'user', content: [{ type: 'input_audio', input_audio: {} }] },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'huge' } }] },
        { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
      ],
    });
    assert.deepEqual(wrongParts, [
      'messages[0].content[0] must be a content part of type "text" in a system message',
      'messages[1].content must be text or a non-empty list of content parts',
      'messages[2].content[0] must be a content part of type "text" or "image_url" in a user message',
      'messages[3].content[0].image_url.detail must be "auto", "low" or "high"',
      'messages[4].content[0] must be a content part of type "text" or "refusal" in an assistant message',
    ]);
    assert.deepEqual(
      preferenceProblems({
        input: { messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }] },
        preferred_output: [{ role: 'assistant', content: [{ type: 'text', text: 'a' }] }],
        non_preferred_output: [{ role: 'assistant', content: 'b' }],
      }),
      [],
    );
    const file = [JSON.stringify(vision), JSON.stringify({ messages: [{ role: 'developer', content: 'x' }, ...vision.messages.slice(1)] })];
    assert.deepEqual(
      checkJsonl('sft', file.join('\n')).problems.map((p) => p.line),
      [2],
    );
  });
});
