/**
 * A correction as an item of the session: what *Continue from this answer* writes on the new branch in place of the
 * answer it corrects (src/extension/reviews/correctionBranch.ts).
 */
/** The corrected answer as an assistant message item of the same shape as the one it replaces (a new item: no id). */
export function correctedItem(original: unknown, text: string): unknown {
  const o = (original ?? {}) as Record<string, unknown>;
  const { id: _id, content, ...rest } = o;
  const parts = Array.isArray(content) ? content : [];
  const textPart = parts.find((p) => (p as { type?: unknown } | null)?.type === 'output_text') as Record<string, unknown> | undefined;
  return {
    ...rest,
    role: 'assistant',
    ...(o.type === undefined ? {} : { type: o.type }),
    ...(o.status === undefined ? {} : { status: 'completed' }),
    content:
      typeof content === 'string' ? text : [{ ...(textPart ?? { type: 'output_text' }), type: 'output_text', text, annotations: [] }],
  };
}
