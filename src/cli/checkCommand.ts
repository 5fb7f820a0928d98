/**
 * `agent-sessions check` (docs/check.md): the reviewed turns of a session file re-run through the user's agent command
 * or URL and graded, one line per case as it finishes, the closing `N passed, N failed`, an exit code a CI job can
 * gate on. The session file and the review store are only read (the runs go into scratch storage), unless
 * `--keep-branches` asks for each run as a branch of the session file.
 */
import { existsSync } from 'node:fs';
import { selectCases } from '../agents/check/checkCases';
import { checkConcurrency, runCheck, type CheckOutcome } from '../agents/check/checkRun';
import type { CaseResult, Grader } from '../agents/check/checkTypes';
import { GraderSpecError } from '../agents/check/graders/graderErrors';
import { parseGraders } from '../agents/check/graders/graderSpec';
import type { CommandAgent } from '../agents/command/commandRun';
import { TOOLS_MODES, type ToolsMode } from '../shared/protocol/replay';
import { junitReport } from '../agents/check/reports/junit';
import { markdownReport } from '../agents/check/reports/markdown';
import { checkOutputPath } from '../store/files/outputGuard';
import { writeOutputFile } from '../store/files/tempFile';
import { openSessionDatabase } from '../store/inspector/sessionDatabase';
import { ReviewStore } from '../store/reviews/reviewStore';
import { parseSearchQuery, SearchQueryError, type SearchQuery } from '../store/search/searchQuery';
import { agentsEndWithUs } from './agentLifetime';
import { isServerAddress } from './cliStore';
import { applyExperiments, experimentLines, planExperiments, type ExperimentOutcome, type ExperimentPlan } from './checkExperiments';
import { caseLines, closingLines, countResults } from './checkLines';
import { EXIT, NotFoundError, UsageError } from './exitCodes';

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
  const db = openSessionDatabase(plan.file, { readonly: true });
  let outcome: CheckOutcome;
  try {
    const selection = await selectCases(db, data, { query: plan.query, signal: args.signal });
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
          signal: args.signal,
          onResult: (r: CaseResult) => {
            if (!args.json) write(caseLines(r, args.color));
          },
          log: (line) => process.stderr.write(`${line}\n`),
        }),
      { first: 'Stopping the running cases (Ctrl+C again to kill them now)…', kill: 'Stopping the agents now (SIGKILL).' },
    );
  } finally {
    db.close();
  }
  const { report, interrupted } = outcome;
  const total = report.results.length + outcome.unfinished;
  // An interrupted check is neither saved nor compared: half a check would read as cases gone missing.
  const experiments: ExperimentOutcome | null =
    plan.experiments && !interrupted ? applyExperiments(plan.experiments, report, args.force) : null;
  // The reports hold what finished, interrupted or not: a CI job stopped at its timeout still shows those cases.
  const inputs = [plan.file, plan.reviews, ...(plan.experiments ? [plan.experiments.path] : [])];
  const outputs: string[] = [];
  // An interrupted check's reports say so (never a green summary or a passing suite for half a check).
  const interruption = interrupted ? { finished: report.results.length, total } : undefined;
  if (args.junit !== undefined) {
    writeOutputFile(args.junit, junitReport(report, interruption), { overwrite: args.force, inputs });
    outputs.push(args.junit);
  }
  if (args.markdown !== undefined) {
    const comparison = experiments?.comparison ?? undefined;
    writeOutputFile(
      args.markdown,
      markdownReport(report, { ...(comparison ? { comparison } : {}), ...(interruption ? { interrupted: interruption } : {}) }),
      { overwrite: args.force, inputs },
    );
    outputs.push(args.markdown);
  }
  if (args.json)
    write(
      `${JSON.stringify({ ...report, summary: countResults(report.results), interrupted, baseline: experiments?.comparison ?? null, saved: experiments?.saved ?? null, outputs }, null, 2)}\n`,
    );
  else {
    write(closingLines(report, interrupted ? { finished: report.results.length, total } : null));
    if (experiments && plan.experiments) write(experimentLines(experiments, plan.experiments, args.color));
    else if (plan.experiments && interrupted) write('Interrupted: nothing was saved or compared.\n');
    for (const out of outputs) write(`wrote ${out}\n`);
  }
  if (interrupted) return EXIT.interrupted;
  const c = countResults(report.results);
  return c.failed === 0 && c.errors === 0 && c.passed > 0 ? EXIT.ok : EXIT.error;
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
  const reviews = args.reviews ?? `${file}.reviews.db`;
  if (args.reviews === undefined && !existsSync(reviews))
    throw new UsageError(`check reads review data: name its store with --reviews <file> (${reviews} does not exist)`);
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
  if (args.junit !== undefined && args.junit === args.markdown) throw new UsageError('--junit and --markdown name the same file');
  for (const out of [args.junit, args.markdown]) if (out !== undefined) checkOutputPath(out, { overwrite: args.force, inputs });
  return { file, reviews, agent, graders, query, tools, concurrency, experiments };
}
