/**
 * One SDK run's replay: the table of the turn it re-runs (read with the fork), the matcher its tools ask, the recorded
 * outputs put back exactly when the SDK writes the output items, and the summary the outcome carries. A run without a
 * recorded turn (continuing past the recording) has an empty table: every call is marked live.
 */
import type { Agent, AgentInputItem, ModelProvider } from '@openai/agents';
import type { ReplayMark, ReplaySummary, ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import { toStoredItem } from '../../store';
import type { RecordedTurn } from '../branchOpening';
import { findDivergence } from './divergence';
import { ReplayMatcher, StrictReplayError } from './replayMatcher';
import { ReplayWiring, replayedProvider, withReplayedTools, type ReplayedOutputs } from './replayedTools';
import { buildReplayTable } from './replayTable';

export class RunReplay {
  readonly table: ReplayTable;
  readonly matcher: ReplayMatcher;
  private readonly outputs: ReplayedOutputs = new Map();
  private readonly wiring: ReplayWiring;

  constructor(
    readonly mode: ToolsMode,
    private readonly recorded: RecordedTurn | null,
    readonly nameOnly: readonly string[] = [],
  ) {
    this.table = recorded
      ? buildReplayTable(recorded.items, { branchId: recorded.branchId, turn: recorded.turn })
      : { branchId: '', turn: 0, calls: [], hosted: [] };
    this.matcher = new ReplayMatcher(this.table, { mode, nameOnly, recorded: recorded !== null });
    this.wiring = new ReplayWiring(this.matcher, this.outputs);
  }

  /** The agent the runner runs: the user's, with its tools (and its handoffs' agents' tools) asking the matcher first. */
  agent(agent: Agent): Agent {
    return withReplayedTools(agent, this.wiring);
  }

  /**
   * The run's model provider, its models' responses planned in the model's call order (replayedTools.ts): for agents
   * whose model is a name. Without a provider the runner's default one serves them, unplanned: their calls are then
   * matched in the order the SDK reaches their tools.
   */
  provider(provider: ModelProvider | undefined): ModelProvider | undefined {
    return provider && replayedProvider(provider, this.wiring);
  }

  /**
   * Items as the SDK writes them, with each replayed call's output item carrying the recorded output exactly (the
   * SDK may have reshaped a list of content parts): what the session stores is what the recording stored.
   */
  rewrite(items: AgentInputItem[]): AgentInputItem[] {
    if (this.outputs.size === 0) return items;
    return items.map((item) => {
      const r = item as Record<string, unknown>;
      if (r.type !== 'function_call_result' && r.type !== 'function_call_output') return item;
      const callId = typeof r.callId === 'string' ? r.callId : typeof r.call_id === 'string' ? r.call_id : undefined;
      if (callId === undefined || !this.outputs.has(callId)) return item;
      const output = this.outputs.get(callId);
      const replayed = { ...item, output } as AgentInputItem;
      // A recorded list of content parts is in the stored (Responses) shape, which the store's conversion keeps as it
      // is; should it not come out exactly, the store's opaque item (its stored form, written back unchanged) carries
      // it instead, so what is stored is what was recorded either way.
      const stored = toStoredItem(replayed) as Record<string, unknown>;
      if (JSON.stringify(stored.output) === JSON.stringify(output)) return replayed;
      return { type: 'unknown', providerData: { ...stored, output } } as unknown as AgentInputItem;
    });
  }

  /** The mark of a call, once its tool was asked. */
  markOf(callId: string | null): ReplayMark | undefined {
    return callId === null ? undefined : this.matcher.marks.find((m) => m.callId === callId);
  }

  /** The strict refusal that ended the run, if that is what ended it. */
  strictFailure(error: unknown): StrictReplayError | undefined {
    for (let e = error, depth = 0; e && depth < 5; depth++) {
      if (e instanceof StrictReplayError) return e;
      e = (e as { cause?: unknown; error?: unknown }).cause ?? (e as { error?: unknown }).error;
    }
    return undefined;
  }

  summary(): ReplaySummary {
    const marks = this.matcher.marks;
    return {
      mode: this.mode,
      source: this.recorded ? { branchId: this.recorded.branchId, turn: this.recorded.turn } : null,
      recordedCalls: this.table.calls.length,
      marks: [...marks],
      hosted: this.table.hosted.map((h) => h.type),
      divergence: this.recorded ? findDivergence(this.table, marks, this.nameOnly) : null,
      disagreements: [],
    };
  }
}
