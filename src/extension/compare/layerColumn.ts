/**
 * A history guard layer as a compare view column (docs/history-guard.md "In VS Code"): the layer's items, read from the
 * guard store (never the session file), through the reads a column makes, so *Compare with Branch Now* needs no
 * restore first. A layer is one branch, read-only, with no usage rows (the guard keeps items, not usage): its turns are
 * counted in the layer (layerEntries.ts), its tools counted from its calls; every other read is refused.
 */
import type { BranchNode, ItemEntry, SessionReader, ToolTotal, UsagePage } from '../../store';
import { TOOL_TURNS_LISTED } from '../../store/inspector/toolTotals';
import type { SessionTables } from '../../store/inspector/inspectorTypes';
import { TOOL_CALL_MESSAGE_TYPES } from '../../store/format/itemClassification';

/** What a layer column is read from: its entries in order (turns numbered), loaded once on the first read. */
export type LayerEntriesSource = () => Promise<{ entries: readonly ItemEntry[] }>;

const NO_TABLES: SessionTables = {
  sessions: null,
  messages: '',
  messageStructure: false,
  turnUsage: false,
  branchReservations: false,
  sessionClearGenerations: false,
  warnings: [],
} as unknown as SessionTables;

const refused = (what: string): never => {
  throw new Error(`A history layer has no ${what}: restore it as a branch to read it so.`);
};

/** The reads of one layer column; `branchId` is the column's id for its one branch. */
export class LayerReader implements SessionReader {
  readonly tables = NO_TABLES;
  private loaded: Promise<readonly ItemEntry[]> | undefined;

  constructor(
    private readonly branchId: string,
    private readonly source: LayerEntriesSource,
  ) {}

  private entries(): Promise<readonly ItemEntry[]> {
    const loaded = (this.loaded ??= this.source().then((r) => r.entries));
    // A failed read is not kept: the next request reads again.
    loaded.catch(() => {
      if (this.loaded === loaded) this.loaded = undefined;
    });
    return loaded;
  }

  async getBranchTree(): Promise<BranchNode[]> {
    const entries = await this.entries();
    return [
      {
        branchId: this.branchId,
        messageCount: entries.length,
        userTurns: entries.at(-1)?.userTurnNumber ?? 0,
        createdAt: null,
        parentBranchId: null,
        forkTurn: null,
      } as BranchNode,
    ];
  }

  async getTurnItems(_sessionId: string, _branchId: string, turn: number): Promise<ItemEntry[]> {
    return (await this.entries()).filter((e) => e.userTurnNumber === turn);
  }

  getTurnUsage(): Promise<[]> {
    return Promise.resolve([]);
  }

  getUsagePage(): Promise<UsagePage> {
    const none = { requests: null, inputTokens: null, outputTokens: null, totalTokens: null, cachedTokens: null, reasoningTokens: null };
    return Promise.resolve({ rows: [], rowCount: 0, totals: none });
  }

  async getToolTotals(): Promise<ToolTotal[]> {
    const byName = new Map<string, ToolTotal>();
    const lastTurn = new Map<string, number>();
    for (const e of await this.entries()) {
      if (e.type === null || !TOOL_CALL_MESSAGE_TYPES.includes(e.type)) continue;
      const name = e.toolName ?? e.type;
      const total = byName.get(name) ?? { toolName: name, calls: 0, turns: [], turnCount: 0 };
      byName.set(name, total);
      total.calls++;
      // Entries come in order, so a tool's turns arrive ascending: a turn is new when it is not the last one seen.
      const turn = e.userTurnNumber ?? 0;
      if (lastTurn.get(name) === turn) continue;
      lastTurn.set(name, turn);
      total.turnCount++;
      if (total.turns.length < TOOL_TURNS_LISTED) total.turns.push(turn);
    }
    return [...byName.values()];
  }

  listSessions = (): never => refused('session list');
  getItemsPage = (): never => refused('item pages');
  getTurnsPage = (): never => refused('turn pages');
  getTurnsPageBefore = (): never => refused('turn pages');
  getTurnSummaries = (): never => refused('turn summaries');
  usedBranchIds = (): never => refused('branch names');
  getTurnsWithoutUsage = (): never => refused('usage rows');
  getUsageTab = (): never => refused('usage rows');
}
