#!/usr/bin/env node
/* global AbortController */
/**
 * Runs YOUR JavaScript agent on one branch of a session, for Agent Session Inspector's agent commands
 * (docs/agent-command.md). The extension starts this script, writes one AG-UI RunAgentInput on stdin and reads AG-UI
 * events, one JSON object per line, on stdout. The turn is written by this script's own session, so your agent runs
 * in its own process, with its own node_modules, tools and environment.
 *
 *   npm install @openai/agents @ag-ui/core @agent-session-inspector/store zod
 *   settings.json: "agentSessions.agent.command": { "my-agent": "node examples/node/replay-agent.mjs" }
 *
 * Replace `buildAgent` with your agent. Everything else is the protocol and can stay as it is. When the extension
 * re-runs a recorded turn, the agent's function tools replay the recorded results (agent-sessions-replay.mjs).
 */
import { randomUUID } from 'node:crypto';
import { Agent, Runner, setTraceProcessors, tool } from '@openai/agents';
import { EventType } from '@ag-ui/core';
import { AdvancedSQLiteSession } from '@agent-session-inspector/store';
import { z } from 'zod';
// Replay of recorded tool results (version 2 of forwardedProps.agentSessions); a module beside this script.
import { ToolReplay, replayTools } from './agent-sessions-replay.mjs';

/** Your agent. `model` is set when the user picked one for this run (Retry with Several Models). */
function buildAgent(model) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `${city}: 18°C, light rain`,
  });
  return new Agent({
    name: 'Replay agent',
    instructions: 'You are a helpful assistant. Answer briefly.',
    tools: [getWeather],
    ...(model ? { model } : {}),
  });
}

/** One AG-UI event per line; stdout is the protocol, so everything else goes to stderr. */
function emit(type, fields = {}) {
  process.stdout.write(`${JSON.stringify({ type, timestamp: Date.now(), ...fields })}\n`);
}

/** The agent being run (set by main): its instructions and tools go with each recorded model input. */
let runningAgent = null;

/** The agent's function tools as the Responses API receives them. */
function toolDefinitions(agent) {
  return (agent?.tools ?? [])
    .filter((t) => t.type === 'function')
    .map((t) => ({ type: 'function', name: t.name, description: t.description ?? '', parameters: t.parameters }));
}

/**
 * The run's spans for the extension's Timeline (docs/traces.md): each span as the SDK exports it, in a CUSTOM event
 * when it ends. A model request's export leaves out the response, so its model and usage are added; and its input
 * (the SDK keeps it on the live span when tracing includes data, its default), with the agent's instructions and tool
 * definitions, so the view's Context section shows what the model really saw (docs/context.md, "Recorded input").
 * This replaces the SDK's default processor, which would send the trace to OpenAI's dashboard; add it back beside
 * this one if you want that too.
 */
setTraceProcessors([
  {
    async onTraceStart() {},
    async onTraceEnd() {},
    async onSpanStart() {},
    async onSpanEnd(span) {
      const json = span.toJSON();
      if (!json) return;
      const response = span.spanData?._response;
      if (response) json.span_data = { ...json.span_data, model: response.model, usage: response.usage };
      const sent = span.spanData?._input;
      if (sent !== undefined) {
        const instructions = typeof runningAgent?.instructions === 'string' ? runningAgent.instructions : undefined;
        json.span_data = { ...json.span_data, input: sent, instructions, tools: toolDefinitions(runningAgent) };
      }
      emit(EventType.CUSTOM, { name: 'agent-sessions.spans', value: { spans: [json] } });
    },
    async shutdown() {},
    async forceFlush() {},
  },
]);

async function readStdin() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text);
}

/** Opens the session on the branch the extension prepared (docs/agent-command.md §3). */
async function openSession(props) {
  const session = new AdvancedSQLiteSession({
    sessionId: props.sessionId,
    dbPath: props.store.path,
    sessionsTable: props.store.sessionsTable,
    messagesTable: props.store.messagesTable,
  });
  if (props.fork) {
    // A fork at turn 1: nothing to copy, so the branch is made here, and that moves the session onto it.
    if (props.fork.fromBranchId !== 'main') await session.switchToBranch(props.fork.fromBranchId);
    await session.createBranchFromTurn(props.fork.fromTurn, props.branchId);
  } else if (props.branchId !== 'main') {
    await session.switchToBranch(props.branchId);
  }
  return session;
}

/** A detail the SDK keeps per request (`inputTokensDetails[i].cached_tokens`), summed over the run's requests. */
function detail(details = [], key) {
  return details.reduce((sum, d) => sum + (Number(d?.[key]) || 0), 0);
}

/**
 * The run's usage as one AG-UI `TokenUsage` entry (the SDK sums it over the run): the totals, and the cached and
 * reasoning parts of them, which the view's Tokens tab shows; named after the model when the agent names one.
 */
function usageEntry(u, model) {
  const cached = detail(u.inputTokensDetails, 'cached_tokens');
  const reasoning = detail(u.outputTokensDetails, 'reasoning_tokens');
  return {
    ...(model ? { model } : {}),
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    totalTokens: u.totalTokens,
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(reasoning ? { reasoningTokens: reasoning } : {}),
  };
}

/** A tool call's arguments in a message: cut past this many characters (the view shows one line). */
const MAX_SHOWN_ARGUMENTS = 200;

