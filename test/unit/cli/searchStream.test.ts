/**
 * `agent-sessions search` prints hits as the scan finds them: batch by batch while the scan goes on, never the whole
 * list at the end; `--json` is written the same way and is exactly `JSON.stringify({ query, hits, summary }, null, 2)`.
 */
import { strict as assert } from 'node:assert';
import type { AgentInputItem } from '@openai/agents';
import { searchCommand } from '../../../src/cli/searchCommand';
import type { CommandContext } from '../../../src/cli/commands';
import { TempFolder } from '../store/inspector/inspectorFixtures';

/** Runs the command with stdout captured: each write, and how many batches the scan had reported by then. */
async function capture(path: string, query: string, json: boolean): Promise<{ writes: string[]; returned: string }> {
  const writes: string[] = [];
  const ctx = {
    json,
    signal: new AbortController().signal,
    term: { color: false, page: async () => undefined, progress: () => ({ update: () => undefined, done: () => undefined }) },
  } as unknown as CommandContext;
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    const returned = await searchCommand(ctx, path, query, undefined);
    return { writes, returned };
  } finally {
    process.stdout.write = write;
  }
}

describe('agent-sessions search streams its hits', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  async function writeFile(): Promise<string> {
    const s = folder.session({ sessionId: 'long' });
    // 1,500 matching items: far more than the scan's first batch (200 rows), so the hits come in several batches.
    for (let t = 0; t < 30; t++) {
      await s.addItems(
        Array.from(
          { length: 50 },
          (_, i) => ({ role: i === 0 ? 'user' : 'assistant', content: `weather report ${t}.${i}` }) as AgentInputItem,
        ),
      );
    }
    return folder.path();
  }

  it('writes the header and the first hits before the scan is over, then the rest batch by batch', async () => {
    const path = await writeFile();
    const { writes, returned } = await capture(path, 'weather', false);
    assert.ok(writes.length >= 2, `hits written in ${writes.length} piece(s)`);
    assert.match(writes[0]!, /^SESSION {2}BRANCH {2}TURN {2}ITEM {7}MATCH\nlong {5}main {4}1 {5}user {7}weather report 0\.0\n/);
    const lines = writes.join('').split('\n').filter(Boolean);
    // The header, the hits, and the summary (written by the command itself, before a search index's catching up).
    assert.equal(lines.length, 1 + 1500 + 1);
    assert.ok(writes[0]!.split('\n').length - 2 < 1500, 'the first write holds the first batch, not every hit');
    assert.match(writes[writes.length - 1]!, /^1500 hits, 1500 items searched in \d+ ms\n$/);
    assert.equal(returned, '');
  });

  it('--json: the same text as the whole answer stringified, written as the hits come', async () => {
    const path = await writeFile();
    const { writes, returned } = await capture(path, 'report role:user', true);
    assert.equal(returned, '');
    assert.ok(writes.length >= 3, 'the opening, the hits, the summary');
    const text = writes.join('');
    const parsed = JSON.parse(text) as { query: unknown; hits: { turn: number }[]; summary: { hits: number } };
    assert.equal(text, `${JSON.stringify(parsed, null, 2)}\n`);
    assert.deepEqual(Object.keys(parsed), ['query', 'hits', 'summary']);
    assert.deepEqual([parsed.hits.length, parsed.summary.hits, parsed.hits[29]?.turn], [30, 30, 30]);
    const none = (await capture(path, 'zanzibar', true)).writes.join('');
    assert.equal(none, `${JSON.stringify(JSON.parse(none), null, 2)}\n`);
    assert.deepEqual((JSON.parse(none) as { hits: unknown[] }).hits, []);
  });
});
