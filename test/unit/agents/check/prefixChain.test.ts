/**
 * A check's prefix chain (src/store/export/prefixChain.ts, through scratchStore.ts): the cases of one branch, prepared
 * in turn order and several at once as the check prepares them, each get a scratch file holding exactly their branch
 * through their turn — and the user's file is read once through the branch, not once per case from its start.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { CheckCase } from '../../../../src/agents/check/checkTypes';
import { ScratchFolder, TurnChangedError } from '../../../../src/agents/check/scratchStore';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import type { SessionReader } from '../../../../src/store/inspector/sessionReader';
import { tempDir } from '../../../support/tempFiles';
import { storedItems as stored, TURNS, turnKey, user } from './checkAgentKit';

const MORE = 40;
const question = (i: number) => `Question ${i}?`;
const texts = [...TURNS.map(([q]) => q), ...Array.from({ length: MORE }, (_, i) => question(i + 1))];

function caseOn(turn: number, text = texts[turn - 1]!): CheckCase {
  return {
    id: `s1/main/${turn}`,
    sessionId: 's1',
    branchId: 'main',
    turn,
    contentKey: turnKey(text),
    verdict: 'good',
    input: text,
    expected: { answer: null, trajectory: [] },
    note: null,
    tags: [],
  };
}

describe("a check's prefix chain", function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-check-chain-');
  let file: string;
  let db: SessionDatabase;
  let folder: ScratchFolder;
  let source: unknown[];
  /** The source's items through each turn: `through[t]` items. */
  const through: number[] = [0];
  /** The user's file as the scratch folder reads it, counting the items read. */
  let read = 0;
  let reader: Pick<SessionReader, 'getItemsPage'>;

  before(async () => {
    file = join(tmp.dir, 'long.db');
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true });
    for (const [q, rest] of TURNS) await w.addItems([user(q), ...rest] as never);
    for (let i = 1; i <= MORE; i++) await w.addItems([user(question(i)), { role: 'assistant', content: `Answer ${i}.` }] as never);
    w.close();
    source = await stored(file);
    for (const [, rest] of TURNS) through.push(through.at(-1)! + 1 + rest.length);
    for (let i = 1; i <= MORE; i++) through.push(through.at(-1)! + 2);
    db = openSessionDatabase(file, { readonly: true });
    reader = {
      getItemsPage: async (...args: Parameters<SessionDatabase['getItemsPage']>) => {
        const page = await db.getItemsPage(...args);
        read += page.items.length;
        return page;
      },
    };
  });
  beforeEach(() => {
    folder = ScratchFolder.create(tmp.dir);
    read = 0;
  });
  afterEach(() => folder.dispose());
  after(() => {
    db.close();
    tmp.cleanup();
  });

  it('gives each case of a branch its exact prefix, eight at a time, reading the branch once', async () => {
    const turns = Array.from({ length: TURNS.length + MORE - 1 }, (_, i) => i + 2);
    // As the check starts them: each case's copy asked for in turn order, at most eight awaited at once.
    for (let i = 0; i < turns.length; i += 8) {
      const batch = turns.slice(i, i + 8);
      const made = await Promise.all(batch.map((t) => folder.prepare(reader, caseOn(t), t)));
      for (const [j, scratch] of made.entries()) {
        const t = batch[j]!;
        assert.equal(scratch.turn, t);
        assert.equal(scratch.items, through[t]);
        assert.deepEqual(await stored(scratch.dbPath), source.slice(0, through[t]), `turn ${t}`);
        await folder.discard(scratch);
      }
    }
    // A copy per case from the branch's start reads the sum of the prefixes (about 2,000 items here); the chain reads
    // the branch once, plus the few items each case's page reads past its turn to see where the turn ends.
    const branch = source.length;
    assert.ok(read <= branch + 4 * turns.length, `read ${read} items of a ${branch}-item branch for ${turns.length} cases`);
  });

  it('a turn before the chain has grown to still gets its own prefix; a changed turn is refused and the chain goes on', async () => {
    const late = await folder.prepare(reader, caseOn(30), 1);
    const early = await folder.prepare(reader, caseOn(3), 2);
    assert.deepEqual(await stored(early.dbPath), source.slice(0, through[3]));
    assert.deepEqual(await stored(late.dbPath), source.slice(0, through[30]));
    await assert.rejects(folder.prepare(reader, caseOn(35, 'Another question?'), 3), TurnChangedError);
    const next = await folder.prepare(reader, caseOn(40), 4);
    assert.equal(next.turn, 40);
    assert.deepEqual(await stored(next.dbPath), source.slice(0, through[40]));
  });
});
