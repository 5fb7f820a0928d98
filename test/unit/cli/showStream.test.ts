/**
 * `agent-sessions show` written as it is read (issue 43: a whole session was gathered into one text, or for `--json`
 * one list of every item, before anything was printed: 1.3 GB for a branch of file A) must print exactly what the
 * command printed before, byte for byte: the transcript (coloured or not, fences and roles across page boundaries),
 * the JSON of a branch and of the whole session, and one turn.
 */
import { strict as assert } from 'node:assert';
import { show, SHOW_CHUNK_CHARS, SHOW_ITEMS_PER_PAGE, type CommandContext } from '../../../src/cli/commands';
import { markdownColorizer, paint, type Style, type Terminal } from '../../../src/cli/terminal';
import { openSessionDatabase, type AdvancedSQLiteSession } from '../../../src/store';
import { turnToMarkdown } from '../../../src/store/export/markdown';
import { writeMarkdownExport } from '../../../src/store/export/readerExport';
import { execSql, mk, Workspace } from '../../support/sessionHelpers';

/** `colorMarkdown` as it was: the whole text split into lines. */
function oldColorMarkdown(color: boolean, markdown: string): string {
  if (!color) return markdown;
  let fence: string | null = null;
  let reasoning = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (line.startsWith('>')) {
        if (line.startsWith('> **Reasoning')) reasoning = true;
        return reasoning ? paint(true, 'magenta', line) : line;
      }
      reasoning = false;
      const open = /^(`{3,})/.exec(line);
      if (fence !== null) {
        if (line === fence) fence = null;
        return paint(true, 'dim', line);
      }
      if (open) {
        fence = open[1]!;
        return paint(true, 'dim', line);
      }
      if (/^#{1,6} /.test(line)) return paint(true, 'cyan', paint(true, 'bold', line));
      const role = /^\*\*(User|Assistant|System|Developer|Tool call|Tool output|Unreadable item)\*\*(.*)$/.exec(line);
      if (role) {
        const style: Style =
          role[1] === 'User' ? 'green' : role[1] === 'Assistant' ? 'blue' : role[1] === 'Unreadable item' ? 'red' : 'yellow';
        return paint(true, style, paint(true, 'bold', role[1]!)) + role[2];
      }
      if (/^_.*_$/.test(line)) return paint(true, 'dim', line);
      return line;
    })
    .join('\n');
}

/** The command as it was: every item read, the text or the JSON made whole, then printed. */
async function oldShow(
  path: string,
  sessionId: string,
  branchId: string | undefined,
  turn: number | undefined,
  json: boolean,
  color: boolean,
) {
  const db = openSessionDatabase(path, { readonly: true });
  try {
    const tree = db.getBranchTree(sessionId);
    if (turn !== undefined) {
      const branch = branchId ?? (tree.find((b) => b.branchId === 'main') ?? tree[0])?.branchId ?? 'main';
      const items = db.getTurnItems(sessionId, branch, turn);
      if (json) return `${JSON.stringify({ sessionId, branchId: branch, turn, items }, null, 2)}\n`;
      return oldColorMarkdown(color, turnToMarkdown(turn, items, { headingLevel: 2 }));
    }
    if (json) {
      const out: unknown[] = [];
      for (const b of branchId !== undefined ? [branchId] : tree.map((x) => x.branchId)) {
        let after: number | null = null;
        const items: unknown[] = [];
        for (;;) {
          const page = db.getItemsPage(sessionId, b, { afterSequence: after, limit: 500 });
          items.push(...page.items);
          if (page.nextAfterSequence === null) break;
          after = page.nextAfterSequence;
        }
        out.push({ branchId: b, items });
      }
      return `${JSON.stringify({ sessionId, branches: out }, null, 2)}\n`;
    }
    let text = '';
    await writeMarkdownExport(db, { sessionId, branchId: branchId ?? null, signal: new AbortController().signal }, (chunk) => {
      text += chunk;
    });
    return oldColorMarkdown(color, text);
  } finally {
    db.close();
  }
}

async function newShow(
  path: string,
  sessionId: string,
  branchId: string | undefined,
  turn: number | undefined,
  json: boolean,
  color: boolean,
) {
  const chunks: string[] = [];
  const ctx: CommandContext = { term: { color } as Terminal, json, signal: new AbortController().signal };
  await show(ctx, path, sessionId, branchId, turn, async (chunk) => {
    chunks.push(chunk);
  });
  return { text: chunks.join(''), chunks: chunks.length };
}

/** A turn whose answer holds a fence, a quote and an emphasised line, so the colours depend on the lines before. */
function turnItems(n: number, lines: number): ReturnType<typeof mk.user>[] {
  const code = Array.from({ length: lines }, (_, i) => `line ${i} of turn ${n}`).join('\n');
  return [
    mk.user(`question ${n}\n> quoted\n_emphasis_`),
    mk.call('lookup', { callId: `call_${n}`, arguments: `{"n": ${n}}` }),
    mk.raw({ type: 'function_call_result', name: 'lookup', callId: `call_${n}`, status: 'completed', output: `# not a heading ${n}` }),
    mk.assistant(`answer ${n}\n\`\`\`js\n${code}\n\`\`\`\n**User** inside text`),
  ];
}

