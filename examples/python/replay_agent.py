#!/usr/bin/env python3
"""Run your own OpenAI Agents SDK agent on one branch of a session, as an Agent Session Inspector "agent command".

The extension starts this script (setting `agentSessions.agent.command`), writes ONE AG-UI `RunAgentInput` as JSON on
its stdin, and reads AG-UI events, one JSON object per line, from its stdout. The protocol is described in
docs/agent-command.md; in short:

1. open the session file with `AdvancedSQLiteSession(..., create_tables=False)`;
2. put the session on the branch the extension names (switch to it, or create it for a fork at turn 1);
3. run the agent with `Runner.run_streamed(agent, input, session=session)` and translate its stream to AG-UI events;
   when the extension re-runs a recorded turn, the agent's function tools replay the recorded results
   (agent_sessions_replay.py, beside this script);
4. `await session.store_run_usage(result)`, then RUN_FINISHED (or RUN_ERROR and exit code 1); when the run stopped
   for tool approvals (`result.interruptions`), RUN_FINISHED says it is paused: an `interrupt` outcome, one interrupt
   per call waiting.

Replace `build_agent()` with your own agent. Everything else can stay as it is.

Requires `pip install openai-agents`. If `ag-ui-protocol` is installed, events are built and checked with its models;
otherwise they are written as plain JSON. Nothing else is needed.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import traceback
import uuid
from typing import Any

from agents import Agent, Runner, function_tool
from agents.extensions.memory import AdvancedSQLiteSession
from agents.tracing import TracingProcessor, set_trace_processors

# Replay of recorded tool results (version 2 of forwardedProps.agentSessions); a module beside this script.
from agent_sessions_replay import ToolReplay, replay_tools

try:
    # Optional: the AG-UI Python SDK. We only use its event models, to check each event before it goes out.
    # (Its EventEncoder writes server-sent-event framing, `data: {...}`, which is for the HTTP transport;
    # a command's stdout takes bare JSON lines, so we serialise the models ourselves.)
    from ag_ui.core import Event as _AgUiEvent
    from ag_ui.core import RunFinishedEvent as _AgUiRunFinished
    from pydantic import TypeAdapter

    _AG_UI = TypeAdapter(_AgUiEvent)
    # Older ag-ui-protocol releases have no `usage` on RUN_FINISHED (and refuse unknown fields); for them the usage
    # travels in a CUSTOM `agent-sessions.usage` event instead, which the extension reads the same way.
    _AG_UI_HAS_USAGE = "usage" in _AgUiRunFinished.model_fields
    # Nor do they have `outcome` (AG-UI 1.0's interrupt): a paused run's RUN_FINISHED then goes out unchecked.
    _AG_UI_HAS_OUTCOME = "outcome" in _AgUiRunFinished.model_fields
except ImportError:
    _AG_UI = None
    _AG_UI_HAS_USAGE = True  # our plain JSON is AG-UI 1.0, which has it
    _AG_UI_HAS_OUTCOME = True


# ---------------------------------------------------------------------------------------------------------------------
# Your agent. Replace this section with your own: import your Agent, or build it here.
# ---------------------------------------------------------------------------------------------------------------------


@function_tool
def get_weather(city: str) -> str:
    """Return the weather in a city."""
    # An example tool so that a run shows a tool call; replace it with your own tools.
    return f"The weather in {city} is sunny."


def build_agent() -> Agent:
    """Return the agent to run. `model` is left to the agent: the script overrides it only when the run asks for one."""
    return Agent(
        name="Assistant",
        instructions="You are a helpful assistant. Answer briefly.",
        tools=[get_weather],
    )


# ---------------------------------------------------------------------------------------------------------------------
# AG-UI output
# ---------------------------------------------------------------------------------------------------------------------


def emit(event: dict[str, Any]) -> None:
    """Write one AG-UI event (camelCase keys, as on the wire) as a JSON line, flushed at once so the view streams."""
    if _AG_UI is not None and (_AG_UI_HAS_OUTCOME or "outcome" not in event):
        # Validate against the installed AG-UI models; a mistake here fails loudly instead of reaching the extension.
        line = _AG_UI.validate_python(event).model_dump_json(by_alias=True, exclude_none=True)
    else:
        line = json.dumps(event, ensure_ascii=False)
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (the run was stopped); the run itself is not affected.
        pass


def _plain(value: Any) -> Any:
    """A usage object (pydantic in the SDK) as plain JSON."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return {k: _plain(v) for k, v in vars(value).items() if not k.startswith("_")}


def _json_ready(value: Any) -> Any:
    """An input item (a dict, or a pydantic model for items the SDK made) as plain JSON, lists included."""
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_unset=True)
    return value


