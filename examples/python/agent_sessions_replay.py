"""Replay recorded tool results in your OpenAI Agents SDK agent, for Agent Session Inspector's agent commands.

When the extension re-runs a recorded turn (Retry from Here, Edit and Resend, a what-if, `agent-sessions run
--from-turn N`), version 2 of `forwardedProps.agentSessions` carries `tools`: the mode and the turn's recorded calls
(docs/agent-command.md §2). Wrap your agent's function tools once and a call that matches a recorded one gets the
recorded output instead of running again (no second refund, no second e-mail, the same data as then):

    replay = ToolReplay(run_input["forwardedProps"]["agentSessions"], report=emit)
    agent = agent.clone(tools=replay_tools(agent.tools, replay))

- `replay` (the default for a re-run): a call whose tool name and arguments match an unused recorded call returns its
  output and the tool does not run; any other call runs live.
- `strict`: a call with no match raises `StrictReplayError` before its tool runs, which fails the run.
- `live`, version 1, or no `tools`: every call runs live (with version 1 or no `tools` the tools are not even wrapped,
  and nothing is reported).

Matching: same tool name and equal arguments as JSON values (key order, spacing and number spelling ignored; text
that is not JSON is compared as text); identical calls take the recorded ones in recorded order; tools named in
`nameOnly` match by name alone. Each call is reported with a CUSTOM event `agent-sessions.tool-replay`
`{callId, name, outcome: "replayed" | "live" | "unmatched", recordedCallId}` through `report`.

Only the standard library and the SDK's `FunctionTool` (checked against openai-agents 0.22.0: `on_invoke_tool(ctx,
input)` with `ctx.tool_call_id` and `ctx.tool_name`; the SDK turns a string result into the output item unchanged).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents import AgentsException, FunctionTool

__all__ = ["REPORT_EVENT", "StrictReplayError", "ToolReplay", "replay_tools"]

REPORT_EVENT = "agent-sessions.tool-replay"
MODES = ("replay", "strict", "live")
# A strict failure quotes the call's arguments; past this they are cut (the message is shown in one line of the view).
_MAX_QUOTED_ARGUMENTS = 200


class StrictReplayError(AgentsException):
    """A call in `strict` mode that matches no recorded call: raised before its tool runs, so the run fails.

    An `AgentsException`, so the SDK lets it through as it is instead of wrapping it in "Error running tool".
    """

    def __init__(self, message: str, call_id: str, name: str, arguments: str) -> None:
        super().__init__(message)
        self.call_id = call_id
        self.name = name
        self.arguments = arguments


# --- arguments as JSON values ----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (the extension's side refuses them too): such arguments are compared as text.
    raise ValueError(name)


class _Number(str):
    """A JSON number as written. As floats, 9007199254740992 and 9007199254740993 would be one number, 1e400 would be
    inf and an integer past 1e308 would not convert at all; so the text is kept and compared by its exact value."""


_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")


def _canonical_number(text: str) -> str:
    """The number's exact value: "0", or sign, digits without trailing zeros and exponent (1.0, 1e0, 10e-1 -> 1e0)."""
    m = _NUMBER.fullmatch(text)
    if not m:
        return text
    sign, whole, frac, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4) or "0"
    digits = (whole + frac).lstrip("0")
    if not digits:
        return "0"  # every zero is one value, -0 included (as in JavaScript)
    trimmed = digits.rstrip("0")
    return f"{sign}{trimmed}e{int(exp) - len(frac) + len(digits) - len(trimmed)}"


def _canonical(value: Any) -> str:
    """The text two equal arguments share: keys sorted at every depth, numbers by exact value (1, 1.0 and 1e0 are one
    number, as in JSON; 9007199254740992 and 9007199254740993 are two). Booleans stay booleans (in Python True == 1)."""
    if isinstance(value, _Number):
        return "n" + _canonical_number(value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _canonical(value[k]) for k in sorted(value)) + "}"


def arguments_key(text: str) -> str:
    """The key arguments are compared by: canonical JSON, or the text itself when it is not JSON."""
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=_Number, parse_float=_Number)
    except (ValueError, TypeError, RecursionError):
        return "t" + str(text)
    return "j" + _canonical(value)


# --- recorded outputs as the SDK's tool results ----------------------------------------------------------------------

