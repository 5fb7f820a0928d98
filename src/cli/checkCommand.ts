/**
 * `agent-sessions check` (docs/check.md): the reviewed turns of a session file re-run through the user's agent command
 * or URL and graded, one line per case as it finishes, the closing `N passed, N failed`, an exit code a CI job can
 * gate on. The session file and the review store are only read (the runs go into scratch storage), unless
 * `--keep-branches` asks for each run as a branch of the session file.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { selectCases } from '../agents/check/checkCases';
import { checkConcurrency, runCheck, type CheckOutcome } from '../agents/check/checkRun';
import type { CaseResult, Grader } from '../agents/check/checkTypes';
import { GraderSpecError } from '../agents/check/graders/graderErrors';
import { parseGraders } from '../agents/check/graders/graderSpec';
import type { CommandAgent } from '../agents/command/commandRun';
import { TOOLS_MODES, type ToolsMode } from '../shared/protocol/replay';
import { hideUrlPasswords } from '../shared/urlPasswords';
import { junitReport } from '../agents/check/reports/junit';
import { markdownReport } from '../agents/check/reports/markdown';
import { checkOutputPath, isSameFileOrCompanion } from '../store/files/outputGuard';
import { OutputFileError } from '../store/files/outputFileError';
import { writeOutputFile } from '../store/files/tempFile';
import { openSessionDatabase } from '../store/inspector/sessionDatabase';
import { ReviewStore } from '../store/reviews/reviewStore';
import type { ReviewData } from '../store/reviews/reviewTypes';
import type { BaselineComparison, ExperimentSummary } from '../store/experiments/experimentTypes';
import { parseSearchQuery, SearchQueryError, type SearchQuery } from '../store/search/searchQuery';
import { agentsEndWithUs, raiseAgain } from './agentLifetime';
import { isServerAddress } from './cliStore';
import {
  compareExperiment,
  experimentLines,
  planExperiments,
  saveExperiment,
  type ExperimentOutcome,
  type ExperimentPlan,
} from './checkExperiments';
import { caseLines, closingLines, countResults } from './checkLines';
import { EXIT, NotFoundError, UsageError, exitCodeOf } from './exitCodes';
import { checkAgentUrl } from './runCommand';
import { tellWhenStdoutCloses } from './stdoutClosed';

export interface CheckArgs {
  file: string | undefined;
  reviews?: string;
  command?: string;
  url?: string;
  query?: string;
  tools?: string;
  /** Tools matched by name alone (`--match-name-only`). */
  matchNameOnly: string[];
  graders: string[];
  concurrency?: number;
  timeoutSeconds?: number;
  junit?: string;
  markdown?: string;
  save?: string;
  baseline?: string;
  /** The experiment store (`--experiments`); default beside the review store. */
  experiments?: string;
  keepBranches: boolean;
  force: boolean;
  json: boolean;
  color: boolean;
  signal: AbortSignal;
}

/** Runs the check and prints as it goes; resolves with the exit code. */
export async function checkCommand(args: CheckArgs, write: (text: string) => void): Promise<number> {
  const plan = planCheck(args);
  const reviews = ReviewStore.open(plan.reviews, { readonly: true, fileMustExist: true });
  let data;
  try {
    data = reviews.exportData();
  } finally {
    reviews.close();
  }
  // The check stops as on Ctrl+C (main.ts aborts args.signal) also on SIGTERM or SIGHUP (a CI job's timeout, a closed
  // terminal) and when stdout's reader leaves (`| head`): the finished cases are reported, the scratch folder removed,
  // and only then does the CLI end as it was told to (by the signal, or with 141).
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (args.signal.aborted) stop.abort();
  else args.signal.addEventListener('abort', onAbort, { once: true });
  let endedBy: NodeJS.Signals | null = null;
  const release = tellWhenStdoutCloses(() => stop.abort());
  let stdoutClosed = false;
  try {
    const code = await checkAndReport(
      args,
      plan,
      data,
      stop.signal,
      (signal) => {
        endedBy = signal;
        stop.abort();
      },
      write,
    );
    stdoutClosed = release();
    if (endedBy !== null) {
      raiseAgain(endedBy);
      return EXIT.interrupted;
    }
    return stdoutClosed ? EXIT.pipeClosed : code;
  } finally {
    if (!stdoutClosed) release();
    args.signal.removeEventListener('abort', onAbort);
  }
}

/** One output of the check that could not be written (or saved), with the exit code its error has. */
interface OutputFailure {
  what: string;
  error: unknown;
}

