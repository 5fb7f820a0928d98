// Shared by the remote store specs: items in the @openai/agents shape, what they store as, raw SQL and Redis
// clients that bypass the stores, and assertions on RemoteStoreError.
import assert from 'node:assert/strict';
import type { AgentInputItem } from '@openai/agents';
import Redis, { type RedisOptions } from 'ioredis';
import pg from 'pg';
import { RemoteStoreError, type RemoteStoreProblem } from '../../src/store/remote/remoteErrors';

/** Items as the JS runner hands them to a session. */
export const js = {
  user: (content: string): AgentInputItem => ({ role: 'user', content }) as AgentInputItem,
  assistant: (text: string): AgentInputItem =>
    ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }) as AgentInputItem,
  call: (callId: string, name = 'get_weather'): AgentInputItem =>
    ({ type: 'function_call', callId, name, arguments: '{}', status: 'completed' }) as AgentInputItem,
  result: (callId: string, text: string, name = 'get_weather'): AgentInputItem =>
    ({ type: 'function_call_result', callId, name, status: 'completed', output: { type: 'text', text } }) as AgentInputItem,
  raw: (value: unknown): AgentInputItem => value as AgentInputItem,
};

/** A short trip in the JS shape: turn 1 plans the day, turn 2 asks the weather (a get_weather call and its output). */
export const TRIP: AgentInputItem[] = [
  js.user('Plan a day in Lisbon.'),
  js.assistant('Start at Belém, then the Alfama.'),
  js.user('What is the weather there?'),
  js.call('call_1'),
  js.result('call_1', 'Lisbon: 22°C, sunshine'),
  js.assistant('Sunny and 22°C.'),
];

/** What those items store as: the Responses API item Python would store, as compact ensure_ascii JSON. */
export const stored = {
  user: (content: string): string => `{"role":"user","content":${JSON.stringify(content)}}`,
  assistant: (text: string): string =>
    `{"type":"message","role":"assistant","content":[{"type":"output_text","text":${JSON.stringify(text)},"annotations":[]}],"status":"completed"}`,
  call: (callId: string, name = 'get_weather'): string =>
    `{"type":"function_call","call_id":"${callId}","name":"${name}","arguments":"{}","status":"completed"}`,
  result: (callId: string, text: string): string =>
    `{"type":"function_call_output","call_id":"${callId}","output":${JSON.stringify(text)},"status":"completed"}`,
};

/** Items as a Python agent (0.22.0, Responses model) stores them, field order included. */
export const python = {
  user: (content: string) => ({ content, role: 'user' }),
  assistant: (id: string, text: string) => ({
    id,
    content: [{ annotations: [], text, type: 'output_text', logprobs: [] }],
    role: 'assistant',
    status: 'completed',
    type: 'message',
  }),
  call: (callId: string, name: string, args: string) => ({
    arguments: args,
    call_id: callId,
    name,
    type: 'function_call',
    id: `fc_${callId}`,
    status: 'completed',
  }),
  output: (callId: string, output: string) => ({ call_id: callId, output, type: 'function_call_output' }),
};

/** The text of user items (the content), of assistant messages (the first part's text), or the type. */
export function label(item: unknown): string {
  const i = item as { role?: string; content?: unknown; type?: string; callId?: string; call_id?: string };
  if (i.role === 'user') return String(i.content);
  if (i.role === 'assistant' && Array.isArray(i.content)) return `assistant:${(i.content[0] as { text: string }).text}`;
  return `${i.type}:${i.callId ?? i.call_id}`;
}

/** The error a promise rejects with (fails when it resolves). */
export async function rejection(p: Promise<unknown> | (() => Promise<unknown>)): Promise<Error> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    return err as Error;
  }
  assert.fail('expected a rejection');
}

/** Asserts a RemoteStoreError with that problem and returns it. */
export async function remoteFailure(
  p: Promise<unknown> | (() => Promise<unknown>),
  problem: RemoteStoreProblem,
): Promise<RemoteStoreError> {
  const err = await rejection(p);
  assert.ok(err instanceof RemoteStoreError, `expected a RemoteStoreError, got ${err.name}: ${err.message}`);
  assert.equal(err.problem, problem, err.message);
  return err;
}

/** Runs `use` on a fresh connection that bypasses the stores. */
export async function withPg<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The rows of one statement, on a fresh connection. */
export async function sql<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  return withPg(url, async (c) => (await c.query<T>(text, params)).rows);
}

/** A plain ioredis client (no reconnects) for raw commands; disconnect it in afterEach. */
export async function rawRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, ...options });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** `redis://:password@host:port/0` with another password. */
export function withPassword(url: string, password: string): string {
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Terminates the inspector's backend that waits for a lock (as a server restart or failover would end it), once it
 * waits. Asked on a connection of its own each time: in a transaction, pg_stat_activity keeps its first snapshot.
 */
export async function terminateWaiting(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const rows = await sql<{ ok: boolean }>(
      url,
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'agent-session-inspector' AND wait_event_type = 'Lock'`,
    );
    if (rows.some((r) => r.ok)) return;
    await sleep(25);
  }
  assert.fail('no backend of the inspector came to wait for the lock');
}
