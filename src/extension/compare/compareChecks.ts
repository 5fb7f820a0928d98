/**
 * The compare view's request parameters, checked before a handler runs (core/requestDispatch.ts). A module of its own
 * so that zod loads with a compare view's first request, not when the extension activates (comparePanel.ts imports it
 * on first use).
 */
import { z } from 'zod';
import type { CompareRequests } from '../../shared/protocol/compare';
import type { ParamSchemas } from '../core/requestDispatch';

const int = z.number({ error: 'must be an integer' }).refine(Number.isInteger, { error: 'must be an integer' });
export const compareParams: ParamSchemas<CompareRequests> = {
  'compare/get': z.object({}).transform((): Record<string, never> => ({})),
  'compare/summary': z.object({}).transform((): Record<string, never> => ({})),
  'compare/rows': z.object({ offset: int, limit: int }),
  'compare/openTurn': z.object({ column: int, turn: int }),
  'compare/pickBranch': z.object({ column: int }),
  'compare/verdicts': z.object({}).transform((): Record<string, never> => ({})),
  'compare/verdict': z.object({
    column: int,
    turn: int,
    outcome: z.enum(['left', 'right', 'tie', 'both-bad']).nullable(),
    reason: z.string().max(10_000),
  }),
};
