/**
 * `agent-sessions`: the store package's command line. Parses arguments with Node's `util.parseArgs`, runs one
 * command, prints its output (paged on a TTY) and exits with a code from `exitCodes.ts`.
 */
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
// Each command's module is imported when the command runs (issue 43, the CLI's own start): in the bundle a module
// imported only that way is evaluated on first use, so `run` evaluates what it needs before its agent starts, not
// the inspector, search, export, traces, reviews and doctor (and the store library's index, which holds them all).
// Imported here at the top: only what parsing the arguments and reporting an error need.
import type { CommandContext } from './commands';
import { BadInputError, EXIT, NotFoundError, UsageError, exitCodeOf } from './exitCodes';
import { holdHeapSmall, releaseHeap, useAtomicMarking } from './heapSizing';
import { exitWhenStdoutCloses } from './stdoutClosed';
import { COMMAND_HELP, MAIN_HELP } from './help';
import { createTerminal, guardOutput, paint, wantsColor, writeStdout } from './terminal';
import { hideUrlPasswords } from '../shared/urlPasswords';

declare const __CLI_VERSION__: string | undefined;
const VERSION = typeof __CLI_VERSION__ === 'string' ? __CLI_VERSION__ : 'dev';

const OPTIONS = {
  db: { type: 'string', short: 'd' },
  json: { type: 'boolean' },
  'no-pager': { type: 'boolean' },
  'no-color': { type: 'boolean' },
  'no-index': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  branch: { type: 'string', short: 'b' },
  turn: { type: 'string', short: 't' },
  format: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  session: { type: 'string', short: 's' },
  'create-tables': { type: 'boolean' },
  'as-main': { type: 'boolean' },
  max: { type: 'string' },
  'key-prefix': { type: 'string' },
  'from-turn': { type: 'string' },
  command: { type: 'string' },
  url: { type: 'string' },
  message: { type: 'string', short: 'm' },
  model: { type: 'string', multiple: true },
  name: { type: 'string' },
  timeout: { type: 'string' },
  store: { type: 'string' },
  listen: { type: 'string' },
  'max-spans': { type: 'string' },
  'max-age-days': { type: 'string' },
  unlinked: { type: 'boolean' },
  tag: { type: 'string', multiple: true },
  verdict: { type: 'string' },
  since: { type: 'string' },
  redact: { type: 'boolean' },
  tools: { type: 'string' },
  'match-name-only': { type: 'string', multiple: true },
  csv: { type: 'boolean' },
  preview: { type: 'string' },
  'context-turns': { type: 'string' },
  reviews: { type: 'string' },
  force: { type: 'boolean' },
  query: { type: 'string' },
  grader: { type: 'string', multiple: true },
  concurrency: { type: 'string' },
  junit: { type: 'string' },
  markdown: { type: 'string' },
  save: { type: 'string' },
  baseline: { type: 'string' },
  experiments: { type: 'string' },
  'keep-branches': { type: 'boolean' },
  traces: { type: 'string' },
  limit: { type: 'string' },
  fix: { type: 'boolean' },
  backup: { type: 'string' },
} as const;

/** Which options each command takes beyond the common ones. */
const ALLOWED: Record<string, readonly string[]> = {
  ls: [],
  show: ['branch', 'turn'],
  branches: [],
  usage: ['branch'],
  context: ['branch', 'turn', 'traces', 'limit', 'model'],
  search: ['max', 'reviews', 'no-index'],
  export: ['branch', 'format', 'output', 'reviews', 'force'],
  import: ['session', 'create-tables', 'as-main'],
  run: ['branch', 'from-turn', 'command', 'url', 'message', 'model', 'name', 'timeout', 'tools', 'match-name-only'],
  check: [
    'reviews',
    'command',
    'url',
    'query',
    'tools',
    'match-name-only',
    'grader',
    'concurrency',
    'timeout',
    'junit',
    'markdown',
    'save',
    'baseline',
    'experiments',
    'keep-branches',
    'force',
  ],
  doctor: ['session', 'fix', 'backup'],
  otlp: ['store', 'listen', 'max-spans', 'max-age-days'],
  traces: ['store', 'session', 'branch', 'output', 'unlinked', 'force'],
  review: ['store', 'session', 'output', 'force'],
  dataset: [
    'store',
    'session',
    'branch',
    'output',
    'tag',
    'verdict',
    'since',
    'redact',
    'tools',
    'csv',
    'preview',
    'context-turns',
    'model',
    'force',
  ],
};

/** The commands whose first argument may be the session file (`show conversations.db alice`). */
const FILE_FIRST = ['show', 'branches', 'usage', 'context', 'search', 'export', 'run'];

