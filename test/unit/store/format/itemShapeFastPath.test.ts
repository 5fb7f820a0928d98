/**
 * The read fast path of the item format (`fastFromStored`, and `fromStoredItems` converting in one pass): it must return
 * exactly what the general conversion (`fromStoredItemsGeneral`) returns, values, key order and object identity, for
 * every item of the Python conformance files, for what the JS runner writes, and for every variation of the shapes the
 * fast path handles (extra, JS-only, undefined and missing keys, other statuses, parts and roles…).
 */
import { strict as assert } from 'node:assert';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, toStoredItem } from '../../../../src/store';
import { fastFromStored, fromStoredItems, fromStoredItemsGeneral } from '../../../../src/store/format/itemShape';
import { pythonJsonLoads } from '../../../../src/store/format/pythonJson';
import { turnInput } from '../../../../scripts/bench/workload';
import { BUILTIN_TOOL_ITEMS } from '../../../support/builtinToolItems';
import { inspect } from '../../../support/tableDump';
import { copyFixture, tempDir } from '../../../support/tempFiles';

type Json = Record<string, unknown>;

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'conformance');

/** Both conversions agree: deep equality (prototypes included), key order, and which items come back as stored. */
function sameAsGeneral(items: readonly unknown[], what: string): void {
  const fast = fromStoredItems(items);
  const general = fromStoredItemsGeneral(items);
  assert.deepStrictEqual(fast, general, what);
  assert.equal(JSON.stringify(fast), JSON.stringify(general), `${what}: key order`);
  fast.forEach((item, i) =>
    assert.equal(item === items[i], general[i] === items[i], `${what}: item ${i} is returned as stored by both, or by neither`),
  );
}

/** Every item of the conformance files, decoded as `getStoredItems` decodes them. */
function conformanceItems(): unknown[] {
  const { dir, cleanup } = tempDir();
  try {
    const out: unknown[] = [];
    for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.db'))) {
      const path = copyFixture(join(FIXTURES, name), dir);
      const rows = inspect(path, (db) => db.prepare('SELECT message_data FROM agent_messages ORDER BY id').all<{ message_data: string }>());
      for (const r of rows) {
        const decoded = pythonJsonLoads(r.message_data);
        if (decoded.ok) out.push(decoded.value);
      }
    }
    return out;
  } finally {
    cleanup();
  }
}

/** Items as the Python SDK stores them (its key order, `logprobs` on text parts, reasoning with encrypted content). */
const PYTHON_ITEMS: Json[] = [
  { content: 'What is the weather in Paris?', role: 'user' },
  { content: 'Be brief.', role: 'system' },
  { content: [{ type: 'input_text', text: 'Describe this' }], role: 'user', type: 'message' },
  {
    id: 'msg_1',
    content: [{ annotations: [], text: 'It is sunny.', type: 'output_text', logprobs: [] }],
    role: 'assistant',
    status: 'completed',
    type: 'message',
  },
  {
    id: 'msg_2',
    content: [{ refusal: 'I cannot help with that.', type: 'refusal' }],
    role: 'assistant',
    status: 'completed',
    type: 'message',
  },
  { arguments: '{"city":"Paris"}', call_id: 'call_w1', name: 'get_weather', type: 'function_call', id: 'fc_1', status: 'completed' },
  { arguments: '{}', call_id: 'call_n1', name: 'lookup', namespace: 'crm', type: 'function_call' },
  { call_id: 'call_w1', output: 'Sunny, 22°C', type: 'function_call_output' },
  { id: 'rs_1', summary: [{ text: 'Need the weather tool.', type: 'summary_text' }], type: 'reasoning', encrypted_content: 'gAAAA' },
  { id: 'rs_2', summary: [], type: 'reasoning' },
];

/** What the JS runner writes (stored through `toStoredItem`), and the JS shape older versions of the store wrote. */
const JS_ITEMS: Json[] = [
  { role: 'user', content: 'hello' },
  { role: 'user', content: [{ type: 'input_text', text: 'look', providerData: { x: 1 } }] },
  { type: 'function_call', callId: 'c1', name: 'get_weather', status: 'completed', arguments: '{}' },
  { type: 'function_call', id: '__fake_id__', callId: 'c2', name: 'f', arguments: '{}', providerData: { id: 'fc_2', extra: true } },
  { type: 'function_call_result', callId: 'c1', name: 'get_weather', status: 'completed', output: 'ok' },
  { type: 'function_call_result', callId: 'c2', name: 'f', status: 'completed', output: { type: 'text', text: 'ok' } },
  { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] },
  {
    id: '__fake_id__',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    phase: 'final_answer',
    content: [{ type: 'output_text', text: 'x' }],
  },
  {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'cited', providerData: { annotations: [{ a: 1 }] } }],
  },
  { type: 'reasoning', id: 'rs_1', content: [{ type: 'input_text', text: 'think' }], providerData: { encrypted_content: 'enc' } },
  {
    type: 'reasoning',
    id: 'rs_2',
    content: [{ type: 'input_text', text: 'think' }],
    rawContent: [{ type: 'reasoning_text', text: 'raw' }],
  },
];

