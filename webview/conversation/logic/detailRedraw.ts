/**
 * When the turn detail may be drawn again. A live refresh (another process wrote to the file) redraws the selected
 * turn; an inline form open in it (Branch here, Edit and resend, Retry with models) would lose what the user typed,
 * so a redraw of the same turn waits until the form closes. Moving to another turn or branch draws at once: that is
 * the user leaving the form.
 */

/** The identity of what the detail shows: a branch's turn, or nothing. */
export function detailKey(branchId: string, turn: number | null): string | null {
  return turn === null ? null : `${branchId}\u0000${turn}`;
}

export function detailRedraw(shown: string | null, next: string | null, formOpen: boolean): 'draw' | 'hold' {
  return formOpen && shown !== null && shown === next ? 'hold' : 'draw';
}

/** Sent (bubbling) by an inline form of the detail when it closes: a redraw that waited for it can happen now. */
export const FORM_CLOSED_EVENT = 'asi-form-closed';
