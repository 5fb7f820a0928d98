/**
 * The conversation view's requests as the host receives them: one zod schema per method for its parameters, and a
 * typed map of handlers, `{ [M in RequestMethod]: handler }`, so each handler gets its method's parameters and must
 * return its method's result (docs/webview-protocol.md#requests; the features' handlers: core/viewRequests.ts). Messages come from a frame: the method name and every
 * parameter are checked here before a handler runs. No vscode import, so the checks are unit-tested.
 */
import { z } from 'zod';
import { COPY_PARTS, type RequestMethod, type Requests } from '../../shared/protocol/conversation';
import { USAGE_SORT_KEYS } from '../../shared/protocol/conversationViews';
import { TOOLS_MODES } from '../../shared/protocol/replay';
import { dispatchRequest } from '../core/requestDispatch';

const str = z.string({ error: 'must be a string' });
// Any integer the number type holds (z.int() would also refuse integers beyond 2^53, which the checks never did).
const int = z.number({ error: 'must be an integer' }).refine(Number.isInteger, { error: 'must be an integer' });

const contentRef = z
  .object({ branchId: str, turn: int.nullable(), sequenceNumber: int.nullable() }, { error: 'must be an object' })
  .refine((r) => r.sequenceNumber === null || r.turn !== null, { path: ['turn'], error: 'must be set with sequenceNumber' });

// A method without parameters still takes an object (its fields are dropped), like every other method.
const toolsMode = z.enum(TOOLS_MODES, { error: `must be one of ${TOOLS_MODES.join(', ')}` });

const none = z.object({}).transform((): Record<string, never> => ({}));

/** The parameter schema of every method, each typed by the protocol's parameters of that method. */
export const requestParams: { [M in RequestMethod]: z.ZodType<Requests[M]['params']> } = {
  'view/ready': none,
  'session/get': none,
  'turns/get': z
    .object({ branchId: str, afterTurn: int.nullable(), beforeTurn: int.nullable().optional(), limit: int })
    // One direction per request: a page after a turn, or (beforeTurn given) the page before one.
    .refine((p) => p.beforeTurn === undefined || p.afterTurn === null, {
      path: ['afterTurn'],
      error: 'must be null when beforeTurn is given',
    }),
  'turn/items': z.object({ branchId: str, turn: int }),
  'turn/timeline': z.object({ branchId: str, turn: int }),
  'turn/context': z.object({ branchId: str, turn: int }),
  'branch/latency': z.object({ branchId: str }),
  'trace/link': z.object({ branchId: str, turn: int }),
  'reviews/get': z.object({ branchId: str }),
  'turn/askCopilot': z.object({ branchId: str, turn: int }),
  'correction/branch': z.object({
    fromBranchId: str,
    branchTurnNumber: int,
    ranOn: str,
    turn: int,
    itemIndex: int,
    name: z.string().max(200).optional(),
  }),
  'correction/set': z.object({ branchId: str, turn: int, itemIndex: int, text: z.string().max(100_000).nullable() }),
  'review/set': z.object({
    branchId: str,
    turn: int,
    change: z.object({
      verdict: z.enum(['good', 'bad']).nullable().optional(),
      addTags: z.array(z.string()).max(20).optional(),
      removeTags: z.array(z.string()).max(20).optional(),
      note: z.string().max(10_000).optional(),
    }),
  }),
  'tables/get': z.object({
    branchId: z.string({ error: 'must be a string or null' }).nullable(),
    usage: z.object(
      {
        sort: z.enum(USAGE_SORT_KEYS, { error: `must be one of ${USAGE_SORT_KEYS.join(', ')}` }),
        descending: z.boolean({ error: 'must be a boolean' }),
        offset: int,
        limit: int,
      },
      { error: 'must be an object' },
    ),
  }),
  'tools/get': z.object({ branchId: z.string({ error: 'must be a string or null' }).nullable() }),
  'pricing/choose': none,
  'branch/create': z.object({ fromBranchId: str, branchTurnNumber: int, name: str }),
  'branch/switch': z.object({ branchId: str }),
  'branch/delete': z.object({ branchId: str }),
  'run/start': z.object({ branchId: str, input: str, agent: str.optional(), tools: toolsMode.optional() }),
  'run/stop': z.object({ runId: str }),
  'branch/compare': z.object({ branchId: str }),
  'apiKey/set': none,
  'whatIf/models': none,
  'whatIf/start': z.object({
    branchId: str,
    turn: int,
    branchTurnNumber: int,
    editedText: z.string({ error: 'must be a string or null' }).nullable(),
    models: z.array(str, { error: 'must be an array of strings' }),
    agent: str.optional(),
    tools: toolsMode.optional(),
  }),
  'replay/table': z.object({ branchId: str, turn: int }),
  'replay/marks': z.object({ branchId: str }),
  'agents/get': none,
  'agents/select': z.object({ id: str }),
  'content/copy': z.object({
    ref: contentRef,
    part: z.enum(COPY_PARTS, { error: `must be one of ${COPY_PARTS.join(', ')}` }),
  }),
  'content/openJson': z.object({ ref: contentRef }),
  'branch/export': z.object({ branchId: z.string({ error: 'must be a string or null' }).nullable() }),
  'search/session': z.object({
    query: z.string({ error: 'must be a string' }).max(1000, { error: 'must be at most 1000 characters' }),
    branchId: str,
  }),
  'layers/get': none,
  'layer/items': z.object({ layerId: int }),
  'layer/compare': z.object({ layerId: int }),
  'layer/restore': z.object({ layerId: int, name: str.optional() }),
};

/** One handler per method, taking its checked parameters and returning (or resolving to) its result. */
export type RequestHandlers = {
  [M in RequestMethod]: (params: Requests[M]['params']) => Requests[M]['result'] | Promise<Requests[M]['result']>;
};

export function isRequestMethod(method: string): method is RequestMethod {
  return Object.hasOwn(requestParams, method);
}

/**
 * Checks a request's method and parameters and runs its handler. Throws `UserFacingError` with `Invalid request: …`
 * for an unknown method or a parameter of the wrong type (naming the parameter), before any handler runs.
 */
export async function handleRequest(handlers: RequestHandlers, method: string, params: unknown): Promise<unknown> {
  return dispatchRequest<Requests>(requestParams, handlers, method, params, undefined);
}