async function checkAndReport(
  args: CheckArgs,
  plan: CheckPlan,
  data: ReviewData,
  signal: AbortSignal,
  onStopSignal: (signal: NodeJS.Signals) => void,
  write: (text: string) => void,
): Promise<number> {
  const db = openSessionDatabase(plan.file, { readonly: true });
  let outcome: CheckOutcome;
  try {
    const selection = await selectCases(db, data, { query: plan.query, signal });
    if (selection.cases.length === 0 && selection.orphaned.length === 0) {
      const why =
        data.turnReviews.length === 0
          ? `${plan.reviews} holds no turn review`
          : `none of the ${data.turnReviews.length} turn reviews in ${plan.reviews} is a good turn or a bad turn with a correction${args.query ? ` matching --query ${JSON.stringify(args.query)}` : ''}`;
      const text = `No cases: ${why}. Nothing was checked.\n`;
      if (args.json) write(`${JSON.stringify({ file: plan.file, cases: 0, message: text.trim() })}\n`);
      else write(text);
      return EXIT.error;
    }
    // One case per turn (checkCases.ts, onePerTurn): the reviews left out are said, never silently dropped.
    for (const s of selection.superseded) process.stderr.write(`note: a review of ${s.case.id} is not checked: ${s.reason}\n`);
    outcome = await agentsEndWithUs(
      () =>
        runCheck({
          file: plan.file,
          db,
          cases: selection.cases,
          orphaned: selection.orphaned,
          agent: plan.agent,
          graders: plan.graders,
          tools: { mode: plan.tools, nameOnly: args.matchNameOnly },
          concurrency: plan.concurrency,
          keepBranches: args.keepBranches,
          run: args.timeoutSeconds ? { timeoutMs: args.timeoutSeconds * 1000 } : {},
          signal,
          onResult: (r: CaseResult) => {
            if (!args.json) write(caseLines(r, args.color));
          },
          log: (line) => process.stderr.write(`${line}\n`),
        }),
      {
        first: 'Stopping the running cases (Ctrl+C again to kill them now)…',
        kill: 'Stopping the agents now (SIGKILL).',
        stop: onStopSignal,
        stopping: 'stopping the running cases (a second signal kills them now)…',
      },
    );
  } finally {
    db.close();
  }
  const { report, interrupted } = outcome;
  const total = report.results.length + outcome.unfinished;
  const failures: OutputFailure[] = [];
  // An interrupted check is neither saved nor compared: half a check would read as cases gone missing. The
  // comparison comes first (the Markdown shows it; a save may replace the baseline), then the reports, then the save:
  // each output is tried whatever became of the others, so one that fails never loses another.
  let comparison: BaselineComparison | null = null;
  if (plan.experiments && !interrupted) {
    try {
      comparison = compareExperiment(plan.experiments, report);
    } catch (error) {
      failures.push({ what: `the comparison with "${plan.experiments.baseline ?? ''}"`, error });
    }
  }
  // The reports hold what finished, interrupted or not: a CI job stopped at its timeout still shows those cases.
  const inputs = [plan.file, plan.reviews, ...(plan.experiments ? [plan.experiments.path] : [])];
  const outputs: string[] = [];
  // An interrupted check's reports say so (never a green summary or a passing suite for half a check).
  const interruption = interrupted ? { finished: report.results.length, total } : undefined;
  const report1 = (path: string | undefined, text: () => string) => {
    if (path === undefined) return;
    try {
      writeOutputFile(path, text(), { overwrite: args.force, inputs });
      outputs.push(path);
    } catch (error) {
      failures.push({ what: path, error });
    }
  };
  report1(args.junit, () => junitReport(report, interruption));
  report1(args.markdown, () =>
    markdownReport(report, { ...(comparison ? { comparison } : {}), ...(interruption ? { interrupted: interruption } : {}) }),
  );
  let saved: ExperimentSummary | null = null;
  if (plan.experiments && !interrupted) {
    try {
      saved = saveExperiment(plan.experiments, report, args.force);
    } catch (error) {
      failures.push({ what: `the experiment "${plan.experiments.save ?? ''}"`, error });
    }
  }
  const experiments: ExperimentOutcome = { comparison, saved };
  if (args.json)
    write(
      `${JSON.stringify({ ...report, summary: countResults(report.results), interrupted, baseline: comparison, saved, outputs }, null, 2)}\n`,
    );
  else {
    write(closingLines(report, interrupted ? { finished: report.results.length, total } : null));
    if (plan.experiments && !interrupted) write(experimentLines(experiments, plan.experiments, args.color));
    else if (plan.experiments && interrupted) write('Interrupted: nothing was saved or compared.\n');
    for (const out of outputs) write(`wrote ${out}\n`);
  }
  for (const f of failures)
    process.stderr.write(
      `agent-sessions: ${hideUrlPasswords(`${f.what} was not written: ${f.error instanceof Error ? f.error.message : String(f.error)}`)}\n`,
    );
  const c = countResults(report.results);
  const checked = interrupted ? EXIT.interrupted : c.failed === 0 && c.errors === 0 && c.passed > 0 ? EXIT.ok : EXIT.error;
  // The worst of the check's code and every failed output's (an output that failed is never a 0).
  return Math.max(checked, ...failures.map((f) => exitCodeOf(f.error)));
}

