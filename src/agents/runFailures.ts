/**
 * Sorting a failed run's error into the kinds the view shows (`RunFailureKind`), with a message that says what to
 * do. Messages are redacted by the caller; they may quote a server's error text.
 */
import { MaxTurnsExceededError, ModelBehaviorError, ToolCallError, ToolTimeoutError } from '@openai/agents';
import { codesOf, lockedFailure, type ClassifiedFailure } from './storeFailures';
import { NoApiKeyError, SET_API_KEY_REMEDY } from './apiKey';
import { McpServerStartError } from './agentConfig';
import { errorMessage } from '../shared/errorMessage';

export type { ClassifiedFailure } from './storeFailures';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Sorts an error into a failure kind with a message that says what to do. Works on the openai client's errors by
 * shape as well as by class, since a module agent may bring its own copy of the client.
 */
export function classify(err: unknown, context: { endpoint?: string; cancelled: boolean }): ClassifiedFailure {
  const where = context.endpoint ? ` at ${context.endpoint}` : '';
  const name = typeof err === 'object' && err !== null ? ((err as { constructor?: { name?: string } }).constructor?.name ?? '') : '';
  const codes = codesOf(err);
  if (context.cancelled || name === 'APIUserAbortError' || (err instanceof Error && err.name === 'AbortError')) {
    return { failure: 'cancelled', message: 'The run was cancelled.' };
  }
  if (err instanceof NoApiKeyError) return { failure: 'no-key', message: err.message };
  const locked = lockedFailure(err);
  if (locked) return locked;
  if (err instanceof McpServerStartError) return { failure: 'tool', message: err.message };
  if (err instanceof ToolCallError || err instanceof ToolTimeoutError) {
    const cause = err instanceof ToolCallError && err.error ? errorMessage(err.error) : errorMessage(err);
    return { failure: 'tool', message: `A tool failed, so the run stopped: ${cause}` };
  }
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && /Error$/.test(name)) {
    const detail = errorMessage(err).replace(/^\d{3}\s*/, '');
    const remedy =
      status === 401 || status === 403
        ? ` The server did not accept the API key. ${SET_API_KEY_REMEDY} with a valid key.`
        : status === 404
          ? ' Check the model name and that the base URL points at an OpenAI-compatible server with the Responses API (…/v1).'
          : status === 429
            ? ' The server is rate-limiting requests; try again later.'
            : status >= 500
              ? ' The server had a problem; try again later.'
              : '';
    return { failure: 'http', status, message: `The model server${where} answered HTTP ${status}: ${detail || 'no details'}.${remedy}` };
  }
  if (
    name === 'APIConnectionError' ||
    name === 'APIConnectionTimeoutError' ||
    codes.some((c) => CONNECTION_CODES.has(c)) ||
    (err instanceof TypeError && /fetch failed|terminated|other side closed/i.test(err.message))
  ) {
    const midStream = codes.includes('UND_ERR_SOCKET') || (err instanceof TypeError && /terminated/i.test(err.message));
    const code = codes.find((c) => CONNECTION_CODES.has(c));
    return {
      failure: 'unreachable',
      message: midStream
        ? `The connection to the model server${where} broke off in the middle of the answer.`
        : `The model server${where} cannot be reached${code ? ` (${code})` : ''}${name === 'APIConnectionTimeoutError' ? ' (timed out)' : ''}. Check agentSessions.agent.baseUrl and that the server is running.`,
    };
  }
  if (err instanceof MaxTurnsExceededError)
    return { failure: 'other', message: `${err.message} The agent kept calling tools; the run was stopped.` };
  if (err instanceof ModelBehaviorError) return { failure: 'other', message: `The model's answer could not be used: ${err.message}` };
  return { failure: 'other', message: errorMessage(err) };
}
