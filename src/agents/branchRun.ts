/**
 * Running an agent on one branch of a session in a session database: the new turn streams out as events while it
 * is produced, and when the run ends the branch is left consistent and the run's usage recorded. A run has three
 * steps, each in its own module: prepare (runPreparation.ts: agent, session, fork; nothing written yet), run (here:
 * the runner streams through a recording session), settle (runSettlement.ts; runPersistence.ts says exactly what is
 * stored when a run completes, fails or is cancelled). runReporter.ts is how all three report.
 */
import { Runner, type AgentInputItem, type RunStreamEvent } from '@openai/agents';
import { itemAddedEvent, type RunOutcome } from '../shared/protocol/runEvents';
import { callArguments, runValueText, toolName } from '../shared/itemText';
import type { RunOnBranchOptions } from './runOptions';
import { RecordingSession, callIdOf, plain } from './runPersistence';
import { prepareRun, type PreparedRun } from './runPreparation';
import { RunReporter } from './runReporter';
import { ShownStreams } from './shownStreams';
import { withRunLock } from './runLocks';
import { noteRunBranch } from './runWrites';
import { Produced, settleAndReport, type StreamResult, type StreamedRun } from './runSettlement';
import { startRunTrace, type RunTrace } from './runTracing';
import { toolsModeOf } from './runOptions';
import { RunReplay } from './replay/runReplay';

export { usageView } from './runSettlement';
export type { AgentSource, RunInput, RunOnBranchOptions } from './runOptions';

/**
 * Runs the agent on `sessionId`/`branchId` of `dbPath` with `input`, streaming. Never throws for a run's failure:
 * the returned outcome (also the last event) says what happened and what is stored.
 */
export async function runOnBranch(options: RunOnBranchOptions): Promise<RunOutcome> {
  const reporter = new RunReporter(options);
  return withRunLock(options, reporter, async () => {
    const prepared = await prepareRun(options, reporter);
    if ('kind' in prepared) return prepared;
    try {
      reporter.start(prepared.agent.name, prepared.warnings);
      // Agent commands running beside this run (a what-if on several models) must not count its writes as theirs.
      const endSpan = noteRunBranch(options.dbPath, options.sessionId, reporter.branchId);
      try {
        const trace = options.tracing ? startRunTrace(options.tracing) : undefined;
        const replay = new RunReplay(toolsModeOf(options.tools, options.fork), prepared.recordedTurn, options.tools?.nameOnly);
        const streamed = await streamRun(options, reporter, prepared, replay, trace);
        const outcome = await settleAndReport(options, reporter, prepared, streamed, replay);
        if (trace) await storeRunTrace(options, trace, reporter.branchId, outcome);
        return outcome;
      } finally {
        endSpan();
      }
    } finally {
      await prepared.session.close();
    }
  });
}

/**
 * The run's spans into the trace store, linked to the branch it ran on and the turn it wrote (none when it wrote no
 * turn: the trace is then linked to the session, and to a turn by its time). A store that cannot take them is
 * logged: the run's outcome stands.
 */
