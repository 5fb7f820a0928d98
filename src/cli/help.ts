/** The CLI's help texts: `agent-sessions --help` and `agent-sessions <command> --help`. */
import { CHECK_HELP } from './checkHelp';

export const MAIN_HELP = `agent-sessions: look at OpenAI Agents SDK session stores (SQLite files, PostgreSQL, Redis) from a terminal

Usage: agent-sessions <command> [options]

Commands:
  ls [file]                       sessions with their item, turn and branch counts
  show [file] <session>           a readable transcript (all branches, or --branch, or one --turn)
  branches [file] <session>       the branch tree, with fork points
  usage [file] <session>          token usage per turn, with totals
  context [file] <session> --turn N
                                  what the model saw in a turn: each request's input with tokens, and what fell outside
  search [file] <query>           search every session of the store (text, tool:NAME, role:user, is:failed, is:bad)
  export [file] <session>         Markdown, JSON (lossless) or JSONL (@openai/agents input items)
  import <file>                   a JSON or JSONL export into a new session of a database file
  doctor [file]                   find (and with --fix repair) what SDK bugs and damage left in a session file
  run [file] <session>            run your own agent command on a branch (a what-if outside VS Code)
  check [file] --reviews <file>   re-run the reviewed turns through your agent and grade them (CI: JUnit, exit code)
  otlp --store <traces.db>        receive OTLP traces over HTTP (JSON or protobuf) into a trace store
  traces <action> --store <file>  import OTLP JSON files, list or show traces, export a session's spans
  review <action> --store <file>  list, export or import review data (verdicts, pairwise verdicts, corrections)
  dataset <format> [file] --store <reviews.db> -o <out>
                                  fine-tuning and evaluation datasets from reviews (sft, preference, eval); check
  mcp [--store <file or address>]...
                                  an MCP server (stdio) for coding agents: list, read, search, compare sessions

[file] is a session file or a server store's address: postgresql://user@host:5432/db or redis://host:6379/0,
read-only (password in the address or in $AGENT_SESSIONS_PASSWORD; Python's default table names and key prefix).
Server stores have one branch per session and no usage; export md or jsonl from them; import writes files only.

Options for every command:
  -d, --db <file>    the session database or server address (default: $AGENT_SESSIONS_DB)
      --key-prefix   a Redis store's key prefix (default agents:session, as Python's RedisSession)
      --json         machine-readable output on stdout (read commands, export -o and import)
      --no-pager     never page (output longer than the screen goes through $PAGER or less -FRX on a TTY)
      --no-color     no colours (they are used only on a TTY, and never when NO_COLOR is set)
  -h, --help         help for a command
  -v, --version      the version

Exit codes: 0 ok, 1 error, 2 usage, 3 not found (file, server database, session, branch, turn), 4 bad file (not
SQLite, no session tables, damaged, malformed export), 5 database locked, 6 cannot write (the import's database is
read-only, lacks tables without --create-tables or has the session id; an -o file is one the command reads, exists
without --force, or cannot be created; a store path is a symbolic link; the disk is full: nothing was written),
7 paused (run: the agent waits for input), 130 interrupted. A server that cannot be reached, a refused password or a
timeout is 1; the message says which.

Files written (-o of export, review export, traces export, dataset): never a file the command reads (the session
file, the review or trace store, their -wal/-shm, by any path, symbolic or hard link), even with --force; a file
already there only with --force. Each appears only when complete, written under a random temporary name beside it.

Code cache (the CLI of the VS Code extension and of this repository's build, dist/cli.js): the first run of each
command keeps V8's compiled code of the CLI, about 0.2-0.5 MB, in $XDG_CACHE_HOME/agent-session-inspector/code-cache
(default ~/.cache), or in agent-session-inspector-<uid>/code-cache in the temporary folder when that cannot be
written; later runs start faster. A folder other users could write to is never used; a damaged cache is deleted;
a new build removes the old one's. AGENT_SESSIONS_CODE_CACHE=off compiles every time and writes nothing.
`;

