/**
 * Browsing queries (spec §10.2, §12 a): getConversationTurns previews, findTurnsByContent matching,
 * getConversationByTurns grouping and getToolUsage counting and ordering.
 */
import { strict as assert } from 'node:assert';
import { type AdvancedSQLiteSession } from '../../../../src/store';
import { Workspace, execSql, mk, sameJson } from '../../../support/sessionHelpers';

const TS = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

describe('AdvancedSQLiteSession browsing', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  describe('getConversationTurns (§10.2)', () => {
    it('one entry per user row by turn, with turn, content, fullContent, timestamp, canBranch in that order', async () => {
      const s = ws.open();
      await s.addItems([mk.user('hello'), mk.assistant('hi'), mk.user('again')]);
      const turns = await s.getConversationTurns();
      assert.deepEqual(
        turns.map((t) => Object.keys(t)),
        [
          ['turn', 'content', 'fullContent', 'timestamp', 'canBranch'],
          ['turn', 'content', 'fullContent', 'timestamp', 'canBranch'],
        ],
      );
      assert.deepEqual(
        turns.map((t) => [t.turn, t.content, t.fullContent, t.canBranch]),
        [
          [1, 'hello', 'hello', true],
          [2, 'again', 'again', true],
        ],
      );
      for (const t of turns) assert.match(t.timestamp ?? '', TS);
    });

    it('cuts previews to 100 code points plus "..." (120 emoji → 103 code points)', async () => {
      const s = ws.open();
      const exactly100 = 'x'.repeat(100);
      const long = 'abcdefghij'.repeat(15);
      const emoji = '😀'.repeat(120);
      await s.addItems([mk.user(exactly100), mk.user(long), mk.user(emoji), mk.user('é'.repeat(101))]);
      const turns = await s.getConversationTurns();
      assert.equal(turns[0]?.content, exactly100);
      assert.equal(turns[1]?.content, long.slice(0, 100) + '...');
      assert.equal(turns[1]?.fullContent, long);
      assert.equal(turns[2]?.content, '😀'.repeat(100) + '...');
      assert.equal([...(turns[2]?.content ?? '')].length, 103);
      assert.equal(turns[2]?.fullContent, emoji);
      assert.equal(turns[3]?.content, 'é'.repeat(100) + '...');
    });

    it('previews list content as Python-style JSON with raw non-ASCII; missing content → "", null → "null"', async () => {
      const s = ws.open();
      const parts = [{ type: 'input_text', text: 'Convert 22°C "now"\n' }, { type: 'input_image' }];
      await s.addItems([mk.user(parts), mk.raw({ role: 'user' }), mk.user(null), mk.user({ a: 1, b: [true, null] }), mk.user(7)]);
      const turns = await s.getConversationTurns();
      assert.deepEqual(
        turns.map((t) => [t.turn, t.content, t.fullContent]),
        [
          [1, '[{"type": "input_text", "text": "Convert 22°C \\"now\\"\\n"}, {"type": "input_image"}]', parts],
          [2, '', ''],
          [3, 'null', null],
          [4, '{"a": 1, "b": [true, null]}', { a: 1, b: [true, null] }],
          [5, '7', 7],
        ],
      );
    });

    it('cuts long list previews too', async () => {
      const s = ws.open();
      await s.addItems([mk.user([{ type: 'input_text', text: 'ü'.repeat(200) }])]);
      const [t] = await s.getConversationTurns();
      const full = `[{"type": "input_text", "text": "${'ü'.repeat(200)}"}]`;
      assert.equal(t?.content, [...full].slice(0, 100).join('') + '...');
    });

    it('skips corrupt rows; uses the copy time as timestamp for copies; reads an explicit branch', async () => {
      const s = ws.open();
      await s.addItems([mk.user('one'), mk.user('two'), mk.user('three')]);
      execSql(ws.path(), "UPDATE agent_messages SET message_data = '{bad' WHERE id = 2");
      execSql(ws.path(), "UPDATE message_structure SET created_at = '2020-01-01 00:00:00'");
      await s.createBranchFromTurn(3, 'b');
      const onB = await s.getConversationTurns();
      assert.deepEqual(
        onB.map((t) => t.turn),
        [1],
      );
      assert.notEqual(onB[0]?.timestamp, '2020-01-01 00:00:00');
      assert.match(onB[0]?.timestamp ?? '', TS);
      const onMain = await s.getConversationTurns('main');
      assert.deepEqual(
        onMain.map((t) => [t.turn, t.content, t.timestamp]),
        [
          [1, 'one', '2020-01-01 00:00:00'],
          [3, 'three', '2020-01-01 00:00:00'],
        ],
      );
      assert.deepEqual(await s.getConversationTurns('nope'), []);
      assert.deepEqual(
        (await s.getConversationTurns(null as unknown as string)).map((t) => t.turn),
        [1],
      );
    });
  });

  describe('getLatestTurnNumber (not in Python: what settling a run asks)', () => {
    /** The turn of getConversationTurns()'s last entry: what the method must answer without reading every turn. */
    const lastOfAll = async (s: AdvancedSQLiteSession, branch?: string) => {
      const turns = await s.getConversationTurns(branch);
      return turns[turns.length - 1]?.turn ?? null;
    };

    it("answers getConversationTurns()'s last turn on every branch, and null on one without a user turn", async () => {
      const s = ws.open();
      assert.equal(await s.getLatestTurnNumber(), null);
      await s.addItems([mk.user('one'), mk.assistant('a1'), mk.user('two'), mk.call('f'), mk.output('c_f'), mk.assistant('a2')]);
      await s.addItems([mk.user('three'), mk.assistant('a3'), mk.call('g'), mk.output('c_g')]);
      assert.equal(await s.getLatestTurnNumber(), 3);
      await s.createBranchFromTurn(2, 'side');
      assert.equal(await s.getLatestTurnNumber(), 1, 'a branch from turn 2 holds turn 1 until its own user turn');
      assert.equal(await s.getLatestTurnNumber('main'), 3);
      await s.addItems([mk.user('two again'), mk.assistant('b2')]);
      for (const branch of ['main', 'side', 'nope']) assert.equal(await s.getLatestTurnNumber(branch), await lastOfAll(s, branch), branch);
      assert.equal(await s.getLatestTurnNumber(), 2);
    });

    it('skips a newest user row whose data is not a JSON object, as getConversationTurns does', async () => {
      const s = ws.open();
      await s.addItems([mk.user('one'), mk.assistant('a1'), mk.user('two'), mk.assistant('a2')]);
      const newestUser = `(SELECT message_id FROM message_structure WHERE message_type = 'user' ORDER BY sequence_number DESC LIMIT 1)`;
      execSql(ws.path(), `UPDATE agent_messages SET message_data = '[1, 2]' WHERE id = ${newestUser}`);
      assert.equal(await lastOfAll(s), 1);
      assert.equal(await s.getLatestTurnNumber(), 1);
      execSql(ws.path(), `UPDATE agent_messages SET message_data = 'not json' WHERE id = ${newestUser}`);
      assert.equal(await s.getLatestTurnNumber(), 1);
    });
  });

  describe('findTurnsByContent (§12 a)', () => {
    async function corpus(): Promise<AdvancedSQLiteSession> {
      const s = ws.open();
      await s.addItems([mk.user('What is the WEATHER in Paris?'), mk.assistant('weather answer')]);
      await s.addItems([mk.user('Die straße ist lang')]);
      await s.addItems([mk.user('Convert 22°C to Fahrenheit')]);
      await s.addItems([mk.user('100% sure, snake_case')]);
      await s.addItems([
        mk.user([
          { type: 'input_text', text: 'first part' },
          { type: 'input_text', text: 'second part' },
          { type: 'input_image', image_url: 'https://example.com/cat.png' },
        ]),
      ]);
      await s.addItems([mk.user('x'.repeat(150) + ' needle')]);
      return s;
    }
    const turnsOf = async (s: AdvancedSQLiteSession, term: string, branch?: string) =>
      (await s.findTurnsByContent(term, branch)).map((t) => t.turn);

    it('matches case-insensitively, Unicode-aware', async () => {
      const s = await corpus();
      assert.deepEqual(await turnsOf(s, 'weather'), [1]);
      assert.deepEqual(await turnsOf(s, 'WEATHER IN'), [1]);
      assert.deepEqual(await turnsOf(s, 'STRASSE'), [2]);
      assert.deepEqual(await turnsOf(s, 'Straße'), [2]);
      assert.deepEqual(await turnsOf(s, '22°C'), [3]);
      assert.deepEqual(await turnsOf(s, '22°c'), [3]);
      assert.deepEqual(await turnsOf(s, '\\u00b0'), []);
    });

    it('folds both sides by NFC (a decomposed é matches a composed one)', async () => {
      const s = ws.open();
      await s.addItems([mk.user('Cafe\u0301 au lait'), mk.user('plain cafe')]);
      assert.deepEqual(await turnsOf(s, 'CAFÉ'), [1]);
      assert.deepEqual(await turnsOf(s, 'cafe\u0301'), [1]);
      assert.deepEqual(await turnsOf(s, 'cafe'), [2]);
    });

    it('treats % and _ literally and never matches JSON keys or structure', async () => {
      const s = await corpus();
      assert.deepEqual(await turnsOf(s, '%'), [4]);
      assert.deepEqual(await turnsOf(s, '_'), [4]);
      assert.deepEqual(await turnsOf(s, 'snake_case'), [4]);
      assert.deepEqual(await turnsOf(s, 'snakeXcase'), []);
      for (const term of ['role', 'content', 'user', 'input_text', 'type', '"', 'example.com', 'answer']) {
        assert.deepEqual(await turnsOf(s, term), [], term);
      }
    });

    it('matches list content parts separately', async () => {
      const s = await corpus();
      assert.deepEqual(await turnsOf(s, 'first part'), [5]);
      assert.deepEqual(await turnsOf(s, 'SECOND'), [5]);
      assert.deepEqual(await turnsOf(s, 'part second'), []);
      assert.deepEqual(await turnsOf(s, 'partsecond'), []);
      assert.deepEqual(await turnsOf(s, 'cat.png'), []);
    });

    it('an empty term matches every user turn; the content is the full preview, never cut', async () => {
      const s = await corpus();
      assert.deepEqual(await turnsOf(s, ''), [1, 2, 3, 4, 5, 6]);
      const [hit] = await s.findTurnsByContent('needle');
      assert.equal(hit?.content, 'x'.repeat(150) + ' needle');
      assert.equal(hit?.canBranch, true);
      const [listHit] = await s.findTurnsByContent('first');
      assert.equal(
        listHit?.content,
        '[{"type": "input_text", "text": "first part"}, {"type": "input_text", "text": "second part"}, {"type": "input_image", "image_url": "https://example.com/cat.png"}]',
      );
    });

    it('searches the current branch by default, or the branch given', async () => {
      const s = await corpus();
      await s.createBranchFromTurn(2, 'short');
      assert.deepEqual(await turnsOf(s, ''), [1]);
      assert.deepEqual(await turnsOf(s, 'straße'), []);
      assert.deepEqual(await turnsOf(s, 'straße', 'main'), [2]);
      assert.deepEqual(await turnsOf(s, '', 'nope'), []);
    });

    it('matches text with JSON escapes and non-ASCII that folds into ASCII', async () => {
      const s = ws.open();
      await s.addItems([mk.user('path a/b and "quoted" back\\slash'), mk.user('KELVIN \u212a sign'), mk.user('tab\there')]);
      assert.deepEqual(await turnsOf(s, 'a/b'), [1]);
      assert.deepEqual(await turnsOf(s, '"quoted"'), [1]);
      assert.deepEqual(await turnsOf(s, 'back\\slash'), [1]);
      assert.deepEqual(await turnsOf(s, 'kelvin k sign'), [2]);
      assert.deepEqual(await turnsOf(s, 'tab\th'), [3]);
    });
  });

  describe('getConversationByTurns (§10.2)', () => {
    it('groups rows by user_turn_number in first-appearance order (turn 0 for pre-user items)', async () => {
      const s = ws.open();
      await s.addItems([mk.raw({ role: 'system', content: 's' }), mk.user('q1'), mk.call('get_weather'), mk.output(), mk.assistant('a')]);
      await s.addItems([mk.user('q2'), mk.raw({ type: 'mcp_call', server_label: 'srv', name: 'nm' })]);
      const map = await s.getConversationByTurns();
      assert.deepEqual([...map.keys()], [0, 1, 2]);
      sameJson(map.get(0), [{ type: 'other', toolName: null }]);
      sameJson(map.get(1), [
        { type: 'user', toolName: null },
        { type: 'function_call', toolName: 'get_weather' },
        { type: 'function_call_output', toolName: null },
        { type: 'assistant', toolName: null },
      ]);
      sameJson(map.get(2), [
        { type: 'user', toolName: null },
        { type: 'mcp_call', toolName: 'srv.nm' },
      ]);
      assert.equal((await s.getConversationByTurns('nope')).size, 0);
    });

    it('keeps NULL turns written by other writers as a null key', async () => {
      const s = ws.open();
      await s.addItems([mk.user('q1')]);
      execSql(ws.path(), "INSERT INTO agent_messages (session_id, message_data) VALUES ('s1', '{}')");
      execSql(
        ws.path(),
        "INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number) VALUES ('s1', 2, 'main', 'other', 2)",
      );
      const map = await s.getConversationByTurns();
      assert.deepEqual([...map.keys()], [1, null]);
    });
  });

  describe('getToolUsage (§10.2)', () => {
    it('counts calls per (name, turn), ordered by turn then name (binary, NULL first); outputs never count', async () => {
      const s = ws.open();
      await s.addItems([
        mk.user('q1'),
        mk.call('get_weather'),
        mk.output(),
        mk.call('convert_temperature'),
        mk.output(),
        mk.call('get_weather'),
        mk.raw({ type: 'function_call_result', name: 'get_weather', callId: 'x', output: 'ok' }),
      ]);
      await s.addItems([
        mk.user('q2'),
        mk.call('alpha'),
        mk.call('Zeta'),
        mk.call(null),
        mk.call(''),
        mk.raw({ type: 'mcp_call', server_label: 'srv', name: 'nm' }),
        mk.raw({ type: 'computer_call' }),
        mk.raw({ type: 'web_search_call' }),
        mk.raw({ type: 'custom_tool_call', name: 'custom' }),
        mk.raw({ type: 'mcp_approval_request', server_label: 'srv' }),
        mk.raw({ type: 'reasoning' }),
        mk.raw({ type: 'shell_call', name: 'not_counted' }),
      ]);
      sameJson(await s.getToolUsage(), [
        { toolName: 'convert_temperature', count: 1, turn: 1 },
        { toolName: 'get_weather', count: 2, turn: 1 },
        { toolName: null, count: 1, turn: 2 },
        { toolName: '', count: 1, turn: 2 },
        { toolName: 'Zeta', count: 1, turn: 2 },
        { toolName: 'alpha', count: 1, turn: 2 },
        { toolName: 'computer_call', count: 1, turn: 2 },
        { toolName: 'custom', count: 1, turn: 2 },
        { toolName: 'srv', count: 1, turn: 2 },
        { toolName: 'srv.nm', count: 1, turn: 2 },
        { toolName: 'web_search_call', count: 1, turn: 2 },
      ]);
    });

    it('counts tool_search_output only without a tool_search_call in its turn', async () => {
      const s = ws.open();
      await s.addItems([mk.user('q1'), mk.raw({ type: 'tool_search_call' }), mk.raw({ type: 'tool_search_output' })]);
      await s.addItems([mk.user('q2'), mk.raw({ type: 'tool_search_output' }), mk.raw({ type: 'tool_search_output' })]);
      sameJson(await s.getToolUsage(), [
        { toolName: 'tool_search', count: 1, turn: 1 },
        { toolName: 'tool_search', count: 2, turn: 2 },
      ]);
    });

    it('counts pre-user calls at turn 0, reads explicit branches, and only this session', async () => {
      const s = ws.open();
      const other = ws.open({ sessionId: 'other' });
      await other.addItems([mk.user('o'), mk.call('other_tool')]);
      await s.addItems([mk.call('early'), mk.user('q1'), mk.call('late')]);
      await s.createBranchFromTurn(1, 'early-only');
      // Branching from turn 1 copies the turn-0 rows.
      sameJson(await s.getToolUsage(), [{ toolName: 'early', count: 1, turn: 0 }]);
      sameJson(await s.getToolUsage('main'), [
        { toolName: 'early', count: 1, turn: 0 },
        { toolName: 'late', count: 1, turn: 1 },
      ]);
      assert.deepEqual(await s.getToolUsage('nope'), []);
    });
  });
});
