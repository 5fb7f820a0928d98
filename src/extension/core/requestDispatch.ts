/**
 * How every panel kind (conversation, compare) answers its page: a request's method and parameters checked against
 * the panel's schemas before its handler runs. No vscode import, so the checks are unit-tested.
 */
import type { z } from 'zod';
import type { RequestMap } from '../../shared/protocol/envelope';
import { UserFacingError } from './userError';

/** The parameter schemas of a requests map. */
export type ParamSchemas<R extends RequestMap<R>> = { [M in keyof R]: z.ZodType<R[M]['params']> };

/** One handler per method of a requests map, given the `context` the dispatcher passes (none by default). */
export type HandlersOf<R extends RequestMap<R>, C = void> = {
  [M in keyof R]: (params: R[M]['params'], context: C) => R[M]['result'] | Promise<R[M]['result']>;
};

/**
 * Checks a request's method and parameters and runs its handler with `context`. Throws `UserFacingError` with
 * `Invalid request: …` for an unknown method or a parameter of the wrong type (naming the parameter), before any
 * handler runs.
 */
export async function dispatchRequest<R extends RequestMap<R>, C = void>(
  schemas: ParamSchemas<R>,
  handlers: HandlersOf<R, C>,
  method: string,
  params: unknown,
  context: C,
): Promise<unknown> {
  if (!Object.hasOwn(schemas, method)) throw new UserFacingError(`Invalid request: unknown method '${method.slice(0, 100)}'.`);
  const parsed = schemas[method as keyof R].safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const what = issue && issue.path.length > 0 ? issue.path.join('.') : 'params';
    throw new UserFacingError(`Invalid request: ${what} ${issue?.path.length ? issue.message : 'must be an object'}.`);
  }
  const handler = handlers[method as keyof R] as (p: unknown, context: C) => unknown;
  return handler(parsed.data, context);
}