def tool_definitions(agent: Any) -> list[dict[str, Any]]:
    """The agent's function tools as the Responses API receives them (name, description, JSON schema of the args)."""
    out = []
    for tool in getattr(agent, "tools", None) or []:
        if hasattr(tool, "params_json_schema"):
            out.append(
                {
                    "type": "function",
                    "name": tool.name,
                    "description": getattr(tool, "description", "") or "",
                    "parameters": tool.params_json_schema,
                }
            )
    return out


class SpansToTimeline(TracingProcessor):
    """The run's spans for the extension's Timeline (docs/traces.md): each span as the SDK exports it, in a CUSTOM
    event when it ends. An export leaves a model request's response out, so its model and usage are added; and the
    request's input, so the view's Context section shows what the model really saw (docs/context.md, "Recorded
    input"): the items the SDK sent (`span_data.input`, kept when tracing includes data, the SDK's default), with the
    agent's instructions and tool definitions, which are not items.

    Installed with set_trace_processors, it replaces the SDK's default processor, which sends traces to OpenAI's
    dashboard; add that one back (add_trace_processor) if you want it too.
    """

    def __init__(self) -> None:
        # The agent being run, set by run(): its instructions and tools go with each recorded input.
        self.agent: Any = None

    def on_trace_start(self, trace: Any) -> None:
        pass

    def on_trace_end(self, trace: Any) -> None:
        pass

    def on_span_start(self, span: Any) -> None:
        pass

    def on_span_end(self, span: Any) -> None:
        data = span.export()
        if not data:
            return
        response = getattr(span.span_data, "response", None)
        if getattr(span.span_data, "type", None) == "response" and response is not None:
            data["span_data"] = {
                **data["span_data"],
                "model": getattr(response, "model", None),
                "usage": _plain(getattr(response, "usage", None)),
            }
            model_input = getattr(span.span_data, "input", None)
            if model_input is not None:
                data["span_data"]["input"] = _json_ready(model_input)
                instructions = getattr(self.agent, "instructions", None)
                if isinstance(instructions, str):
                    # Dynamic instructions (a function) are not known here: they are left out, not guessed.
                    data["span_data"]["instructions"] = instructions
                data["span_data"]["tools"] = tool_definitions(self.agent)
        emit({"type": "CUSTOM", "name": "agent-sessions.spans", "value": {"spans": [data]}})

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


def run_usage(result: Any) -> Any:
    """The SDK's `Usage` of the run so far (summed over all its model requests), or None when no request was made."""
    usage = getattr(getattr(result, "context_wrapper", None), "usage", None)
    return usage if usage is not None and usage.requests else None


# A tool call's arguments in an interrupt's message: cut past this many characters (the view shows one line).
_MAX_SHOWN_ARGUMENTS = 200


def approval_interrupts(result: Any) -> list[dict[str, Any]]:
    """The run's pending tool approvals as AG-UI interrupts. `result.interruptions` holds the SDK's ToolApprovalItems
    (one per call of a tool whose `needs_approval` asked for it; checked against openai-agents 0.22.0: `call_id`,
    `name` and `arguments` read from its `raw_item`): each becomes an interrupt with the call's id as its own and as
    `toolCallId`, and a message naming the tool and its arguments. Resuming is the SDK's: `state =
    result.to_state()`, `state.approve(item)` (or `reject`), then `Runner.run_streamed(agent, state, session=...)`."""
    interrupts = []
    for item in getattr(result, "interruptions", None) or []:
        call_id = getattr(item, "call_id", None)
        arguments = getattr(item, "arguments", None) or ""
        if len(arguments) > _MAX_SHOWN_ARGUMENTS:
            arguments = arguments[:_MAX_SHOWN_ARGUMENTS] + "…"
        name = getattr(item, "name", None) or "tool"
        message = f"Approve {name}({arguments})?"
        interrupt = {"id": call_id or str(uuid.uuid4()), "reason": "tool_approval", "message": message}
        if call_id:
            interrupt["toolCallId"] = call_id
        interrupts.append(interrupt)
    return interrupts


def finish_event(kind: str, fields: dict[str, Any], usage: Any, model: str | None) -> None:
    """Emit RUN_FINISHED or RUN_ERROR, with the run's usage when it made model requests."""
    if usage is None:
        emit({"type": kind, **fields})
        return
    reasoning = getattr(usage.output_tokens_details, "reasoning_tokens", 0) or 0
    cached = getattr(usage.input_tokens_details, "cached_tokens", 0) or 0
    if not _AG_UI_HAS_USAGE:
        # The installed ag-ui-protocol predates `usage` on the terminal events: send our CUSTOM event instead.
        value = {
            "requests": usage.requests,
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.total_tokens,
            "cachedTokens": cached,
            "reasoningTokens": reasoning,
        }
        emit({"type": "CUSTOM", "name": "agent-sessions.usage", "value": value})
        emit({"type": kind, **fields})
        return
    # AG-UI's TokenUsage. The SDK sums usage over the whole run, so this is one entry, named after the model when we
    # know it (a run that handed off to agents on other models is still one entry).
    entry: dict[str, Any] = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.total_tokens,
    }
    if model:
        entry["model"] = model
    if reasoning:
        entry["reasoningTokens"] = reasoning
    if cached:
        entry["cachedInputTokens"] = cached
    emit({"type": kind, **fields, "usage": [entry]})