# A stored content part (Responses API shape) -> the SDK's structured tool output that writes it back, and the fields
# that pass through. The SDK turns {"type": "text", ...} into {"type": "input_text", ...} and so on.
_PARTS = {
    "input_text": ("text", ("text",)),
    "input_image": ("image", ("image_url", "file_id", "detail")),
    "input_file": ("file", ("file_data", "file_url", "file_id", "filename")),
}
# What the SDK's models require of a part besides its fields (ToolOutputImage's detail is a Literal; an image or a file
# needs a source): a part without it would not validate, and the SDK would write str() of the list instead.
_SOURCES = {
    "input_text": ("text",),
    "input_image": ("image_url", "file_id"),
    "input_file": ("file_data", "file_url", "file_id"),
}
_DETAILS = (None, "low", "high", "auto")
_UNREPRODUCIBLE = object()


def _sdk_result(output: Any) -> Any:
    """What the tool returns so that the SDK writes exactly `output` as the call's output: a string as it is, a list of
    content parts as the SDK's structured outputs. `_UNREPRODUCIBLE` for anything else (the SDK would rewrite it)."""
    if isinstance(output, str):
        return output
    if not isinstance(output, list) or not output:
        return _UNREPRODUCIBLE
    result = []
    for part in output:
        shape = _PARTS.get(part.get("type")) if isinstance(part, dict) else None
        if shape is None or not all(isinstance(v, str) for v in part.values()):
            return _UNREPRODUCIBLE
        kind, fields = shape
        if set(part) - {"type", *fields}:
            return _UNREPRODUCIBLE  # a field the SDK's structured outputs do not carry
        if part.get("detail") not in _DETAILS or not any(k in part for k in _SOURCES[part["type"]]):
            return _UNREPRODUCIBLE
        result.append({"type": kind, **{k: part[k] for k in fields if k in part}})
    return result


# --- one run's replay ------------------------------------------------------------------------------------------------


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind):
        shown = repr(value)[:80]
        raise ValueError(f"forwardedProps.agentSessions.tools{where}.{key} must be a {kind.__name__}, not {shown}")
    return value


class ToolReplay:
    """One run's replay: the recorded calls of `forwardedProps.agentSessions.tools`, which of them were used, and the
    report of each call. Build one per run (a recorded call is used once)."""

    def __init__(self, agent_sessions: Mapping[str, Any] | None, report: Callable[[dict[str, Any]], None]) -> None:
        self._report = report
        tools = agent_sessions.get("tools") if isinstance(agent_sessions, Mapping) else None
        version = agent_sessions.get("version") if isinstance(agent_sessions, Mapping) else None
        # Version 1 has no tools; an absent field means the same: run every tool live, as before replay existed.
        self.enabled = isinstance(version, int) and version >= 2 and tools is not None
        self.mode = "live"
        # The strict refusal that ended the run, if one did: the SDK may wrap it, so the script asks here.
        self.refused: StrictReplayError | None = None
        self._name_only: set[str] = set()
        self._recorded: list[dict[str, Any]] = []
        self._keys: list[str] = []
        self._used: list[bool] = []
        if not self.enabled:
            return
        # Bad input fails the run here, before the session is touched, with the field it is about.
        if not isinstance(tools, Mapping):
            raise ValueError("forwardedProps.agentSessions.tools must be an object")
        self.mode = tools.get("mode")
        if self.mode not in MODES:
            modes = ", ".join(MODES)
            raise ValueError(f"forwardedProps.agentSessions.tools.mode must be one of {modes}, not {self.mode!r}")
        name_only = tools.get("nameOnly") or []
        if not isinstance(name_only, list) or not all(isinstance(n, str) for n in name_only):
            raise ValueError("forwardedProps.agentSessions.tools.nameOnly must be a list of tool names")
        self._name_only = set(name_only)
        recorded = tools.get("recorded") or []
        if not isinstance(recorded, list):
            raise ValueError("forwardedProps.agentSessions.tools.recorded must be a list")
        for i, call in enumerate(recorded):
            if not isinstance(call, Mapping):
                raise ValueError(f"forwardedProps.agentSessions.tools.recorded[{i}] must be an object")
            for key in ("callId", "name", "arguments"):
                _field(call, key, str, f".recorded[{i}]")
            # A recorded call never answered, or answered in a shape the SDK would rewrite, cannot be replayed.
            result = _sdk_result(call.get("output")) if call.get("hasOutput", True) else _UNREPRODUCIBLE
            self._recorded.append({**call, "result": result})
            self._keys.append(arguments_key(call["arguments"]))
            self._used.append(False)

    def _find(self, name: str, key: str, accepts: Callable[[Any], bool]) -> int:
        """The first unused recorded call that matches: recorded order decides between identical calls."""
        for i, call in enumerate(self._recorded):
            if self._used[i] or call["name"] != name:
                continue
            if call["result"] is _UNREPRODUCIBLE or not accepts(call["result"]):
                continue
            if name in self._name_only or self._keys[i] == key:
                return i
        return -1

    def _nearest(self, name: str) -> dict[str, Any] | None:
        """For messages: an unused recorded call of the same tool, else any of it, else the first recorded call."""
        same = [i for i, c in enumerate(self._recorded) if c["name"] == name]
        unused = [i for i in same if not self._used[i]]
        pick = unused or same or list(range(len(self._recorded)))
        return self._recorded[pick[0]] if pick else None

    def decide(self, call_id: str, name: str, arguments: str, accepts: Callable[[Any], bool] = lambda _: True) -> Any:
        """Decides one call before its tool would run and reports it. Returns the SDK result of the recorded output,
        or `_UNREPRODUCIBLE` for a call to run live. Raises `StrictReplayError` in `strict` for a call with no match.
        `accepts` says whether the tool writes a result back unchanged."""
        at = self._find(name, arguments_key(arguments), accepts) if self.mode != "live" else -1
        if at >= 0:
            self._used[at] = True
            recorded = self._recorded[at]
            self._emit(call_id, name, "replayed", recorded["callId"])
            return recorded["result"]
        near = self._nearest(name) if self.mode != "live" else None
        if self.mode == "strict":
            self._emit(call_id, name, "unmatched", near["callId"] if near else None)
            self.refused = StrictReplayError(_strict_message(name, arguments, near), call_id, name, arguments)
            raise self.refused
        self._emit(call_id, name, "live", near["callId"] if near else None)
        return _UNREPRODUCIBLE

    def _emit(self, call_id: str, name: str, outcome: str, recorded_call_id: str | None) -> None:
        value = {"callId": call_id, "name": name, "outcome": outcome, "recordedCallId": recorded_call_id}
        self._report({"type": "CUSTOM", "name": REPORT_EVENT, "value": value})


