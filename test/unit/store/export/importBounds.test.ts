/**
 * The bounds of an import (src/store/export/importLimits.ts): how deep an item may nest, how long an item, a field
 * and a line may be; each refused with a `malformed` TransferError naming the bound and nothing written, while the
 * largest thing our own export writes for a real session (an image as base64) still goes through.
 */
import { strict as assert } from 'node:assert';
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AgentInputItem } from '@openai/agents';
import {
  AdvancedSQLiteSession,
  JSON_EXPORT_FORMAT,
  JSON_EXPORT_VERSION,
  TransferError,
  exportSessionToFile,
  importSessionFile,
} from '../../../../src/store';
import { boundedLines } from '../../../../src/store/export/boundedLines';
import {
  MAX_IMPORT_FIELD_CHARS,
  MAX_IMPORT_ITEM_CHARS,
  MAX_IMPORT_JSON_DEPTH,
  nestsDeeperThan,
} from '../../../../src/store/export/importLimits';
import { tempDir } from '../../../support/tempFiles';

const malformed =
  (check: (e: TransferError) => boolean) =>
  (e: unknown): boolean =>
    e instanceof TransferError && e.problem === 'malformed' && check(e);

/** A user message whose input part carries `levels` nested lists: the item nests `levels + 3` deep. */
const nestedItem = (levels: number) =>
  `{"type":"message","role":"user","content":[{"type":"input_text","text":"deep","extra":${'['.repeat(levels)}${']'.repeat(levels)}}]}`;

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

