/**
 * `--grader` specs → graders (docs/check.md, "Graders"). The syntax:
 *
 *   trajectory                     tool names in the recorded order
 *   trajectory:args                … and their arguments, as JSON values
 *   answer:exact | answer:normalized | answer:contains | answer:json
 *   answer:regex=PATTERN           the answer matches PATTERN (JavaScript syntax, `u` flag)
 *   answer:regex:FLAGS=PATTERN     … with flags among i, m, s
 *   command:"COMMAND LINE"         a program of yours (a JSON string; or unquoted, the rest of the spec)
 *   model | model:NAME | model@RUBRIC_FILE | model:NAME@RUBRIC_FILE
 *                                  a judge model; the rubric file is after the last `@` (a model name holding `@`
 *                                  ends with a lone `@`: `model:claude@2024@` is that model with the default rubric)
 *
 * Every mistake is a `GraderSpecError` thrown here, before any case runs; so is a model grader without a key.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Grader } from '../checkTypes';
import { ANSWER_MODES, AnswerGrader, MAX_PATTERN_CHARS, RegexAnswerGrader, type AnswerMode } from './answerGraders';
import { CommandGrader } from './commandGrader';
import { GraderSpecError } from './graderErrors';
import { DEFAULT_JUDGE_MODEL, DEFAULT_RUBRIC, ModelGrader } from './modelGrader';
import { TrajectoryGrader } from './trajectoryGrader';

/** The longest spec: 4,000 characters (a command line with its arguments, a pattern). */
export const MAX_SPEC_CHARS = 4000;
/** The largest rubric file: 20,000 characters (it is sent with every judgement). */
export const MAX_RUBRIC_CHARS = 20_000;

/** What the graders need from where the check runs. */
export interface GraderContext {
  /** The OpenAI-compatible endpoint's base URL, up to and including `/v1`; default: the OpenAI API. */
  endpoint?: string;
  /** The configured key; without one a model grader is refused. */
  apiKey?: string;
  /** The configured model, the judge when a spec names none (else `DEFAULT_JUDGE_MODEL`). */
  model?: string;
  /** For the model grader's client (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** Where grader commands run and relative rubric files are found; default: the current folder. */
  cwd?: string;
  /** The environment of grader commands; default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** How long a grader command or a judgement may take on one case (ms); default 60 s. */
  timeoutMs?: number;
  /**
   * More secrets for the graders to redact from what they say, beside `apiKey` and the `OPENAI_API_KEY` a grader
   * command is given in its environment.
   */
  secrets?: readonly string[];
}

const KNOWN =
  'trajectory, trajectory:args, answer:exact, answer:normalized, answer:contains, answer:json, answer:regex=PATTERN, command:"…", model[:NAME][@RUBRIC_FILE]';

/** The graders of a check given no `--grader`: `trajectory`, and `model` when a key is configured. */
export function defaultGraderSpecs(ctx: GraderContext): string[] {
  return ctx.apiKey ? ['trajectory', 'model'] : ['trajectory'];
}