def field(obj: Any, name: str) -> Any:
    """Read `name` from a raw SDK item, which is a pydantic model or a plain dict depending on the item."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


class StreamTranslator:
    """Maps the SDK's stream events onto AG-UI events (docs/agent-command.md §4)."""

    def __init__(self) -> None:
        # The SDK's output item id -> our AG-UI messageId, for the text messages being streamed.
        self.open_messages: dict[str, str] = {}

    def handle(self, event: Any) -> None:
        if event.type == "raw_response_event":
            self.raw(event.data)
        elif event.type == "run_item_stream_event":
            self.run_item(event.name, event.item)
        # agent_updated_stream_event (a handoff switched agents) has no AG-UI counterpart we need.

    def raw(self, data: Any) -> None:
        # Text streams in as raw Responses events; tool calls are taken from the run items below, complete.
        if data.type == "response.output_text.delta" and data.delta:
            item_id = data.item_id or "text"
            message_id = self.open_messages.get(item_id)
            if message_id is None:
                # Our own id: models behind the chat-completions adapter reuse one placeholder item id.
                message_id = self.open_messages[item_id] = str(uuid.uuid4())
                emit({"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"})
            emit({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": data.delta})
        elif data.type == "response.output_item.done" and field(data.item, "type") == "message":
            message_id = self.open_messages.pop(field(data.item, "id") or "text", None)
            if message_id is not None:
                emit({"type": "TEXT_MESSAGE_END", "messageId": message_id})

    def run_item(self, name: str, item: Any) -> None:
        raw = item.raw_item
        if name == "tool_called":
            call_id = field(raw, "call_id") or field(raw, "id") or str(uuid.uuid4())
            # Hosted tools (web search, file search, ...) have no `name`; their type names them.
            tool_name = field(raw, "name") or field(raw, "type") or "tool"
            emit({"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": tool_name})
            arguments = field(raw, "arguments")
            if arguments:
                emit({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments})
            emit({"type": "TOOL_CALL_END", "toolCallId": call_id})
        elif name == "tool_output":
            call_id = field(raw, "call_id") or field(raw, "id")
            if call_id:
                # The output as the session stores it (the raw item's), else the tool's return value.
                output = field(raw, "output")
                if output is None:
                    output = item.output
                content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
                emit({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": str(uuid.uuid4()),
                    "toolCallId": call_id,
                    "content": content,
                    "role": "tool",
                })
        elif name in ("reasoning_item_created", "handoff_requested", "handoff_occured"):
            # Items with no AG-UI event of their own: sent in the SDK's item shape (docs/agent-command.md §4).
            emit({"type": "CUSTOM", "name": "agent-sessions.item", "value": item.to_input_item()})

    def close_open_messages(self) -> None:
        """End the text messages still open (a failed or cut-short stream), so every START has its END."""
        for message_id in self.open_messages.values():
            emit({"type": "TEXT_MESSAGE_END", "messageId": message_id})
        self.open_messages.clear()


# ---------------------------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------------------------


def open_session(coords: dict[str, Any]) -> AdvancedSQLiteSession:
    store = coords["store"]
    if store.get("kind") != "sqlite":
        raise ValueError(f"this script handles SQLite stores only, not {store.get('kind')!r}")
    # create_tables=False: the extension only sends files that already hold the tables, and this never creates any.
    # The table names go through to SQLiteSession's constructor (AdvancedSQLiteSession passes **kwargs on).
    return AdvancedSQLiteSession(
        session_id=coords["sessionId"],
        db_path=store["path"],
        create_tables=False,
        sessions_table=store.get("sessionsTable") or "agent_sessions",
        messages_table=store.get("messagesTable") or "agent_messages",
    )


async def put_on_branch(session: AdvancedSQLiteSession, coords: dict[str, Any]) -> None:
    """Move the session's in-memory branch pointer (it starts on `main`) to the run's branch (§3 of the protocol)."""
    branch_id = coords["branchId"]
    fork = coords.get("fork")
    if fork is None:
        # The branch exists: the extension made it (a retry or an edit at turn 2 or later), or the user sends to it.
        if branch_id != "main":
            await session.switch_to_branch(branch_id)
        return
    # A fork at turn 1 copies nothing, so the extension could not make it (a branch without rows cannot be switched
    # to). Create it here, from the branch it forks; creating a branch also moves the session onto it.
    if fork["fromBranchId"] != "main":
        await session.switch_to_branch(fork["fromBranchId"])
    await session.create_branch_from_turn(fork["fromTurn"], branch_id)


def agent_input(run_input: dict[str, Any], coords: dict[str, Any]) -> Any:
    """The message to send: the SDK item shape from forwardedProps (images and files included), else the text."""
    if coords.get("input"):
        return coords["input"]
    return run_input["messages"][-1]["content"]


async def run(run_input: dict[str, Any]) -> int:
    thread_id, run_id = run_input["threadId"], run_input["runId"]
    coords = run_input["forwardedProps"]["agentSessions"]
    session: AdvancedSQLiteSession | None = None
    result = None
    model: str | None = None
    translator = StreamTranslator()
    replay: ToolReplay | None = None
    try:
        # Read first: a bad `tools` field fails the run before the session is touched.
        replay = ToolReplay(coords, report=emit)
        session = open_session(coords)
        await put_on_branch(session, coords)

        agent = build_agent()
        if coords.get("model"):
            # Retry with Several Models runs one command per model: each must answer on the model it was given.
            agent = agent.clone(model=coords["model"])
        if replay.enabled:
            # A re-run of a recorded turn: its function tools give the recorded results instead of running again.
            agent = agent.clone(tools=replay_tools(agent.tools, replay))
        model = agent.model if isinstance(agent.model, str) else None
        SPANS.agent = agent

        result = Runner.run_streamed(agent, agent_input(run_input, coords), session=session)
        async for event in result.stream_events():
            translator.handle(event)
        translator.close_open_messages()

        # The turn's usage row; without it the view shows "no usage recorded" for the turn. A paused run (below) spent
        # tokens too: its row is stored the same way, and the run that resumes it, whose usage goes on from this one's
        # (the RunState keeps it), replaces the row with the whole turn's.
        await session.store_run_usage(result)
        fields: dict[str, Any] = {"threadId": thread_id, "runId": run_id}
        # Calls of tools declared with `needs_approval` did not run: the SDK stopped and stored the turn with each call
        # waiting (no output). That is a pause, not a completion: RUN_FINISHED says what it waits for.
        interrupts = approval_interrupts(result)
        if interrupts:
            fields["outcome"] = {"type": "interrupt", "interrupts": interrupts}
        finish_event("RUN_FINISHED", fields, run_usage(result), model)
        return 0
    except Exception as exc:
        if replay is None or replay.refused is None:
            # stderr is for people: it shows in the Agent Runs output channel. A strict refusal is no crash: its
            # message goes on RUN_ERROR below, and a traceback would only bury it.
            traceback.print_exc(file=sys.stderr)
        translator.close_open_messages()
        refused = replay.refused if replay is not None else None
        # A strict refusal writes nothing: no usage row and none on RUN_ERROR, so the extension rolls back what the
        # SDK wrote before it (the user message), as for any failed run that spent nothing (docs/agent-command.md §5).
        usage = run_usage(result) if refused is None else None
        if usage is not None and session is not None:
            # Tokens were spent before the failure: record them, so the turn keeps its user message and its cost.
            await session.store_run_usage(result)
        failure = refused or exc  # the SDK may have wrapped the refusal: report the refusal itself
        error = {"message": str(failure) or type(failure).__name__, "code": type(failure).__name__}
        finish_event("RUN_ERROR", error, usage, model)
        return 1
    finally:
        # On Stop (the task is cancelled) a message may still be open: end it, then let the cancellation go on.
        translator.close_open_messages()
        if session is not None:
            session.close()


SPANS = SpansToTimeline()


def main() -> int:
    set_trace_processors([SPANS])
    # Stop sends SIGINT. Make sure it raises KeyboardInterrupt even when the shell that started us ignores it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The extension writes and reads UTF-8, whatever the console's code page (Windows) says.
    sys.stdout.reconfigure(encoding="utf-8")
    try:
        run_input = json.load(sys.stdin.buffer)
    except ValueError as exc:
        emit({"type": "RUN_ERROR", "message": f"stdin is not a RunAgentInput: {exc}", "code": "bad_input"})
        return 1
    try:
        # Inside the try, so that a Stop arriving at any point from here on ends with RUN_ERROR "cancelled".
        emit({"type": "RUN_STARTED", "threadId": run_input["threadId"], "runId": run_input["runId"]})
        return asyncio.run(run(run_input))
    except KeyboardInterrupt:
        # asyncio.run has cancelled the run (the session is closed in run()'s finally). 130 = 128 + SIGINT.
        emit({"type": "RUN_ERROR", "message": "The run was stopped.", "code": "cancelled"})
        return 130


if __name__ == "__main__":
    sys.exit(main())