describe('import bounds', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-import-bounds-');
  let n = 0;
  const file = (name: string, text: string) => {
    const path = join(tmp.dir, `${++n}-${name}`);
    writeFileSync(path, text);
    return path;
  };
  const target = () => join(tmp.dir, `${++n}-target.db`);
  after(() => tmp.cleanup());

  describe('nesting depth, measured without recursion', () => {
    it('counts arrays and objects, not brackets inside strings', () => {
      assert.equal(nestsDeeperThan('['.repeat(600) + ']'.repeat(600), 512), true);
      assert.equal(nestsDeeperThan('['.repeat(512) + ']'.repeat(512), 512), false);
      assert.equal(nestsDeeperThan('{"a":'.repeat(513) + '1' + '}'.repeat(513), 512), true);
      // Brackets in strings, escaped quotes among them, are text.
      const text = JSON.stringify({ s: '['.repeat(2000) + '\\"' + '{'.repeat(2000) });
      assert.equal(nestsDeeperThan(text, 512), false);
      // A million levels: no stack involved.
      assert.equal(nestsDeeperThan('['.repeat(1_000_000), 512), true);
    });

    it('a JSONL item nested past the bound is refused, typed, before anything recurses; nothing is written', async () => {
      const db = target();
      const deep = file(
        'deep.jsonl',
        `{"role":"user","content":"ok"}\n{"role":"user","content":${'['.repeat(200_000)}${']'.repeat(200_000)}}\n`,
      );
      await assert.rejects(
        importSessionFile(db, deep, { sessionId: 's', createTables: true }),
        malformed((e) => e.line === 2 && e.message.includes(`more than ${MAX_IMPORT_JSON_DEPTH} levels`)),
      );
      assert.equal(existsSync(db), false, 'the check comes before the database is opened');
      const justOver = file('over.jsonl', nestedItem(MAX_IMPORT_JSON_DEPTH - 2) + '\n');
      await assert.rejects(
        importSessionFile(target(), justOver, { sessionId: 's', createTables: true }),
        malformed((e) => e.line === 1),
      );
    });

    it('an item exactly at the bound is imported whole', async () => {
      const db = target();
      const line = nestedItem(MAX_IMPORT_JSON_DEPTH - 3);
      assert.equal(nestsDeeperThan(line, MAX_IMPORT_JSON_DEPTH), false);
      const r = await importSessionFile(db, file('at.jsonl', line + '\n'), { sessionId: 's', createTables: true });
      assert.equal(r.items, 1);
      const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: db, readonly: true });
      try {
        const got = await s.getItems();
        assert.equal(got.length, 1);
        const levels = MAX_IMPORT_JSON_DEPTH - 3;
        assert.ok(JSON.stringify(got[0]).includes(`"extra":${'['.repeat(levels)}${']'.repeat(levels)}`), 'the nesting is kept whole');
      } finally {
        s.close();
      }
    });

    it('a JSON export: a message nested past the bound names its path; a whole document nested so is refused unread', async () => {
      const doc = {
        format: JSON_EXPORT_FORMAT,
        version: JSON_EXPORT_VERSION,
        scope: 'session',
        branch: null,
        structured: false,
        session: { session_id: 's', created_at: null, updated_at: null },
        messages: [{ ref: 0, created_at: null, message_data: nestedItem(600) }],
        structure: [],
        usage: [],
      };
      for (const layout of ['one line', 'indented']) {
        const path = file('deep.json', layout === 'one line' ? JSON.stringify(doc) : JSON.stringify(doc, null, 2));
        await assert.rejects(
          importSessionFile(target(), path, { createTables: true }),
          malformed((e) => e.jsonPath === '$.messages[0].message_data' && e.message.includes(`${MAX_IMPORT_JSON_DEPTH} levels`)),
        );
      }
      // Written by hand: JSON.stringify itself recurses.
      const deepDoc = file(
        'deep-doc.json',
        JSON.stringify({ ...doc, messages: [] }).replace(/}$/, `,"extra":${'['.repeat(5000)}${']'.repeat(5000)}}`),
      );
      await assert.rejects(
        importSessionFile(target(), deepDoc, { createTables: true }),
        malformed((e) => e.jsonPath === '$'),
      );
    });
  });

  describe('sizes', () => {
    it('a JSONL line longer than an item may be is refused by its line number', async () => {
      const db = target();
      const long = JSON.stringify({ role: 'user', content: 'x'.repeat(MAX_IMPORT_ITEM_CHARS) });
      const path = file('long.jsonl', `{"role":"user","content":"hi"}\n${long}\n`);
      await assert.rejects(
        importSessionFile(db, path, { sessionId: 's', createTables: true }),
        malformed((e) => e.line === 2 && e.message.includes('33,554,432 characters') && /bound of an imported item/.test(e.message)),
      );
      assert.equal(existsSync(db), false);
    });

    it('a JSON export: a message longer than an item, and an id longer than a field, name their path', async () => {
      const doc = {
        format: JSON_EXPORT_FORMAT,
        version: JSON_EXPORT_VERSION,
        scope: 'session',
        branch: null,
        structured: false,
        session: { session_id: 's', created_at: null, updated_at: null },
        messages: [
          { ref: 0, created_at: null, message_data: JSON.stringify({ role: 'user', content: 'x'.repeat(MAX_IMPORT_ITEM_CHARS) }) },
        ],
        structure: [],
        usage: [],
      };
      await assert.rejects(
        importSessionFile(target(), file('big.json', JSON.stringify(doc)), { createTables: true }),
        malformed((e) => e.jsonPath === '$.messages[0].message_data' && /32 MiB/.test(e.message)),
      );
      const longId = { ...doc, messages: [], session: { ...doc.session, session_id: 'i'.repeat(MAX_IMPORT_FIELD_CHARS + 1) } };
      await assert.rejects(
        importSessionFile(target(), file('id.json', JSON.stringify(longId)), { createTables: true }),
        malformed((e) => e.jsonPath === '$.session.session_id' && e.message.includes('1,048,576 characters')),
      );
    });

    it('what our export writes for a session with a 20 MB image imports again, as JSON and as JSONL', async () => {
      const source = target();
      // A 20 MB PNG as the Responses API takes it at most: about 27 MB of base64 in one item.
      const image = `data:image/png;base64,${'iVBORw0K'.repeat((20 * 1024 * 1024 * 4) / 3 / 8)}`;
      const items = [
        { role: 'user', content: [{ type: 'input_image', image, detail: 'auto' }] },
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'A cat.' }] },
      ] as AgentInputItem[];
      const s = new AdvancedSQLiteSession({ sessionId: 'pic', dbPath: source, createTables: true });
      await s.addItems(items);
      s.close();
      for (const format of ['json', 'jsonl'] as const) {
        const out = join(tmp.dir, `${++n}-pic.${format}`);
        await exportSessionToFile(source, out, format, { sessionId: 'pic' });
        const copy = target();
        const r = await importSessionFile(copy, out, { sessionId: 'pic', createTables: true });
        assert.equal(r.items, 2, format);
        const back = new AdvancedSQLiteSession({ sessionId: 'pic', dbPath: copy, readonly: true });
        try {
          const got = await back.getItems();
          assert.equal(JSON.stringify(got).includes(image), true, `${format}: the image came back whole`);
        } finally {
          back.close();
        }
      }
    });
  });

  describe('boundedLines', () => {
    async function readlineLines(path: string): Promise<string[]> {
      const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
      return collect(rl);
    }

    it('splits as readline does: \\n, \\r\\n and \\r, across read chunks, no empty last line', async () => {
      // 64 KiB is createReadStream's chunk: a \r\n and a multi-byte character straddle the first boundary.
      const text = 'a'.repeat(65_535) + '\r\n' + 'b\rc\n\nd\r\n' + 'é'.repeat(40_000) + '\n€\r\n\r\nlast';
      const path = file('lines.txt', text);
      const expected = await readlineLines(path);
      assert.deepEqual([expected.length, expected.at(-1)], [9, 'last']);
      assert.deepEqual(await collect(boundedLines(path, 100_000, () => new Error('too long'))), expected);
      const ending = file('ending.txt', 'x\ny\n');
      assert.deepEqual(await collect(boundedLines(ending, 10, () => new Error('too long'))), await readlineLines(ending));
    });

    it('stops at the first line past the bound, naming it, having read no further', async () => {
      const path = file('bound.txt', `${'a'.repeat(10)}\n${'b'.repeat(11)}\n${'c'.repeat(5)}\n`);
      const seen: string[] = [];
      await assert.rejects(
        (async () => {
          for await (const l of boundedLines(path, 10, (line) => new Error(`line ${line} too long`))) seen.push(l);
        })(),
        /line 2 too long/,
      );
      assert.deepEqual(seen, ['a'.repeat(10)]);
      // A long line that is the whole of a large read (no break in the chunk) is caught too.
      const huge = file('huge.txt', 'z'.repeat(300_000));
      await assert.rejects(collect(boundedLines(huge, 100_000, (line) => new Error(`line ${line} too long`))), /line 1 too long/);
      assert.equal(readFileSync(huge, 'utf8').length, 300_000);
    });
  });
});
