/**
 * Helpers for agent-command tests: the Node example set up as a user would install it (its imports resolved to this
 * repository's packages and the built store), small inline commands, and an AG-UI HTTP server.
 */
import { mkdirSync, symlinkSync, writeFileSync, copyFileSync, existsSync, chmodSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { strict as assert } from 'node:assert';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdvancedSQLiteSession } from '../../../../src/store';
import type { RunCompletedEvent, RunFailedEvent, RunOutcome } from '../../../../src/shared/protocol/runEvents';

export const REPO = resolve(__dirname, '../../../..');
export const PYTHON_TURN = join(REPO, 'test/fixtures/agent-commands/python_turn.py');

/** The files of the Node example, copied together (the script imports its replay module from beside it). */
export const NODE_EXAMPLE_FILES = ['replay-agent.mjs', 'agent-sessions-replay.mjs'] as const;

/**
 * A folder holding examples/node/replay-agent.mjs (and its replay module) with a node_modules where `@openai/agents`,
 * `@ag-ui/core` and `zod` are this repository's (`repo`) and `@agent-session-inspector/store` is the built
 * `dist/store.js` (npm run package), or `store` (src/store/index.ts for a Node started with tsx's loader). Returns the
 * command line that runs it, with the Node that runs this process.
 */
export function installNodeExample(dir: string, repo = REPO, store = join(repo, 'dist/store.js')): string {
  if (!existsSync(store)) throw new Error(`${store} is missing: run "npm run package" first (npm test builds it before this phase).`);
  const modules = join(dir, 'node_modules');
  for (const name of ['@openai/agents', '@ag-ui/core', 'zod']) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(repo, 'node_modules', name), join(modules, name), 'dir');
  }
  const storePkg = join(modules, '@agent-session-inspector/store');
  mkdirSync(storePkg, { recursive: true });
  if (store.endsWith('.ts')) {
    // The source, for a Node started with tsx's loader: an ES module re-export (Node cannot see the named exports of
    // a CommonJS module that requires TypeScript).
    writeFileSync(join(storePkg, 'package.json'), JSON.stringify({ name: '@agent-session-inspector/store', main: 'index.mjs' }));
    writeFileSync(join(storePkg, 'index.mjs'), `export * from ${JSON.stringify(pathToFileURL(store).href)};\n`);
  } else {
    writeFileSync(join(storePkg, 'package.json'), JSON.stringify({ name: '@agent-session-inspector/store', main: 'index.js' }));
    writeFileSync(join(storePkg, 'index.js'), `module.exports = require(${JSON.stringify(store)});\n`);
  }
  for (const file of NODE_EXAMPLE_FILES) copyFileSync(join(repo, 'examples/node', file), join(dir, file));
  return `"${process.execPath}" "${join(dir, 'replay-agent.mjs')}"`;
}

/** Writes a Node script to `dir/name` and returns the command line that runs it. */
export function nodeCommand(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return `"${process.execPath}" "${path}"`;
}

/** A file that exists but cannot be executed. */
export function notExecutable(dir: string): string {
  const path = join(dir, 'not-executable.sh');
  writeFileSync(path, '#!/bin/sh\necho hi\n');
  chmodSync(path, 0o644);
  return `"${path}"`;
}

/** An AG-UI HTTP endpoint: `handle` gets the parsed input and a writer of SSE events. */
export async function startAgUiServer(
  handle: (input: Record<string, unknown>, send: (event: Record<string, unknown>) => void, req: IncomingMessage) => Promise<void>,
  options: { status?: number } = {},
): Promise<{ url: string; inputs: Record<string, unknown>[]; close: () => Promise<void> }> {
  const inputs: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const input = JSON.parse(body) as Record<string, unknown>;
      inputs.push(input);
      if (options.status && options.status !== 200) {
        res.writeHead(options.status, { 'content-type': 'application/json' });
        res.end('{"error":"agent crashed"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (event: Record<string, unknown>) => void res.write(`data: ${JSON.stringify(event)}\n\n`);
      handle(input, send, req).then(
        () => res.end(),
        () => res.end(),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/agent`,
    inputs,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The outcome, checked to be a completed run (the failure's message otherwise). */
export function completed(o: RunOutcome): RunCompletedEvent {
  if (o.kind !== 'run/completed') assert.fail(`the run failed: ${o.message} (${o.written.summary})`);
  return o;
}

/** The outcome, checked to be a failed run. */
export function failed(o: RunOutcome): RunFailedEvent {
  if (o.kind !== 'run/failed') assert.fail(`the run completed: ${o.written.summary}`);
  return o;
}

/** Everything a run could change in a session: every branch's items and usage rows. */
export async function snapshot(dbPath: string, sessionId = 's1'): Promise<unknown> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, readonly: true });
  try {
    const out: Record<string, unknown> = {};
    for (const b of (await s.listBranches()).map((x) => x.branchId).sort())
      out[b] = { items: await s.getItems(undefined, b), usage: await s.getTurnUsage(null, b) };
    return out;
  } finally {
    s.close();
  }
}

/** Writes a run's turn (a fixed message and `answer`) to the branch its input names, as an HTTP agent does. */
export async function writeHttpAgentTurn(input: Record<string, unknown>, answer: string): Promise<void> {
  const props = (input.forwardedProps as { agentSessions: { store: { path: string }; branchId: string } }).agentSessions;
  const s = new AdvancedSQLiteSession({ sessionId: String(input.threadId), dbPath: props.store.path });
  try {
    await s.switchToBranch(props.branchId);
    await s.addItems([
      { role: 'user', content: 'And after?' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer }] },
    ] as never);
  } finally {
    s.close();
  }
}