/** The commands whose heap `heapSizing.ts` holds small; the others keep V8's sizing (`run`, `check`, `mcp` run long). */
const HEAP_HELD: readonly string[] = ['show', 'usage', 'context', 'search', 'export'];
/**
 * Of those, the ones that call `heapCheck` as their output goes out and ran over 100 MB on file A without
 * `useAtomicMarking` (`search` sets its own ceiling; `usage` peaked at 75–91 MB without it, and took a few percent
 * more CPU with it).
 */
const OUTPUT_PACED: readonly string[] = ['show', 'export'];
const COMMON = ['db', 'json', 'no-pager', 'no-color', 'help', 'version', 'key-prefix'];

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} takes a whole number, got '${value}'`);
  // Past 2^53 a number is no longer the one given (99999999999999999999 read as 100000000000000000000).
  if (!Number.isSafeInteger(Number(value)))
    throw new UsageError(`--${name} takes a whole number up to ${Number.MAX_SAFE_INTEGER}, got '${value}'`);
  return Number(value);
}

/** A count where 0 would ask for nothing (`search --max 0` printed "No hits" for a file full of them). */
function atLeastOne(name: string, value: string | undefined): number | undefined {
  const n = positiveInt(name, value);
  if (n === 0) throw new UsageError(`--${name} takes a whole number of 1 or more, got '${value}'`);
  return n;
}

export async function runCli(argv: string[]): Promise<number> {
  // What a file, an agent or a server gave us reaches a terminal: nothing of it may act on the terminal.
  const unguard = guardOutput();
  try {
    return await runCommandLine(argv);
  } finally {
    unguard();
  }
}

async function runCommandLine(argv: string[]): Promise<number> {
  let json = argv.includes('--json');
  const errColor = wantsColor(argv.includes('--no-color'), process.stderr);
  // `mcp` parses its own arguments (its --store repeats) and serves until the client leaves: it must come first.
  if (argv[0] === 'mcp') return runMcp(argv.slice(1), json, errColor);
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on('SIGINT', onSigint);
  try {
    const parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    const v = parsed.values;
    json = v.json === true;
    const [command, ...rest] = parsed.positionals;
    if (v.version) {
      process.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (command === 'help') {
      process.stdout.write((rest[0] && COMMAND_HELP[rest[0]]) || MAIN_HELP);
      return EXIT.ok;
    }
    if (!command) {
      if (v.help) {
        process.stdout.write(MAIN_HELP);
        return EXIT.ok;
      }
      throw new UsageError('no command given');
    }
    const help = COMMAND_HELP[command];
    if (help === undefined) throw new UsageError(`unknown command '${command}'`);
    if (v.help) {
      process.stdout.write(help);
      return EXIT.ok;
    }
    for (const key of Object.keys(v)) {
      if (!COMMON.includes(key) && !ALLOWED[command]!.includes(key)) throw new UsageError(`${command} takes no --${key}`);
    }
    // `-o ''` (an unset shell variable) reached the file system and was refused as a file named "" that cannot be written.
    if (v.output === '') throw new UsageError('--output (-o) needs a file name');
    if (command === 'mcp') throw new UsageError('mcp takes its options after it: agent-sessions mcp --store <file or address> …');
    const term = createTerminal({ noColor: v['no-color'] === true, noPager: v['no-pager'] === true });
    const ctx: CommandContext = { term, json, signal: controller.signal, store: { keyPrefix: v['key-prefix'] } };
    // `show conversations.db alice` reads as naturally as `show alice --db conversations.db`: without --db, a first
    // argument that is an existing file (or a postgresql:// or redis:// address) is the database (only then, so a
    // session id never turns into a path).
    const fileFirst =
      v.db === undefined &&
      !['import', 'otlp', 'traces', 'review', 'dataset', 'check'].includes(command) &&
      rest.length >= 2 &&
      (isFile(rest[0]!) || (await import('./cliStore')).isServerAddress(rest[0]!));
    // Without --db, a first argument that names a file that is not there (or a folder) was read as a session id or as
    // part of a query: `show nofile.db trip` said "show takes only a session id (got 2 arguments)", `search nofile.db
    // rain` "no database". Such an argument is taken for the mistyped file it names.
    if (!fileFirst && v.db === undefined && FILE_FIRST.includes(command) && rest.length >= 2 && namesMissingFile(rest[0]!)) {
      throw isFolder(rest[0]!)
        ? new BadInputError(`${rest[0]} is a folder, not a session database file.`)
        : new NotFoundError(`${rest[0]} does not exist.`);
    }
    const db = fileFirst ? rest.shift() : v.db;
    const one = (what: string): string => {
      if (rest.length === 0) throw new UsageError(`${command} needs ${what}`);
      if (rest.length > 1) throw new UsageError(`${command} takes only ${what} (got ${rest.length} arguments)`);
      return rest[0]!;
    };
    // The commands that stream a session's rows, or load the tokenizer's tables, hold V8's heap near what they hold
    // (heapSizing.ts: issue 43, every command's peak memory on file A within 100 MB).
    if (HEAP_HELD.includes(command)) await holdHeapSmall();
    if (OUTPUT_PACED.includes(command)) useAtomicMarking();
    let out: string;
    switch (command) {
      case 'ls': {
        // `ls a.db b.db` took a.db for the database (fileFirst) and then listed b.db; `ls --db a.db b.db` the same.
        if (rest.length + (db === undefined ? 0 : 1) > 1) throw new UsageError('ls takes one file (--db or an argument, not both)');
        const { ls } = await import('./commands');
        out = await ls(ctx, rest[0] ?? db);
        break;
      }
      case 'show': {
        // Written as it is read, as usage is: a whole session is never held at once.
        const sessionId = one('a session id');
        const turn = positiveInt('turn', v.turn);
        const { show } = await import('./commands');
        if (json) await show(ctx, db, sessionId, v.branch, turn, writeStdout);
        else await term.pageStream((write) => show(ctx, db, sessionId, v.branch, turn, write));
        return EXIT.ok;
      }
      case 'branches': {
        const { branches } = await import('./commands');
        out = await branches(ctx, db, one('a session id'));
        break;
      }
      case 'usage': {
        // Written as it is read: a long session's rows are never held at once.
        const sessionId = one('a session id');
        const { usage } = await import('./commands');
        if (json) await usage(ctx, db, sessionId, v.branch, writeStdout);
        else await term.pageStream((write) => usage(ctx, db, sessionId, v.branch, write));
        return EXIT.ok;
      }
      case 'context': {
        const { contextCommand } = await import('./contextCommand');
        out = await contextCommand(ctx, db, one('a session id'), {
          branch: v.branch,
          turn: positiveInt('turn', v.turn),
          traces: v.traces,
          limit: positiveInt('limit', v.limit),
          model: oneModel(v.model, 'context'),
        });
        break;
      }
      case 'doctor': {
        const { doctorCommand } = await import('./doctorCommand');
        return await doctorCommand(ctx, v.db, rest, { session: v.session, fix: v.fix === true, backup: v.backup });
      }
      case 'search': {
        if (rest.length === 0) throw new UsageError('search needs a query');
        const { searchCommand } = await import('./searchCommand');
        out = await searchCommand(ctx, db, rest.join(' '), atLeastOne('max', v.max), v.reviews, v['no-index'] !== true);
        break;
      }
      case 'run': {
        if (db === undefined) throw new UsageError('run needs a session file (or --db)');
        const { runCommand } = await import('./runCommand');
        // 0 when every run completed, 7 when the agent paused one waiting for input, 1 when one failed or was stopped.
        return await runCommand(
          {
            db,
            sessionId: one('a session id'),
            branch: v.branch ?? 'main',
            fromTurn: positiveInt('from-turn', v['from-turn']),
            name: v.name,
            command: v.command,
            url: v.url,
            message: v.message ?? '',
            models: v.model ?? [],
            timeoutSeconds: positiveInt('timeout', v.timeout),
            tools: v.tools,
            matchNameOnly: v['match-name-only'] ?? [],
            json,
            signal: controller.signal,
          },
          (text) => void process.stdout.write(text),
        );
      }
      case 'check': {
        if (rest.length > 1) throw new UsageError('check takes one session file');
        const { checkCommand } = await import('./checkCommand');
        return await checkCommand(
          {
            file: rest[0] ?? v.db,
            reviews: v.reviews,
            command: v.command,
            url: v.url,
            query: v.query,
            tools: v.tools,
            matchNameOnly: v['match-name-only'] ?? [],
            graders: v.grader ?? [],
            concurrency: positiveInt('concurrency', v.concurrency),
            timeoutSeconds: positiveInt('timeout', v.timeout),
            junit: v.junit,
            markdown: v.markdown,
            save: v.save,
            baseline: v.baseline,
            experiments: v.experiments,
            keepBranches: v['keep-branches'] === true,
            force: v.force === true,
            json,
            color: term.color,
            signal: controller.signal,
          },
          (text) => void process.stdout.write(text),
        );
      }
      case 'otlp': {
        if (rest.length > 0) throw new UsageError('otlp takes no arguments (--listen, --store)');
        const { otlpCommand } = await import('./tracesCommand');
        out = await otlpCommand(ctx, {
          store: v.store,
          listen: v.listen,
          maxSpans: positiveInt('max-spans', v['max-spans']),
          maxAgeDays: positiveInt('max-age-days', v['max-age-days']),
          log: (line) => void process.stderr.write(`${line}\n`),
        });
        process.stdout.write(out);
        return EXIT.ok;
      }
      case 'traces': {
        const [action, ...args] = rest;
        const { tracesCommand } = await import('./tracesCommand');
        out = tracesCommand(ctx, action, args, {
          store: v.store,
          session: v.session,
          branch: v.branch,
          output: v.output,
          unlinked: v.unlinked === true,
          force: v.force === true,
        });
        break;
      }
      case 'review': {
        const [action, ...args] = rest;
        const { reviewCommand } = await import('./reviewCommands');
        out = reviewCommand(ctx, action, args, { store: v.store, session: v.session, output: v.output, force: v.force === true });
        break;
      }
      case 'dataset': {
        const { datasetCommand } = await import('./reviewCommands');
        const result = await datasetCommand(ctx, rest, v.db, {
          store: v.store,
          session: v.session,
          branch: v.branch,
          output: v.output,
          tag: v.tag,
          verdict: v.verdict,
          since: v.since,
          redact: v.redact === true,
          tools: v.tools,
          csv: v.csv === true,
          preview: positiveInt('preview', v.preview),
          contextTurns: positiveInt('context-turns', v['context-turns']),
          model: oneModel(v.model, 'dataset'),
          force: v.force === true,
        });
        process.stdout.write(result.text);
        return result.ok ? EXIT.ok : EXIT.error;
      }
      case 'export': {
        const { exportCommand } = await import('./commands');
        out = await exportCommand(ctx, db, one('a session id'), {
          format: v.format,
          branch: v.branch,
          output: v.output,
          reviews: v.reviews,
          force: v.force === true,
        });
        break;
      }
      default: {
        const { importCommand } = await import('./commands');
        out = await importCommand(ctx, one('a file'), {
          db: v.db,
          session: v.session,
          createTables: v['create-tables'] === true,
          asMain: v['as-main'] === true,
        });
      }
    }
    if (json) process.stdout.write(out);
    else await term.page(out);
    return EXIT.ok;
  } catch (err) {
    const code = err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? EXIT.usage : exitCodeOf(err);
    const message = errorText(err);
    if (json) {
      process.stderr.write(
        `${JSON.stringify({ error: { code, name: err instanceof Error ? err.name : 'Error', problem: problemOf(err), message } })}\n`,
      );
    } else {
      process.stderr.write(`${paint(errColor, 'red', 'agent-sessions:')} ${message}\n`);
      if (code === EXIT.usage) process.stderr.write(`Run 'agent-sessions --help' (or '<command> --help') for usage.\n`);
    }
    return code;
  } finally {
    process.off('SIGINT', onSigint);
    // V8's flags back as they were, so that the code cache the loader writes at exit is one the next run can use.
    releaseHeap();
  }
}

