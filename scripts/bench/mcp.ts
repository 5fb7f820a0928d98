/**
 * The MCP server benchmark (issue 27): `agent-sessions mcp` as a coding agent uses it, through the MCP SDK's client
 * over stdio, on the scale benchmark's file A (one session of 100,000 turns and five branches, scaled by `--scale`):
 * - the server's start and tool list (spawn, initialize, `tools/list`; target 1 s), a fresh process each time;
 * - each tool's answer time on file A, first call (counts not yet kept) and the median of warm calls (target 500 ms,
 *   "once its counts are kept"), and each answer's size (a default answer stays under 20,000 characters).
 *
 *   node --import tsx scripts/bench/mcp.ts [--scale=0.01] [--reps=5]   (alone; builds the CLI into a temporary folder)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TraceStore } from '../../src/store/traces/traceStore';
import { median, now, round } from './measure';
import { ensureScaleFile } from './scaleFiles';

export const MCP_TOOL_TARGET_MS = 500;
export const MCP_START_TARGET_MS = 1000;
export const MCP_ANSWER_CHARS = 20_000;

export interface McpBenchReport {
  file: { path: string; bytes: number; turns: number; generatedMs: number | null };
  startAndList: { firstMs: number; medianMs: number; runs: number[]; tools: number };
  tools: { tool: string; args: Record<string, unknown>; firstMs: number; medianMs: number; chars: number; error: boolean }[];
  target: { toolMs: number; startMs: number; answerChars: number; toolsMet: boolean; startMet: boolean; charsMet: boolean };
}

function transport(cli: string, args: string[], env: Record<string, string>): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...args], env, stderr: 'ignore' });
}

export async function runMcpBench(
  options: { cacheDir: string; cli: string; scale: number; reps: number; env?: Record<string, string> },
  progress: (m: string) => void,
): Promise<McpBenchReport> {
  const file = ensureScaleFile(options.cacheDir, 'A', options.scale, progress);
  const turns = file.spec.sessions[0]!.turns;
  const env = { ...(process.env as Record<string, string>), AGENT_SESSIONS_DB: '', ...options.env };
  const tmp = mkdtempSync(join(tmpdir(), 'asi-bench-mcp-'));
  const traces = join(tmp, 'traces.db');
  TraceStore.open(traces, { readonly: false }).close();
  const args = ['--store', file.path, '--traces', traces];
  try {
    const starts: number[] = [];
    let toolCount = 0;
    for (let i = 0; i <= options.reps; i++) {
      const t0 = now();
      const c = new Client({ name: 'bench', version: '1.0.0' });
      await c.connect(transport(options.cli, args, env));
      toolCount = (await c.listTools()).tools.length;
      starts.push(now() - t0);
      await c.close();
    }
    progress(`mcp: start and list tools ${round(starts[0]!)} ms first, ${round(median(starts.slice(1)))} ms median`);

    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(transport(options.cli, args, env));
    const session = 'scale-a';
    const cases: [string, Record<string, unknown>][] = [
      ['list_stores', {}],
      ['list_sessions', {}],
      ['branch_tree', { session }],
      ['read_turns', { session }],
      ['read_turns', { session, afterTurn: turns - 5 }],
      ['read_turns', { session, branch: 'b1_late', turn: Math.round(turns * 0.75) + 1 }],
      ['search_sessions', { query: 'weather' }],
      ['search_sessions', { query: 'tool:search_docs', afterHit: 100 }],
      ['token_usage', { session, model: 'gpt-4.1' }],
      ['token_usage', { session, branch: 'main', offset: turns - 50 }],
      ['compare_branches', { session, branch: 'main', otherBranch: 'b1_late' }],
      ['turn_timeline', { session, turn: turns }],
    ];
    const results: McpBenchReport['tools'] = [];
    try {
      for (const [tool, a] of cases) {
        const times: number[] = [];
        let chars = 0;
        let error = false;
        for (let i = 0; i <= options.reps; i++) {
          const t0 = now();
          const r = (await client.callTool({ name: tool, arguments: a })) as CallToolResult;
          times.push(now() - t0);
          chars = r.content.map((x) => (x.type === 'text' ? x.text.length : 0)).reduce((s, n) => s + n, 0);
          error = r.isError === true;
        }
        const row = { tool, args: a, firstMs: round(times[0]!), medianMs: round(median(times.slice(1))), chars, error };
        progress(
          `mcp: ${tool} ${JSON.stringify(a)}: first ${row.firstMs} ms, median ${row.medianMs} ms, ${chars} chars${error ? ' (error)' : ''}`,
        );
        results.push(row);
      }
    } finally {
      await client.close();
    }
    const startMedian = round(median(starts.slice(1)));
    return {
      file: { path: file.path, bytes: file.bytes, turns, generatedMs: file.generationMs === null ? null : round(file.generationMs) },
      startAndList: { firstMs: round(starts[0]!), medianMs: startMedian, runs: starts.map(round), tools: toolCount },
      tools: results,
      target: {
        toolMs: MCP_TOOL_TARGET_MS,
        startMs: MCP_START_TARGET_MS,
        answerChars: MCP_ANSWER_CHARS,
        toolsMet: results.every((r) => !r.error && r.medianMs <= MCP_TOOL_TARGET_MS),
        startMet: startMedian <= MCP_START_TARGET_MS,
        charsMet: results.every((r) => r.chars < MCP_ANSWER_CHARS),
      },
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The report as a table for stderr. */
export function mcpTable(report: McpBenchReport): string {
  const lines = [
    `MCP server on file A (${report.file.turns} turns): start + tools/list ${report.startAndList.medianMs} ms (target ${MCP_START_TARGET_MS})`,
    'tool               args                                            first ms  median ms   chars',
  ];
  for (const r of report.tools) {
    lines.push(
      `${r.tool.padEnd(18)} ${JSON.stringify(r.args).slice(0, 46).padEnd(46)} ${String(r.firstMs).padStart(9)} ${String(r.medianMs).padStart(10)} ${String(r.chars).padStart(7)}${r.error ? ' error' : ''}`,
    );
  }
  return lines.join('\n');
}

// Alone: build the CLI bundle into a temporary folder and run at a small scale. Only as this source file: bundled
// into dist/bench.js, `__filename` is the bundle's, which is also what `process.argv[1]` names.
if (/[\\/]mcp\.ts$/.test(__filename) && process.argv[1] && resolve(process.argv[1]) === resolve(__filename)) {
  void (async () => {
    const opt = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
    const root = join(__dirname, '..', '..');
    const dir = mkdtempSync(join(tmpdir(), 'asi-bench-mcp-cli-'));
    const esbuild = await import('esbuild');
    const { cliBuildOptions } = (await import(pathToFileURL(join(root, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
      cliBuildOptions: (outfile: string) => import('esbuild').BuildOptions;
    };
    const cli = join(dir, 'cli.js');
    await esbuild.build(cliBuildOptions(cli));
    try {
      const report = await runMcpBench(
        {
          cacheDir: join(dir, 'cache'),
          cli,
          scale: opt('scale', 0.01),
          reps: opt('reps', 3),
          env: { NODE_PATH: join(root, 'node_modules') },
        },
        (m) => process.stderr.write(`${m}\n`),
      );
      process.stderr.write(`\n${mcpTable(report)}\n`);
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
}