/** The benchmark's workload: what `getItems()` of a 2,000-turn session reads, four items a turn. */
const BENCH_ITEMS: Json[] = [1, 2, 3, 42].flatMap((t) => turnInput(t).items as unknown as Json[]);

/** Variations of one content part of the kinds the fast path converts. */
function partVariants(part: Json): unknown[] {
  const out: unknown[] = [part, null, 'text', [part]];
  for (const key of Object.keys(part)) {
    const { [key]: _dropped, ...without } = part;
    out.push(without, { ...part, [key]: undefined }, { ...part, [key]: null }, { ...part, [key]: 7 });
  }
  out.push(
    { ...part, logprobs: [] },
    { logprobs: [], ...part },
    { ...part, annotations: [] },
    { ...part, annotations: [{ type: 'url_citation', url: 'https://example.com' }] },
    { ...part, annotations: null },
    { ...part, annotations: [], extra: 'x', more: { y: 1 } },
    { ...part, providerData: { z: 1 } },
    { ...part, promptCacheBreakpoint: true },
    { ...part, prompt_cache_breakpoint: true },
    { ...part, refusal: 'no' },
    { ...part, text: 'also', annotations: [] },
    { ...part, type: 'input_image', image_url: 'https://example.com/a.png' },
    JSON.parse(`{"__proto__": {"p": 1}, ${JSON.stringify(part).slice(1)}`) as unknown,
    Object.assign(Object.create({ inherited: 1 }) as Json, part),
    Object.assign(Object.create({ annotations: [] }) as Json, part),
    Object.assign(Object.create({ providerData: { z: 1 } }) as Json, part),
  );
  return out;
}

/** Variations of an item: every key dropped, undefined, null or of another type; extra, JS-only and caller keys; … */
function itemVariants(item: Json): unknown[] {
  const out: unknown[] = [item, Object.fromEntries(Object.entries(item).reverse())];
  for (const key of Object.keys(item)) {
    const { [key]: _dropped, ...without } = item;
    out.push(without, { ...item, [key]: undefined }, { ...item, [key]: null }, { ...item, [key]: 7 }, { ...item, [key]: [] });
  }
  out.push(
    { ...item, extra: 'x' },
    { extra: { nested: [1, 2] }, ...item, more: null },
    { ...item, 5: 'numeric key' },
    { ...item, providerData: { id: 'p' } },
    { ...item, callId: 'c' },
    { ...item, caller: { type: 'direct' } },
    { ...item, caller: { type: 'program', caller_id: 'prog_1' } },
    { ...item, caller: 'odd' },
    { ...item, name: 'named' },
    { ...item, namespace: 'ns' },
    { ...item, id: 'id_1' },
    { ...item, id: '__fake_id__' },
    { ...item, encrypted_content: 'enc' },
    { ...item, content: [{ type: 'reasoning_text', text: 'raw' }] },
    JSON.parse(`{"__proto__": {"p": 1}, ${JSON.stringify(item).slice(1)}`) as unknown,
    Object.assign(Object.create({ inherited: 1 }) as Json, item),
    Object.assign(Object.create({ providerData: { id: 'p' } }) as Json, item),
    Object.assign(Object.create({ callId: 'c' }) as Json, item),
    Object.assign(Object.create(null) as Json, item),
  );
  for (const status of ['completed', 'in_progress', 'incomplete', 'failed', null]) out.push({ ...item, status });
  for (const phase of ['commentary', 'final_answer', 'other', null]) out.push({ ...item, phase });
  for (const role of ['user', 'assistant', 'system', 'developer', 7]) out.push({ ...item, role });
  for (const type of ['message', 'function_call', 'function_call_output', 'reasoning', 'compaction', 'unknown'])
    out.push({ ...item, type });
  for (const output of ['text', { type: 'text', text: 'x' }, [{ type: 'input_text', text: 'x' }], null]) out.push({ ...item, output });
  for (const field of ['content', 'summary'] as const) {
    const parts = item[field];
    if (!Array.isArray(parts)) continue;
    parts.forEach((part, i) => {
      if (typeof part !== 'object' || part === null) return;
      for (const variant of partVariants(part as Json)) out.push({ ...item, [field]: parts.map((p, j) => (j === i ? variant : p)) });
    });
    out.push({ ...item, [field]: [] }, { ...item, [field]: [...parts, ...parts] }, { ...item, [field]: 'plain' });
  }
  return out;
}