async function storeRunTrace(options: RunOnBranchOptions, trace: RunTrace, branchId: string, outcome: RunOutcome): Promise<void> {
  const records = trace.finish({ sessionId: options.sessionId, branchId, turnNumber: outcome.written.turn });
  if (records.length === 0) return;
  try {
    await options.tracing!.sink(records);
  } catch (err) {
    options.log?.(`The run's trace could not be stored: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Runs the agent through a recording session, forwarding its stream as events; never throws. */
async function streamRun(
  options: RunOnBranchOptions,
  reporter: RunReporter,
  prepared: PreparedRun,
  replay: RunReplay,
  trace?: RunTrace,
): Promise<StreamedRun> {
  const traceId = trace?.traceId;
  // A traced run records each model request's input too (runTracing.ts): the Context tab's "recorded".
  // Replay sees each model response before the SDK acts on it (replay/replayedTools.ts): the model's order decides.
  const modelProvider = replay.provider(trace ? trace.provider(prepared.modelProvider) : prepared.modelProvider);
  const recording = new RecordingSession(prepared.session, (items) => replay.rewrite(items));
  // Traced only into our own trace store (runTracing.ts), unless the user opted in to OpenAI's dashboard too; never
  // with the SDK's default processor, which would export with the environment's key unasked.
  const runner = new Runner({
    ...(modelProvider ? { modelProvider } : {}),
    tracingDisabled: traceId === undefined,
    ...(traceId
      ? { traceId, groupId: options.sessionId, workflowName: 'Agent Session Inspector run', traceIncludeSensitiveData: true }
      : {}),
  });
  const produced = new Produced();
  // Everything shown goes through the redactor: a key may be in the model's text (split across deltas), a call's
  // arguments or an item, not only in a tool's output.
  const shown = new ShownStreams(reporter);
  let result: StreamResult | undefined;
  let error: unknown;
  // Where the run's turn is looked for once it is written: after this one (settling finds it by its items, since
  // another writer may add turns meanwhile). Unreadable: the usage is not stored, and the outcome says why.
  const turnBefore = await prepared.session.getLatestTurnNumber().then(
    (turn) => turn ?? 0,
    () => undefined,
  );
  try {
    const agent = replay.agent(prepared.agent);
    result = (await runner.run(trace ? trace.agent(agent) : agent, options.input, {
      session: recording,
      stream: true,
      signal: options.signal,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    })) as StreamResult;
    for await (const event of result) forward(event, reporter, shown, produced, replay);
    await result.completed;
  } catch (err) {
    error = err;
  } finally {
    shown.end();
  }
  // The runner writes the user input in its loop's `finally`; wait for it before looking at the database.
  if (result) {
    await result.completed.catch(() => undefined);
    if (error === undefined && result.error !== undefined && result.error !== null) error = result.error;
  }
  return { result, error, produced, recording, turnBefore };
}

/** Forwards one SDK stream event as a run event, and notes what was produced. */
function forward(event: RunStreamEvent, reporter: RunReporter, shown: ShownStreams, produced: Produced, replay: RunReplay): void {
  const runId = reporter.runId;
  if (event.type === 'raw_model_stream_event') {
    const data = event.data as { type: string; delta?: unknown };
    if (data.type === 'response_started') produced.pendingText = '';
    if (data.type === 'output_text_delta' && typeof data.delta === 'string') {
      produced.pendingText += data.delta;
      shown.emit({ kind: 'text/delta', runId, delta: data.delta });
    }
    return;
  }
  if (event.type !== 'run_item_stream_event') return;
  const raw = plain(event.item.rawItem) as AgentInputItem & Record<string, unknown>;
  produced.items.push(raw);
  const callId = callIdOf(raw) ?? null;
  switch (event.name) {
    case 'tool_called': {
      const name = toolName(raw);
      if (callId) produced.toolNames.set(callId, name);
      const args = callArguments(raw) ?? JSON.stringify(raw.arguments ?? raw.action ?? {});
      shown.emit({ kind: 'tool/called', runId, callId, name, arguments: args });
      return;
    }
    case 'tool_output': {
      const name = (callId && produced.toolNames.get(callId)) || toolName(raw);
      const output = 'output' in event.item ? (event.item as { output: unknown }).output : raw.output;
      const mark = replay.markOf(callId);
      shown.emit({
        kind: 'tool/output',
        runId,
        callId,
        name,
        output: runValueText(output),
        ...(mark ? { replay: { outcome: mark.outcome, recordedCallId: mark.recordedCallId } } : {}),
      });
      return;
    }
    case 'tool_approval_requested':
      // Reported by the outcome (the run stops there).
      return;
    default:
      if (event.name === 'message_output_created') produced.pendingText = '';
      shown.emit(itemAddedEvent(runId, raw));
  }
}