export const COMMAND_HELP: Record<string, string> = {
  check: CHECK_HELP,
  mcp: `Usage: agent-sessions mcp [--store <file or address>]... [--traces <traces.db>] [--only-stores]

A Model Context Protocol server on stdin/stdout, for coding agents (Claude Code, Codex, Cursor, VS Code): it lets
them list, read, search and compare the sessions of the stores given, and never writes to them (docs/mcp.md).

Tools: list_stores, list_sessions, branch_tree, read_turns, search_sessions, token_usage, compare_branches,
turn_timeline, turn_context. Resources: agent-sessions://<store>/<session> (a session's branches and first turns). Answers are
bounded (under 20,000 characters by default) and say how to ask for the rest.

  --store <file|address>  a session file, or postgresql://user@host/db or redis://host:6379/0; repeat for more
                          (default: $AGENT_SESSIONS_DB). Password from the address or $AGENT_SESSIONS_PASSWORD.
  --traces <traces.db>    a trace store (agent-sessions otlp's or the extension's), for turn_timeline
  --only-stores           refuse files a tool call names that are not among --store (default: any session file)
  --key-prefix <prefix>   a Redis store's key prefix (default agents:session)

Example (Claude Code):
  claude mcp add agent-sessions -- npx -y -p @agent-session-inspector/store agent-sessions mcp --store "$PWD/conversations.db"
`,
  otlp: `Usage: agent-sessions otlp --store <traces.db> [--listen [host:]port] [--max-spans N] [--max-age-days D]

Receives OpenTelemetry traces over OTLP/HTTP (POST /v1/traces; application/json or application/x-protobuf; gzip
allowed) and keeps them in a trace store: a SQLite file of its own, never a session file. Point the agent's exporter
at it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces. Spans are linked to a session by
gen_ai.conversation.id, session.id or agent_sessions.session_id (docs/traces.md). Runs until Ctrl+C; one log line
per request on stderr.

  --store <file>        the trace store (created when missing)
  --listen [host:]port  where to listen (default 127.0.0.1:4318; another host lets other machines send, unauthenticated)
  --max-spans N         keep at most N spans, dropping the oldest traces first
  --max-age-days D      drop traces received more than D days ago
`,
  traces: `Usage: agent-sessions traces <action> --store <traces.db> [options]

  import <file>...            add OTLP JSON files (an exporter's output, or traces export) to the store
  ls --session S [--branch B] a session's traces, newest first (--branch: that branch's, then apart those linked to
                              the session but to no branch); --unlinked: traces no session was found for
  show <trace-id>             a trace's spans as a tree: kind, name, start, duration, model, tool, tokens, error
  export --session S [-o F]   a session's (or --branch's) spans as OTLP JSON, for any tracing backend

  --force                     replace an existing -o file (never the store itself)
  --json                      machine-readable output
`,
  review: `Usage: agent-sessions review <action> --store <reviews.db> [options]

The review store is a file of its own (the extension's, or <session file>.reviews.db beside a file; docs/reviews.md).

  ls [--session S]            turn reviews: session, branch, turn, verdict, tags, note; and the counts
  export [--session S] [-o F] the review data as one JSON document (all sessions, or one)
  import <file>               add a review export: what the store lacks is added, what it holds replaced only by
                              newer records; the whole file is checked first (one bad record imports nothing)

  --force                     replace an existing -o file (never the store itself)
  --json                      machine-readable output
`,
  dataset: `Usage: agent-sessions dataset <sft|preference|eval> [file] --store <reviews.db> -o <out> [filters]
       agent-sessions dataset check <sft|preference|eval> <file.jsonl>

Builds a dataset from the reviews in --store over the session store [file] (docs/datasets.md):
  sft         OpenAI supervised fine-tuning (chat JSONL): good turns with the conversation before them (the turn's
              assistant messages weight 1, the context's 0), and corrections in place of the answer they correct
  preference  OpenAI preference fine-tuning (JSONL): pairwise verdicts' better and worse answers to one user
              message, and corrections against the answer they correct
  eval        an evaluation set: the user's message in its context and a reference answer (a correction, the
              better answer of a pairwise verdict, or a good turn's answer), with the turn's tags; --csv for CSV

Every record is checked against its format's rules before it is written; what cannot be made is reported with the
reason (a tool call without its output, an orphaned review, …). The file appears only when complete.

  --session S, --branch B     reviews of one session, of one branch
  --tag T (repeatable)        turn reviews with any of these tags
  --verdict good|bad          turn reviews with this verdict
  --since DATE                reviews changed since (2026-12-01, or an ISO time)
  --model M                   pairwise verdicts where a side ran on model M (turn reviews and corrections record no
                              model, so they are left out)
  --redact                    replace API keys (sk-…) and e-mail addresses with [redacted]
  --tools FILE                a JSON list of function definitions to put in each record's "tools"
  --context-turns N           only the N turns before each record's turn as its context (default: all; what
                              precedes the first user message always stays), so memory stays flat
  --preview N                 records to show after writing, as written (JSON lines, or CSV rows; default 3)
  --force                     replace an existing -o file (never the session store, --store or --tools)
  check <format> <file>       check any JSONL file against the format's rules (exit 1 when a record breaks one)
  --json                      machine-readable report
`,
  run: `Usage: agent-sessions run [file] <session> (--command "…" | --url URL) --message "…"
                          [--branch B] [--from-turn N] [--model M]... [--name NEW] [--timeout S]
                          [--tools replay|strict|live] [--match-name-only TOOL]... [--json]

Runs your own agent on a branch of a session file, as the VS Code extension's agent commands do
(docs/agent-command.md): the command gets one AG-UI RunAgentInput on stdin and prints AG-UI events; it writes
the turn through its own session. With --from-turn N a new branch is forked from --branch (default main) at
turn N first (--name names it); without it the run continues --branch. Each --model runs at once on a branch
of its own (Retry with Several Models); without one the agent uses its own model. When the command has ended,
the branch is settled as the extension settles its runs: half-written turns removed, an unused fork deleted.

Tools (docs/agent-command.md §4): the agent gets the tool calls of the re-run turn with their recorded outputs.
  --tools replay              a call whose tool and arguments match a recorded call gets the recorded output; the
                              others run live (the default with --from-turn)
  --tools strict              a call that matches no recorded call fails the run, which is rolled back whole
  --tools live                every tool runs (the default without --from-turn)
  --match-name-only TOOL      match TOOL's calls by name alone (arguments with a timestamp or a random id); repeat it
After the run, one line per tool call (replayed, live or unmatched, as found in what the agent wrote, not as it
reported) and a summary.

Prints the events as they arrive (--json: one run event per line; the outcome's "replay" holds the calls' marks).
OPENAI_API_KEY in the environment reaches the command as it is. Exit code 0 when every run completed, 7 when the
agent paused one, waiting for input (AG-UI's interrupt outcome: "Paused: waiting for input — …"; its turn is kept
for the run that resumes it), 1 when one failed or was stopped (Ctrl+C stops them), 2 for bad arguments (a --name
the session cannot take: blank, main, or used before, even by a deleted branch; a --url that is not http(s) or
holds a user name or password, which is never sent), 3 for a file or session that does not exist (run continues a
session; it never starts one), 4 for a file that is no session store. Nothing is started before these are checked.
`,
  ls: `Usage: agent-sessions ls [file] [--db file] [--json]

Lists the sessions of a database, most recently updated first: items (rows stored once), turns (user turns, each
counted once even when branches share it), branches, total tokens and the last update.
`,
  show: `Usage: agent-sessions show [file] <session> [--db file] [--branch b] [--turn n] [--json]

Prints the session as a transcript: every branch (a forked branch from its fork point on), or one branch with
--branch, or one turn with --turn (on --branch, default main). Tool calls and outputs are fenced and named.
--json prints the items with their structure metadata instead.
`,
  branches: `Usage: agent-sessions branches [file] <session> [--db file] [--json]

Prints the branch tree: each branch with its turns and items, and the branch and turn it was forked from.
`,
  context: `Usage: agent-sessions context [file] <session> --turn n [--branch b] [--traces traces.db] [--limit n] [--model m] [--json]

Prints what the model saw in a turn (docs/context.md): each model request's input item by item with its tokens, the
share each kind of item takes (instructions, tool definitions, messages, tool calls and outputs, reasoning,
compaction), the usage row's cached share, and the stored items that fell outside the window and why.
RECORDED when --traces names a trace store holding the turn's inputs (the extension's runs record them; agent
commands and OTLP tracers may send them); otherwise RECONSTRUCTED from the stored items, and labelled so.
--limit gives the session's limit (SessionSettings.limit: the file does not record it); --model picks the tokenizer
(o200k_base or cl100k_base by model family; an unknown model counts with o200k_base, marked approximate).
--json prints the whole answer, every request's items included.
`,
  doctor: `Usage: agent-sessions doctor [file|address] [--db file|address] [--session s] [--fix] [--backup path] [--json]

Checks a session file (read-only, one snapshot): integrity_check, then what SDK bugs leave behind: usage rows for
turn 0 on a branch with no turn or for turns no branch holds, messages no branch references, a branch that ends in
a tool call without its output, an empty main branch, blank branch ids. One block per finding: where, what it
breaks, the upstream issue, the release that fixed it, the repair (at most 20 listed per kind, the rest counted).
docs/doctor.md describes each kind.

On a PostgreSQL or Redis address (as the other commands take them; --key-prefix for Redis) the same report,
read-only: stored entries that are not items, a session that ends in a tool call without its output, items with no
session record, Redis keys of the wrong type. --fix and --backup are refused there (exit 2).

  --fix          repair in one transaction, after a backup made with VACUUM INTO, then check again; never deletes
                 a message some branch shows; nothing is repaired in a file that fails integrity_check
  --backup path  where the backup goes (default <file>.doctor-backup-<time>.db); refused when it exists or is the
                 file (or its -wal/-shm), or cannot be written (a missing folder): exit 6, nothing repaired
  --session s    check (and repair) only this session

Exit codes: 0 no findings (after --fix: none left), 1 findings, 4 not a session file or a stale -wal beside it,
5 locked by a writer past the busy timeout, 6 --fix on a read-only file, a WAL file in a folder that cannot be
written (SQLite makes its -shm there even to read it), a refused --backup path, or a full disk (nothing repaired;
the message names the backup, which stays).
`,
  usage: `Usage: agent-sessions usage [file] <session> [--db file] [--branch b] [--json]

Prints the recorded token usage per turn (requests, input, cached, output, reasoning, total) and the totals.
With --branch, the branch's whole conversation: the turns it shares with the branch it forked from are listed
with the rows of the branch that ran them (BRANCH names it; in --json, "sharedFrom"), as the Tokens tab counts
them; a turn the branch has its own row for counts that row.
`,
  search: `Usage: agent-sessions search [file] <query> [--db file] [--max n] [--reviews file] [--no-index] [--json]

Searches every session and branch of the file (a turn shared by branches is reported once, under the branch that
ran it). The query is text (matched as the inspector matches it: case folded, JSON keys never) or "a phrase", plus
filters: tool:NAME, role:user|assistant|system|developer, is:failed (tool calls that errored or timed out). Review
filters read the review store (--reviews file; default <file>.reviews.db beside a session file): is:good, is:bad,
tag:TAG, reviewed:yes|no; alone they find each matching turn's user message. Prints session, branch, turn, item and
a snippet per hit; --max stops after n hits (default 10000). tool: and is:failed keep an index of the file's tool
items in the cache folder (~/.cache/agent-session-inspector/search-index, brought up to date by each search; the
first such search of a large file builds it after printing); --no-index (or AGENT_SESSIONS_SEARCH_INDEX=off) goes
without it.
`,
  export: `Usage: agent-sessions export [file] <session> --format md|json|jsonl [--db file] [--branch b] [-o file [--force]] [--reviews file] [--json]

  md     a readable transcript (all branches with the fork structure, or --branch)
  json   the rows exactly as stored (items, structure, usage, the session row): re-importable without loss
  jsonl  one @openai/agents input item per line (the branch's items, default main): a run's input or an eval set

Writes to stdout, or to -o file (written to a temporary file and renamed when complete; a progress bar on a
TTY); an existing -o file is replaced only with --force, and never when it is the session file or the review store. The format defaults to the -o file's extension. Review data (--reviews file, or <file>.reviews.db beside the
session file when there is one) goes with md (under each turn) and json (its "reviews" field), never with jsonl.
`,
  import: `Usage: agent-sessions import <file> --db <database> [--session id] [--create-tables] [--as-main] [--json]

Imports a JSON export (lossless) or a JSONL file of items (numbered into turns as the session would number them)
into a NEW session of the database. The session id defaults to the export's (JSON) or the file's name (JSONL); an
id already in the database is refused. --create-tables creates the session tables (and the file) when missing.
The file is checked completely first and written in one transaction: a malformed file writes nothing and names
the line (JSONL) or the JSON path that is wrong (exit 4). So are rows doctor --fix would repair: usage of a turn no
structure row holds, messages no structure row references, blank branch ids, negative token counts. An item doctor
reports but never repairs (malformed-item) is imported as stored: a JSON export carries every row's bytes exactly.
A branch's JSON export keeps its branch's name, so the new session has no main, and an agent opening it starts on
an empty main: --as-main imports the branch as main (refused for a whole session's export).
`,
};
