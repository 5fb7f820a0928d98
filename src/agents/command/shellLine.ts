/**
 * The line the system shell is given for an agent command. Debian's and Ubuntu's `/bin/sh` (dash) forks the last
 * command of `sh -c` instead of becoming it (bash execs it), so every run cost a second fork and a shell process
 * waiting beside the agent; at `check --concurrency 8` on two cores each extra process to schedule is milliseconds
 * before the agent starts (issue 42). A command line that is one simple command is therefore prefixed with `exec`:
 * the shell still parses it (quotes, variables, globs, `~`), then becomes the program. Anything else — lists,
 * pipelines, `&&`, subshells, redirections, a leading `VAR=value`, a shell keyword or builtin first — is left exactly
 * as written, since `exec` would change what it means.
 */

/** Characters that can make a line more than one simple command (or change the shell's own state). */
const COMPOUND = /[\n\r;&|<>(){}`#]/;

/** First words that are the shell's own (keywords and builtins): `exec` would look for a program of that name. */
const SHELL_WORDS = new Set([
  '!',
  '.',
  ':',
  '[',
  '[[',
  'alias',
  'bg',
  'break',
  'case',
  'cd',
  'command',
  'continue',
  'do',
  'done',
  'elif',
  'else',
  'esac',
  'eval',
  'exec',
  'exit',
  'export',
  'fg',
  'fi',
  'for',
  'function',
  'getopts',
  'hash',
  'if',
  'jobs',
  'local',
  'read',
  'readonly',
  'return',
  'set',
  'shift',
  'source',
  'then',
  'time',
  'times',
  'trap',
  'type',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'until',
  'wait',
  'while',
]);

/** `command` as the shell runs it: with `exec ` in front when it is one simple command on a POSIX shell. */
export function shellLine(command: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32' || COMPOUND.test(command)) return command;
  const first = /^\s*(\S+)/.exec(command)?.[1];
  // A leading assignment (`OPENAI_BASE_URL=… python agent.py`) would become the program's name after `exec`.
  if (first === undefined || first.includes('=') || SHELL_WORDS.has(first)) return command;
  return `exec ${command}`;
}
