/** `agent-sessions check --help` (kept apart from help.ts: the longest command's text, with its own exit codes). */
export const CHECK_HELP = `Usage: agent-sessions check [file] --reviews <reviews.db> (--command "…" | --url URL)
                            [--query Q] [--tools replay|strict|live] [--match-name-only TOOL]...
                            [--grader G]... [--concurrency N] [--timeout S] [--junit F] [--markdown F]
                            [--json] [--save NAME] [--baseline NAME] [--experiments F] [--keep-branches] [--force]

Checks your agent against the reviewed conversations (docs/check.md): each reviewed turn is re-run as a what-if
of itself (forked before it, its user message sent again, the recorded tool results replayed) through your own
agent command or URL (docs/agent-command.md), and graded.

Cases: every turn with a good verdict (expect its recorded calls and answer) and every bad turn with a correction
(expect the correction as the answer, not the answer reviewed bad, and no calls: the trajectory graders do not
judge it). --query narrows them with the search syntax (is:good, tag:refund, tool:get_weather, text…). A review
whose turn is gone or holds another user message now is ORPHANED: reported, never run. The review store defaults
to <file>.reviews.db.

  --tools MODE                replay (default): matching calls get their recorded outputs; strict: a call off the
                              recording fails the case's run; live: every tool runs
  --grader G                  trajectory (default), trajectory:args, answer:exact|normalized|contains|json,
                              answer:regex=PATTERN, command:"…", model[:NAME][@RUBRIC]; repeat to combine
                              (default: trajectory, plus model when OPENAI_API_KEY is set)
  --concurrency N             cases run at once, 1 to 32 (default 4)
  --timeout S                 stop a case's agent after S seconds (default, and 0: never)
  --keep-branches             run each case on a new branch check-<n> of the session file, kept afterwards;
                              without it the session file is never written (runs go into scratch files)
  --junit F, --markdown F     a JUnit XML report, a Markdown summary (never onto an input; an existing file
                              only with --force)
  --save NAME                 keep the results as experiment NAME (replace one with --force)
  --baseline NAME             compare with saved experiment NAME: regressions (pass → fail) first, then fixes
  --experiments F             the experiment store (default: beside the review store, <reviews>.experiments.db)
  --json                      the whole report as JSON on stdout instead of the lines

Prints one line per case as it finishes (PASS, FAIL with the graders' reasons, ERROR with the message,
ORPHANED), then "N passed, N failed" (", N errors", ", N orphaned" when there are any) and the graders that ran.

Exit codes: 0 every case passed; 1 a case failed or errored, or no case was found (a review file that matches no
turn); 2 bad arguments (a grader spec, a model grader without a key, a --url that is not http(s) or holds a user
name or password: before any run); 3 the session file, the review store (also the default one) or the --baseline
experiment does not exist; 4 not a session file, review store or experiment store; 6 a report file cannot be
written (its folder missing: before any run), --save names a saved experiment (without --force) or its store is a
link; 130 interrupted (Ctrl+C stops every running case; the finished ones are reported; nothing is saved). SIGTERM
or SIGHUP stop it as Ctrl+C does, then end it by that signal; a closed stdout (| head) too, then exit 141.
`;