/**
 * The run's pending approvals (`result.interruptions`: the SDK's `RunToolApprovalItem`s, one per call of a tool whose
 * `needsApproval` asked for it) as AG-UI interrupts: the call's id as the interrupt's and as `toolCallId`, and a
 * message naming the tool and its arguments. Resuming is the SDK's: `result.state.approve(item)` (or `reject`), then
 * `run(agent, result.state)`, in a run of your own.
 */
function approvalInterrupts(interruptions = []) {
  return interruptions.map((item) => {
    const raw = item.rawItem ?? {};
    const callId = raw.callId ?? raw.id;
    const args = item.arguments ?? '';
    const shown = args.length > MAX_SHOWN_ARGUMENTS ? `${args.slice(0, MAX_SHOWN_ARGUMENTS)}…` : args;
    const message = `Approve ${item.name ?? raw.type ?? 'tool'}(${shown})?`;
    return { id: callId ?? randomUUID(), reason: 'tool_approval', ...(callId ? { toolCallId: callId } : {}), message };
  });
}

/** The replay of the run, once its input is read: the error handler asks it whether a strict refusal ended the run. */
let replay = null;

async function main() {
  const input = await readStdin();
  const props = input.forwardedProps?.agentSessions;
  // Version 2 adds `tools` (the replay of recorded tool results); everything of version 1 is unchanged.
  if (props?.version !== 1 && props?.version !== 2) throw new Error('this script speaks versions 1 and 2 of forwardedProps.agentSessions');
  const { threadId, runId } = input;
  emit(EventType.RUN_STARTED, { threadId, runId });

  // Read first: a bad `tools` field fails the run before the session is touched.
  replay = new ToolReplay(props, { report: ({ type, ...fields }) => emit(type, fields) });
  const session = await openSession(props);
  const controller = new AbortController();
  // Stop in the extension sends SIGINT: end the run cleanly (the extension settles what was stored).
  process.once('SIGINT', () => controller.abort());
  try {
    let agent = buildAgent(props.model);
    // A re-run of a recorded turn: its function tools give the recorded results instead of running again.
    if (replay.enabled) agent = agent.clone({ tools: replayTools(agent.tools, replay) });
    runningAgent = agent;
    const result = await new Runner().run(agent, props.input, {
      session,
      stream: true,
      signal: controller.signal,
    });
    let messageId;
    for await (const event of result) {
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
        if (!messageId) {
          messageId = randomUUID();
          emit(EventType.TEXT_MESSAGE_START, { messageId, role: 'assistant' });
        }
        emit(EventType.TEXT_MESSAGE_CONTENT, { messageId, delta: event.data.delta });
      } else if (event.type === 'raw_model_stream_event' && event.data.type === 'response_done' && messageId) {
        emit(EventType.TEXT_MESSAGE_END, { messageId });
        messageId = undefined;
      } else if (event.type === 'run_item_stream_event' && event.name === 'tool_called') {
        const raw = event.item.rawItem;
        const toolCallId = raw.callId ?? raw.id ?? randomUUID();
        emit(EventType.TOOL_CALL_START, { toolCallId, toolCallName: raw.name ?? raw.type });
        emit(EventType.TOOL_CALL_ARGS, { toolCallId, delta: raw.arguments ?? '' });
        emit(EventType.TOOL_CALL_END, { toolCallId });
      } else if (event.type === 'run_item_stream_event' && event.name === 'tool_output') {
        const raw = event.item.rawItem;
        const content = typeof event.item.output === 'string' ? event.item.output : JSON.stringify(event.item.output);
        emit(EventType.TOOL_CALL_RESULT, { messageId: randomUUID(), toolCallId: raw.callId, content, role: 'tool' });
      }
    }
    await result.completed;
    if (messageId) emit(EventType.TEXT_MESSAGE_END, { messageId });
    // The usage row of this turn: without it the extension shows "no usage recorded". A paused run (below) spent
    // tokens too: its row is stored the same way, and the run that resumes it, whose usage goes on from this one's
    // (the RunState keeps it), replaces the row with the whole turn's.
    await session.storeRunUsage(result);
    const u = result.state.usage;
    // Calls of tools declared with `needsApproval` did not run: the SDK stopped and stored the turn with each call
    // waiting (no output). That is a pause, not a completion: RUN_FINISHED says what it waits for.
    const interrupts = approvalInterrupts(result.interruptions);
    emit(EventType.RUN_FINISHED, {
      threadId,
      runId,
      usage: [usageEntry(u, typeof agent.model === 'string' && agent.model !== '' ? agent.model : undefined)],
      ...(interrupts.length > 0 ? { outcome: { type: 'interrupt', interrupts } } : {}),
    });
  } finally {
    session.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    // A strict refusal is reported as itself (the SDK may wrap it in its own error). No usage is stored on any
    // failure, so the extension rolls back what the run wrote (docs/agent-command.md §5): a refusal writes nothing.
    const refused = replay?.refused;
    const cancelled = !refused && (err?.name === 'AbortError' || /abort/i.test(String(err?.message)));
    const code = refused ? { code: refused.name } : cancelled ? { code: 'cancelled' } : {};
    emit(EventType.RUN_ERROR, { message: String(refused?.message ?? err?.message ?? err), ...code });
    console.error(err?.stack ?? String(err));
    process.exit(cancelled ? 130 : 1);
  },
);
