/**
 * Running examples/node/replay-agent.mjs as the extension runs an agent command, for the tests of the example itself:
 * the RunAgentInput of a run continuing `main` of session `s1` (docs/agent-command.md §2), and the example started
 * under tsx (its store package is this repository's source) with that input on stdin, its AG-UI events read back.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EventSchema, RunAgentInputSchema } from '@ag-ui/core/schemas';
import { TEST_KEY } from '../agentTestKit';
import { REPO } from './commandKit';

export type Json = Record<string, unknown>;

/** tsx's loader, which the example is started with. */
export const TSX = join(REPO, 'node_modules/tsx/dist/loader.mjs');
/** The store package the example imports, as these tests install it: the source, so they need no build. */
export const STORE_SOURCE = join(REPO, 'src/store/index.ts');

export interface ExampleRun {
  code: number | null;
  /** Every line the example printed, each checked to be an AG-UI event. */
  events: Json[];
  stderr: string;
}

/** The RunAgentInput of a run continuing `main` of `s1` in `dbPath` with "And now?"; with `tools` it is version 2. */
export function exampleInput(dbPath: string, tools?: Json): Json {
  const input = {
    threadId: 's1',
    runId: 'run-1',
    state: {},
    messages: [{ id: 'm1', role: 'user', content: 'And now?' }],
    tools: [],
    context: [],
    forwardedProps: {
      agentSessions: {
        version: tools ? 2 : 1,
        store: { kind: 'sqlite', path: dbPath, sessionsTable: 'agent_sessions', messagesTable: 'agent_messages' },
        sessionId: 's1',
        branchId: 'main',
        fork: null,
        model: 'gpt-4.1-mini',
        input: [{ role: 'user', content: 'And now?' }],
        ...(tools ? { tools } : {}),
      },
    },
  };
  assert.ok(RunAgentInputSchema.safeParse(input).success);
  return input;
}

/** Runs the example `script` in `cwd` on `input`, against the model server at `baseUrl` (killed after 30 s). */
export function runExample(
  script: string,
  cwd: string,
  input: Json,
  baseUrl: string,
  env: Record<string, string> = {},
): Promise<ExampleRun> {
  const child = spawn(process.execPath, ['--import', TSX, script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', OPENAI_API_KEY: TEST_KEY, OPENAI_BASE_URL: baseUrl, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(JSON.stringify(input));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const events = stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          assert.ok(EventSchema.safeParse(JSON.parse(l)).success, `not a valid AG-UI event: ${l}`);
          return JSON.parse(l) as Json;
        });
      resolve({ code, events, stderr });
    });
  });
}
