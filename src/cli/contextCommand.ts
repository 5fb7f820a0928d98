/**
 * `agent-sessions context [file] <session> --turn N [--branch B] [--traces traces.db] [--limit N] [--model M] [--json]`:
 * what the model saw in a turn (docs/context.md). The same builder and wording as the `turn_context` tool and the
 * view's Context section; --traces names a trace store to read recorded inputs from (without it, or when the store
 * holds none for the turn, the answer is reconstructed and says so).
 */
import { existsSync } from 'node:fs';
import { buildTurnContext } from '../store/context/turnContext';
import { contextHeader, itemLines, outsideLines, requestLine } from '../store/context/contextText';
import { TraceStore } from '../store/traces/traceStore';
import { requireBranch, requireSession, withStore, type CommandContext } from './commands';
import { NotFoundError, UsageError } from './exitCodes';
import { capYoungGenerationNow } from './heapSizing';
import { counted } from '../shared/countNoun';

export interface ContextOptions {
  branch?: string;
  turn?: number;
  /** A trace store (`agent-sessions otlp --store`, or the extension's), read-only. */
  traces?: string;
  limit?: number;
  model?: string;
}

export async function contextCommand(
  ctx: CommandContext,
  db: string | undefined,
  sessionId: string,
  options: ContextOptions,
): Promise<string> {
  if (options.turn === undefined || options.turn < 1) throw new UsageError('context needs --turn N (1 = the first user message)');
  const turn = options.turn;
  // Its heavy part is loading the tokenizer's tables, built at once and most of them kept: a young generation grown
  // while they are built only adds its own size to the peak (heapSizing.ts).
  capYoungGenerationNow();
  // A trace store that is not there is a missing file (exit 3), not SQLite's "unable to open" read as a folder problem.
  if (options.traces !== undefined && !existsSync(options.traces)) throw new NotFoundError(`There is no trace store ${options.traces}.`);
  const traces = options.traces !== undefined ? TraceStore.open(options.traces, { readonly: true }) : undefined;
  try {
    return await withStore(ctx, db, async (store) => {
      const tree = await requireSession(store, sessionId);
      const branchId = options.branch ?? (tree.find((b) => b.branchId === 'main') ?? tree[0])?.branchId ?? 'main';
      const branch = requireBranch(tree, sessionId, branchId);
      if (turn > branch.userTurns && !branch.userTurnsAtLeast)
        throw new NotFoundError(
          `branch '${branchId}' of session '${sessionId}' has ${counted(branch.userTurns, 'turn')}, so no turn ${turn}`,
        );
      const view = await buildTurnContext(store.reader, traces, {
        sessionId,
        branchId,
        turn,
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.model !== undefined ? { model: options.model } : {}),
      });
      if (ctx.json) return `${JSON.stringify(view, null, 2)}\n`;
      const last = view.requests[view.requests.length - 1];
      return [
        contextHeader(view),
        '\n',
        ...view.requests.map(requestLine),
        ...(last ? ['\n', `Items of request ${last.index}, in the order sent (--json for every request):\n`, ...itemLines(last)] : []),
        '\n',
        ...outsideLines(view),
      ].join('');
    });
  } finally {
    traces?.close();
  }
}
