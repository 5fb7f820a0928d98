/**
 * Plain SQLiteSession files (no structure tables): one branch, `main`, items in message-id order, types classified
 * from the items, turns derived as AdvancedSQLiteSession numbers them.
 */
import { strict as assert } from 'node:assert';
import type { AgentInputItem } from '@openai/agents';
import { SQLiteSession, toStoredItem, type ItemEntry, type SessionDatabase } from '../../../../src/store';
import { TempFolder, mk, sql } from './inspectorFixtures';

describe('SessionDatabase on plain SQLiteSession files', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  /** Items as written, with the turn each belongs to (0 before the first user item). */
  const written: { item: AgentInputItem; turn: number; type: string; toolName: string | null }[] = [
    { item: mk.system('be brief'), turn: 0, type: 'other', toolName: null },
    { item: mk.user('first question'), turn: 1, type: 'user', toolName: null },
    { item: mk.call('lookup', 'c1'), turn: 1, type: 'function_call', toolName: 'lookup' },
    // Named after its call (same call_id): the output itself carries no name.
    { item: mk.output('c1'), turn: 1, type: 'function_call_output', toolName: 'lookup' },
    { item: mk.assistant('first answer'), turn: 1, type: 'assistant', toolName: null },
    { item: mk.user('second question'), turn: 2, type: 'user', toolName: null },
    { item: mk.assistant('second answer'), turn: 2, type: 'assistant', toolName: null },
    { item: mk.user('third question'), turn: 3, type: 'user', toolName: null },
  ];

  async function writePlain(names: { sessionsTable?: string; messagesTable?: string } = {}): Promise<SessionDatabase> {
    const path = folder.path();
    const s = folder.track(new SQLiteSession({ sessionId: 'plain', dbPath: path, ...names }));
    await s.addItems(written.slice(0, 5).map((w) => w.item));
    await s.addItems(written.slice(5).map((w) => w.item));
    s.close();
    const other = folder.track(new SQLiteSession({ sessionId: 'second', dbPath: path, ...names }));
    await other.addItems([mk.user('elsewhere')]);
    other.close();
    return folder.inspect(path);
  }

  function readAll(db: SessionDatabase, limit: number): ItemEntry[] {
    const out: ItemEntry[] = [];
    for (let after: number | null = null; ;) {
      const page = db.getItemsPage('plain', 'main', { afterSequence: after, limit });
      out.push(...page.items);
      if (page.nextAfterSequence === null) return out;
      after = page.nextAfterSequence;
    }
  }

  for (const [label, names] of [
    ['default table names', {}],
    ['custom table names, one quoted with a space', { sessionsTable: '"Conv Sessions"', messagesTable: 'conv_items' }],
  ] as const) {
    it(`lists sessions as unstructured, one branch each (${label})`, async () => {
      const db = await writePlain(names);
      const byId = new Map(db.listSessions().map((s) => [s.sessionId, s]));
      const plain = byId.get('plain');
      assert.deepEqual([plain?.messageCount, plain?.branchCount, plain?.structured, plain?.usage], [written.length, 1, false, null]);
      assert.notEqual(plain?.createdAt, null, 'read from the sessions table');
      assert.equal(byId.get('second')?.messageCount, 1);
      assert.deepEqual(
        readAll(db, 4).map((e) => (e.corrupt ? null : e.item)),
        written.map((w) => toStoredItem(w.item)),
      );
    });
  }

  it('pages items in message-id order with classified types and null structure fields', async () => {
    const db = await writePlain();
    const ids = sql<{ id: number }>(folder.path(), "SELECT id FROM agent_messages WHERE session_id = 'plain' ORDER BY id").map((r) => r.id);
    for (const limit of [1, 3, 50]) {
      const entries = readAll(db, limit);
      assert.deepEqual(
        entries.map((e) => (e.corrupt ? null : e.item)),
        written.map((w) => toStoredItem(w.item)),
      );
      assert.deepEqual(
        entries.map((e) => [e.messageId, e.sequenceNumber]),
        ids.map((id) => [id, id]),
      );
      assert.deepEqual(
        entries.map((e) => [e.type, e.toolName]),
        written.map((w) => [w.type, w.toolName]),
      );
      assert.ok(entries.every((e) => e.structureId === null && e.userTurnNumber === null && e.branchTurnNumber === null));
    }
    assert.deepEqual(db.getItemsPage('plain', 'other-branch', { limit: 5 }), { items: [], nextAfterSequence: null });
  });

  it('one branch, main, in the tree; turns derived as AdvancedSQLiteSession would number them', async () => {
    const db = await writePlain();
    const [main, ...rest] = db.getBranchTree('plain');
    assert.deepEqual(rest, []);
    assert.deepEqual(
      { ...main, createdAt: undefined },
      {
        branchId: 'main',
        messageCount: written.length,
        userTurns: 3,
        createdAt: undefined,
        parentBranchId: null,
        forkTurn: null,
        sharedItemCount: 0,
      },
    );
    const turns = db.getTurnsPage('plain', 'main', { limit: 2 });
    assert.deepEqual(
      turns.turns.map((t) => [t.turn, t.preview, t.totalTokens]),
      [
        [1, 'first question', null],
        [2, 'second question', null],
      ],
    );
    assert.equal(turns.nextAfterTurn, 2);
    assert.deepEqual(
      db.getTurnsPage('plain', 'main', { afterTurn: 2, limit: 2 }).turns.map((t) => t.preview),
      ['third question'],
    );
    for (const turn of [0, 1, 2, 3, 4]) {
      assert.deepEqual(
        db.getTurnItems('plain', 'main', turn).map((e) => (e.corrupt ? null : e.item)),
        written.filter((w) => w.turn === turn).map((w) => toStoredItem(w.item)),
        `turn ${turn}`,
      );
    }
  });

  it('reports a corrupt row with its raw text and no type', async () => {
    const db = await writePlain();
    const [, second] = readAll(db, 10);
    assert.ok(second);
    sql(folder.path(), "UPDATE agent_messages SET message_data = 'not json' WHERE id = ?", second.messageId);
    const entry = readAll(db, 10)[1];
    assert.ok(entry?.corrupt);
    assert.deepEqual([entry.raw, entry.type, entry.toolName], ['not json', null, null]);
    // That was the first user message: the derived turns now start at the next one.
    assert.deepEqual(
      db.getTurnsPage('plain', 'main', { limit: 5 }).turns.map((t) => t.preview),
      ['second question', 'third question'],
    );
  });
});