/** The `--model` of dataset and context: one model (the option repeats for `run`, which retries on several). */
function oneModel(models: string[] | undefined, command: string): string | undefined {
  if (models && models.length > 1) throw new UsageError(`${command} takes one --model`);
  return models?.[0];
}

async function runMcp(argv: string[], json: boolean, errColor: boolean): Promise<number> {
  try {
    // Loaded on use: the MCP SDK is most of what the command adds to the bundle, and no other command needs it.
    const { mcpCommand } = await import('./mcpCommand');
    return await mcpCommand(argv, VERSION);
  } catch (err) {
    const code = err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? EXIT.usage : exitCodeOf(err);
    const message = errorText(err);
    if (json)
      process.stderr.write(
        `${JSON.stringify({ error: { code, name: err instanceof Error ? err.name : 'Error', problem: problemOf(err), message } })}\n`,
      );
    else process.stderr.write(`${paint(errColor, 'red', 'agent-sessions:')} ${message}\nRun 'agent-sessions mcp --help' for usage.\n`);
    return code;
  }
}

/**
 * An error's message as the CLI prints it (plain or `--json`): every address in it without its password. Messages
 * quote what the user typed (`There is no review store postgresql://bob:…@db/x`, a path that is an address) and what a
 * library said of it, so one place masks them all, whichever command or module wrote the message.
 */
function errorText(err: unknown): string {
  return hideUrlPasswords(err instanceof Error ? err.message : String(err));
}

function problemOf(err: unknown): string | null {
  const p = (err as { problem?: unknown } | null)?.problem;
  return typeof p === 'string' ? p : null;
}

// Run when this file is the program (the bundle's entry), not when a test imports it.
if (require.main === module) {
  exitWhenStdoutCloses();
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

/**
 * Whether `arg`, which is not a file, still names one: a folder, or a path (a separator, or a SQLite file's extension)
 * where there is nothing. A session id is rarely so; one that is can be given with --db.
 */
function namesMissingFile(arg: string): boolean {
  return isFolder(arg) || (!existsSync(arg) && (/[\\/]/.test(arg) || /\.(db|sqlite3?|db3)$/i.test(arg)));
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