def _strict_message(name: str, arguments: str, near: Mapping[str, Any] | None) -> str:
    shown = arguments if len(arguments) <= _MAX_QUOTED_ARGUMENTS else arguments[:_MAX_QUOTED_ARGUMENTS] + "…"
    message = (
        f"Strict replay: the call {name}({shown}) matches no recorded call, so it was not run and nothing was written."
    )
    if near is None:
        return message + " The recorded turn has no function calls."
    theirs = near["arguments"]
    theirs = theirs if len(theirs) <= _MAX_QUOTED_ARGUMENTS else theirs[:_MAX_QUOTED_ARGUMENTS] + "…"
    return f"{message} Nearest recorded call: {near['name']}({theirs}), id {near['callId']}."


# --- the wrapper -----------------------------------------------------------------------------------------------------


def _writes_back(tool: FunctionTool) -> Callable[[Any], bool]:
    """Whether `tool` writes a result back unchanged. A tool with an output schema re-serialises a string result as
    compact JSON (ItemHelpers.tool_call_output_item), so only a string already in that form, and nothing else, is."""
    if getattr(tool, "output_json_schema", None) is None and getattr(tool, "_output_type_adapter", None) is None:
        return lambda _: True

    def compact(result: Any) -> bool:
        try:
            value = json.loads(result) if isinstance(result, str) else None
        except ValueError:
            return False
        return isinstance(value, dict) and json.dumps(value, ensure_ascii=False, separators=(",", ":")) == result

    return compact


def _replayed_tool(tool: FunctionTool, replay: ToolReplay) -> FunctionTool:
    live = tool.on_invoke_tool
    accepts = _writes_back(tool)

    async def on_invoke_tool(ctx: Any, input: str) -> Any:
        # The name the model called (ctx.tool_name) is the one the recording stored.
        result = replay.decide(ctx.tool_call_id, getattr(ctx, "tool_name", None) or tool.name, input, accepts)
        if result is _UNREPRODUCIBLE:
            return await live(ctx, input)
        return result

    # A copy: the user's tool object is left as it was (the same tools may serve other runs).
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def replay_tools(tools: Iterable[Any], replay: ToolReplay) -> list[Any]:
    """Your tools, each function tool wrapped to ask `replay` first. Without a replay table (version 1, or no `tools`)
    they come back unchanged. Hosted tools (web search, file search, ...) run on the provider's side and stay live."""
    if not replay.enabled:
        return list(tools)
    return [_replayed_tool(t, replay) if isinstance(t, FunctionTool) else t for t in tools]