/** A deterministic reordering, so tool outputs also come before their calls. */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  let seed = 12345;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('item shape: the read fast path returns exactly what the general conversion returns', () => {
  const conformance = conformanceItems();
  const jsStored = JS_ITEMS.map((item) => toStoredItem(item as unknown as AgentInputItem));
  const corpus: Record<string, unknown[]> = {
    'the conformance files': conformance,
    'Python-written items': PYTHON_ITEMS,
    'JS-written items, stored': jsStored,
    'JS-shaped items of older files': JS_ITEMS,
    'the built-in tool session': BUILTIN_TOOL_ITEMS,
    'the benchmark workload': BENCH_ITEMS,
  };

  it('the conformance files hold items to compare', () => {
    assert.ok(conformance.length >= 4, `${conformance.length} items`);
  });

  for (const [name, items] of Object.entries(corpus)) {
    it(`${name}: item by item and as one history`, () => {
      items.forEach((item, i) => sameAsGeneral([item], `${name} #${i}`));
      sameAsGeneral(items, name);
      sameAsGeneral(shuffled(items), `${name}, reordered`);
    });
  }

  it('every variation of the shapes the fast path converts, alone and in one history', () => {
    const bases = [...PYTHON_ITEMS, ...jsStored, ...BENCH_ITEMS];
    const all = bases.flatMap(itemVariants);
    assert.ok(all.length > 1000, `${all.length} variations`);
    all.forEach((item, i) => sameAsGeneral([item], `variation #${i}: ${JSON.stringify(item)}`));
    sameAsGeneral(all, 'all variations');
    sameAsGeneral(shuffled(all), 'all variations, reordered');
  });

  it('a tool output takes the name of the last call with its call_id, wherever it is, however either was converted', () => {
    const call = (callId: string, name: string, extra: Json = {}) => ({
      type: 'function_call',
      call_id: callId,
      name,
      arguments: '{}',
      ...extra,
    });
    const output = (callId: string, extra: Json = {}) => ({ type: 'function_call_output', call_id: callId, output: 'ok', ...extra });
    const items = [
      output('late'),
      call('late', 'found_later'),
      call('twice', 'first'),
      output('twice'),
      call('twice', 'second'),
      output('caller', { caller: { type: 'direct' } }),
      call('caller', 'with_caller', { caller: { type: 'direct' } }),
      { type: 'function_call', callId: 'js', name: 'js_call', arguments: '{}' },
      output('js'),
      output('orphan'),
      output('opaque', { output: [{ type: 'input_text', text: 'x' }] }),
      call('opaque', 'not_a_name'),
      { type: 'function_call_result', callId: 'late', name: 'kept', status: 'completed', output: 'ok' },
    ];
    sameAsGeneral(items, 'naming');
    // eslint-disable-next-line no-sparse-arrays
    sameAsGeneral([call('h', 'holey'), , output('h')], 'a sparse list');
    const names = fromStoredItems(items).map((i) => (i as { name?: string }).name);
    assert.deepEqual(names, [
      'found_later',
      'found_later',
      'first',
      'second',
      'second',
      'with_caller',
      'with_caller',
      'js_call',
      'js_call',
      'orphan',
      undefined,
      'not_a_name',
      'kept',
    ]);
  });

  it('the fast path converts the items every run writes (Python, JS and benchmark items) without the general path', () => {
    // Not the user part with extra fields, nor the reasoning with raw content: those are left to the general path.
    const common = jsStored.filter((_, i) => i !== 1 && i !== 10);
    for (const item of [...PYTHON_ITEMS, ...BENCH_ITEMS, ...common]) assert.notEqual(fastFromStored(item), undefined, JSON.stringify(item));
  });

  it('a session: getItems() is the general conversion of getStoredItems(), with and without a limit', async () => {
    const { dir, cleanup } = tempDir();
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: join(dir, 's.db'), createTables: true });
    try {
      for (let t = 1; t <= 30; t++) await s.addItems(turnInput(t).items);
      await s.addItems(BUILTIN_TOOL_ITEMS as AgentInputItem[]);
      await s.addItems(JS_ITEMS as unknown as AgentInputItem[]);
      await s.addItems(PYTHON_ITEMS as unknown as AgentInputItem[]);
      for (const limit of [undefined, -1, 3, 50]) {
        const items = await s.getItems(limit);
        const expected = fromStoredItemsGeneral(await s.getStoredItems(limit));
        assert.deepStrictEqual(items, expected, `limit ${limit}`);
        assert.equal(JSON.stringify(items), JSON.stringify(expected), `limit ${limit}: key order`);
      }
    } finally {
      s.close();
      cleanup();
    }
  });
});