describe('agent-sessions show, as it is read (issue 43)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-show-')));
  afterEach(() => ws.cleanup());

  async function fill(s: AdvancedSQLiteSession, turns: number, from = 1): Promise<void> {
    for (let n = from; n < from + turns; n++) await s.addItems(turnItems(n, 1 + (n % 3)));
  }

  it('prints what the whole-text command printed, across pages, for a branch, the session and a turn', async function () {
    this.timeout(120_000);
    const s = ws.open();
    // More items than two pages on main, a branch forked inside the first page and one with non-ASCII in its id.
    const turns = Math.ceil((2 * SHOW_ITEMS_PER_PAGE + 20) / 4);
    await fill(s, turns);
    // One answer longer than a piece of `--json` (SHOW_CHUNK_CHARS), so a page is written in more than one.
    await s.addItems([mk.user('a long answer'), mk.assistant(`long ${'é'.repeat(SHOW_CHUNK_CHARS)} end`)]);
    await s.createBranchFromTurn(10, 'side');
    await fill(s, 3, 10);
    await s.switchToBranch('main');
    await s.createBranchFromTurn(turns - 1, 'é\u{1F600}');
    await fill(s, 2, turns - 1);
    s.close();
    // An unreadable row in main's second page.
    execSql(ws.path(), `UPDATE agent_messages SET message_data = '{not json' WHERE id = ${SHOW_ITEMS_PER_PAGE + 40}`);
    let compared = 0;
    for (const [branchId, turn] of [
      [undefined, undefined],
      ['main', undefined],
      ['side', undefined],
      ['é\u{1F600}', undefined],
      [undefined, 3],
      ['side', 11],
    ] as const) {
      for (const json of [false, true]) {
        for (const color of [false, true]) {
          const expected = await oldShow(ws.path(), 's1', branchId, turn, json, color);
          const got = await newShow(ws.path(), 's1', branchId, turn, json, color);
          const what = `${branchId ?? 'session'} ${turn ?? 'all'} ${json ? 'json' : 'text'} ${color ? 'colour' : 'plain'}`;
          assert.equal(got.text, expected, what);
          if (turn === undefined && branchId !== 'side') assert.ok(got.chunks > 3, `${what}: written in pieces (${got.chunks})`);
          compared++;
        }
      }
    }
    assert.equal(compared, 24);
  });

  it('colours a piece at a time as the whole text, wherever the pieces end', () => {
    const text = '# Session\n\n```js\ncode\n```\n**User** hi\n> q\n_e_\n````\n```\nstill code\n````\ntail without newline';
    for (const color of [false, true]) {
      for (let size = 1; size <= 7; size++) {
        const colorizer = markdownColorizer(color);
        let out = '';
        for (let i = 0; i < text.length; i += size) out += colorizer.write(text.slice(i, i + size));
        out += colorizer.end();
        assert.equal(out, oldColorMarkdown(color, text), `pieces of ${size}, ${color ? 'colour' : 'plain'}`);
      }
    }
  });

  it('paints reasoning as reasoning, and a message (a quote too) as text', () => {
    const markdown = turnToMarkdown(1, [
      { corrupt: false, item: { role: 'user', content: 'Weather?\nIn Paris.' }, createdAt: null },
      {
        corrupt: false,
        item: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Look it up.\nThen answer.' }] },
        createdAt: null,
      },
      { corrupt: false, item: { role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.' }] }, createdAt: null },
    ] as never);
    const colored = markdownColorizer(true);
    const lines = (colored.write(markdown) + colored.end()).split('\n');
    const magenta = paint(true, 'magenta', 'x').split('x')[0]!;
    const painted = (needle: string) => lines.find((l) => l.includes(needle))!.startsWith(magenta);
    assert.equal(painted('Look it up.'), true);
    assert.equal(painted('Then answer.'), true);
    assert.equal(painted('Weather?'), false);
    assert.equal(painted('In Paris.'), false);
    assert.equal(painted('Sunny.'), false);
  });
});