interface CheckPlan {
  file: string;
  reviews: string;
  agent: CommandAgent;
  graders: Grader[];
  query: SearchQuery | undefined;
  tools: ToolsMode;
  concurrency: number;
  experiments: ExperimentPlan | undefined;
}

/** Every argument checked, and every output path, before anything is opened or run: a mistake costs no run. */
function planCheck(args: CheckArgs): CheckPlan {
  const file = args.file ?? process.env.AGENT_SESSIONS_DB;
  if (!file) throw new UsageError('check needs a session file: agent-sessions check <file> --reviews <reviews.db> --command "…"');
  if (isServerAddress(file)) throw new UsageError('check runs on a session file (a SQLite file): copy a server session to a file first');
  if ((args.command === undefined) === (args.url === undefined)) throw new UsageError('check needs exactly one of --command and --url');
  // Refused here, once: each case's run failed on such a URL apart, every ERROR quoting it.
  if (args.url !== undefined) checkAgentUrl(args.url);
  const reviews = args.reviews ?? `${file}.reviews.db`;
  // Exit 3, as for a review store named with --reviews (docs/check.md, "Exit codes"): the store is missing, not an
  // argument; the message says how to name another one.
  if (args.reviews === undefined && !existsSync(reviews))
    throw new NotFoundError(`check reads review data: name its store with --reviews <file> (${reviews} does not exist)`);
  // Said plainly, before SQLite would try to open them (a missing store would read as a folder it cannot write).
  if (!existsSync(file)) throw new NotFoundError(`no session file at ${file}`);
  if (!existsSync(reviews)) throw new NotFoundError(`no review store at ${reviews}`);
  const tools = (args.tools ?? 'replay') as ToolsMode;
  if (!TOOLS_MODES.includes(tools)) throw new UsageError(`--tools takes replay, strict or live, got '${args.tools}'`);
  let concurrency: number;
  try {
    concurrency = checkConcurrency(args.concurrency);
  } catch (err) {
    throw new UsageError(`--${(err as Error).message}`);
  }
  let query: SearchQuery | undefined;
  if (args.query !== undefined) {
    try {
      query = parseSearchQuery(args.query);
    } catch (err) {
      if (err instanceof SearchQueryError) throw new UsageError(`--query: ${err.message}`);
      throw err;
    }
  }
  let graders: Grader[];
  try {
    graders = parseGraders(args.graders, {
      apiKey: process.env.OPENAI_API_KEY || undefined,
      endpoint: process.env.OPENAI_BASE_URL || undefined,
      cwd: process.cwd(),
      timeoutMs: args.timeoutSeconds ? args.timeoutSeconds * 1000 : undefined,
    });
  } catch (err) {
    if (err instanceof GraderSpecError) throw new UsageError(`--grader: ${err.message}`);
    throw err;
  }
  const agent: CommandAgent =
    args.command !== undefined
      ? { kind: 'command', name: args.command, command: args.command, cwd: process.cwd() }
      : { kind: 'url', url: args.url! };
  const experiments = planExperiments({
    save: args.save,
    baseline: args.baseline,
    experiments: args.experiments,
    reviews,
    force: args.force,
  });
  // Refused before any run: a report onto the session file, the review store or the experiment store, or onto a file
  // there without --force.
  const inputs = [file, reviews, ...(experiments ? [experiments.path] : [])];
  // The same file however it is spelt (a relative and an absolute path, a link): the second report would replace the
  // first.
  if (args.junit !== undefined && args.markdown !== undefined && isSameFileOrCompanion(args.junit, args.markdown))
    throw new UsageError('--junit and --markdown name the same file');
  for (const out of [args.junit, args.markdown]) {
    if (out === undefined) continue;
    checkOutputPath(out, { overwrite: args.force, inputs });
    // A folder that is not there would fail the report's write after every case ran.
    if (!isFolder(dirname(resolve(out))))
      throw new OutputFileError('io', `Cannot write ${out}: the folder ${dirname(out)} does not exist. Create it, or choose another path.`);
  }
  return { file, reviews, agent, graders, query, tools, concurrency, experiments };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