function rubricOf(spec: string, file: string, cwd: string | undefined): string {
  const path = isAbsolute(file) ? file : resolve(cwd ?? process.cwd(), file);
  let text: string;
  try {
    // Refused by size before it is read: a rubric is a page, not a file of any length.
    if (statSync(path).size > MAX_RUBRIC_CHARS * 4)
      throw new Error(`it is larger than ${MAX_RUBRIC_CHARS.toLocaleString('en-US')} characters`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new GraderSpecError(spec, `The rubric file ${file} cannot be read: ${err instanceof Error ? err.message : String(err)}.`);
  }
  if (text.length > MAX_RUBRIC_CHARS)
    throw new GraderSpecError(
      spec,
      `The rubric file ${file} has ${text.length.toLocaleString('en-US')} characters; at most ${MAX_RUBRIC_CHARS.toLocaleString('en-US')}.`,
    );
  if (text.trim() === '') throw new GraderSpecError(spec, `The rubric file ${file} is empty.`);
  return text;
}

function modelGrader(spec: string, rest: string, ctx: GraderContext): Grader {
  // rest: '' | ':NAME' | '@FILE' | ':NAME@FILE'
  const at = rest.lastIndexOf('@');
  const namePart = at >= 0 ? rest.slice(0, at) : rest;
  const file = at >= 0 ? rest.slice(at + 1) : '';
  if (namePart !== '' && !namePart.startsWith(':')) throw new GraderSpecError(spec, `"${spec}" is not a grader. Known: ${KNOWN}.`);
  const model = namePart === '' ? (ctx.model ?? DEFAULT_JUDGE_MODEL) : namePart.slice(1).trim();
  if (model === '') throw new GraderSpecError(spec, `"${spec}" names no model: write model, or model:NAME.`);
  if (!ctx.apiKey)
    throw new GraderSpecError(
      spec,
      `The model grader needs an API key for its endpoint, and none is configured (set OPENAI_API_KEY, or the extension's API key). Nothing was run.`,
    );
  return new ModelGrader({
    endpoint: ctx.endpoint,
    apiKey: ctx.apiKey,
    model,
    rubric: file === '' ? DEFAULT_RUBRIC : rubricOf(spec, file, ctx.cwd),
    ...(file !== '' ? { rubricFile: file } : {}),
    ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(ctx.secrets ? { secrets: ctx.secrets } : {}),
  });
}

function commandGrader(spec: string, rest: string, ctx: GraderContext): Grader {
  let command = rest.trim();
  if (command.startsWith('"')) {
    try {
      command = JSON.parse(command) as string;
    } catch {
      throw new GraderSpecError(spec, `The command of "${spec}" is not one quoted string: write command:"…", with \\" for a quote inside.`);
    }
  }
  if (command.trim() === '') throw new GraderSpecError(spec, 'A command grader needs a command line: command:"node grade.js".');
  // The configured key too: a grader command may have it from elsewhere (a file, the extension's environment).
  return new CommandGrader(command, {
    cwd: ctx.cwd,
    env: ctx.env,
    timeoutMs: ctx.timeoutMs,
    secrets: [ctx.apiKey, ...(ctx.secrets ?? [])],
  });
}

function regexGrader(spec: string, rest: string): Grader {
  // rest: ':FLAGS=PATTERN' | '=PATTERN'
  const eq = rest.indexOf('=');
  const flags = eq >= 0 && rest.startsWith(':') ? rest.slice(1, eq) : eq === 0 ? '' : null;
  if (flags === null || !/^[ims]*$/.test(flags) || new Set(flags).size !== flags.length)
    throw new GraderSpecError(
      spec,
      `"${spec}" is not a regex grader: write answer:regex=PATTERN, or answer:regex:FLAGS=PATTERN with flags among i, m, s.`,
    );
  const pattern = rest.slice(eq + 1);
  if (pattern === '') throw new GraderSpecError(spec, 'answer:regex needs a pattern after "=".');
  if (pattern.length > MAX_PATTERN_CHARS)
    throw new GraderSpecError(spec, `The pattern has ${pattern.length} characters; at most ${MAX_PATTERN_CHARS}.`);
  try {
    return new RegexAnswerGrader(new RegExp(pattern, `${flags}u`));
  } catch (err) {
    throw new GraderSpecError(
      spec,
      `The pattern of "${spec}" is not a regular expression: ${err instanceof Error ? err.message : String(err)}.`,
    );
  }
}

/** The grader a spec names; a `GraderSpecError` for anything else. */
export function parseGrader(spec: string, ctx: GraderContext = {}): Grader {
  if (spec.length > MAX_SPEC_CHARS) throw new GraderSpecError(spec.slice(0, 60), `A grader spec has at most ${MAX_SPEC_CHARS} characters.`);
  const s = spec.trim();
  if (s === 'trajectory') return new TrajectoryGrader(false);
  if (s === 'trajectory:args') return new TrajectoryGrader(true);
  if (s.startsWith('answer:regex')) return regexGrader(spec, s.slice('answer:regex'.length));
  if (s.startsWith('answer:')) {
    const mode = s.slice('answer:'.length);
    if ((ANSWER_MODES as readonly string[]).includes(mode)) return new AnswerGrader(mode as AnswerMode);
    throw new GraderSpecError(
      spec,
      `"${spec}" is not an answer grader: answer:exact, answer:normalized, answer:contains, answer:json or answer:regex=PATTERN.`,
    );
  }
  if (s.startsWith('command:')) return commandGrader(spec, s.slice('command:'.length), ctx);
  if (s === 'model' || s.startsWith('model:') || s.startsWith('model@')) return modelGrader(spec, s.slice('model'.length), ctx);
  throw new GraderSpecError(spec, `"${spec.slice(0, 80)}" is not a grader. Known: ${KNOWN}.`);
}

/**
 * The graders of a check: the specs given, or the defaults (`defaultGraderSpecs`) when none; a spec given twice is
 * refused (it would judge every case twice and count once).
 */
export function parseGraders(specs: readonly string[], ctx: GraderContext = {}): Grader[] {
  const graders = (specs.length > 0 ? specs : defaultGraderSpecs(ctx)).map((s) => parseGrader(s, ctx));
  const seen = new Set<string>();
  for (const g of graders) {
    if (seen.has(g.name)) throw new GraderSpecError(g.name, `The grader ${g.name} is given twice.`);
    seen.add(g.name);
  }
  return graders;
}
