/**
 * How many turns the conversation view reads at a time. Both sides need the numbers: the host sends the first page
 * in the snapshot and clamps every `turns/get`, the view asks for the pages that follow.
 */

/** Turns per page of the conversation view: the snapshot's first page and each page the view loads as it scrolls. */
export const VIEW_TURN_PAGE = 100;

/**
 * The most turns one `turns/get` request returns (the host clamps `limit` to 1…this); the view asks for this many
 * when it jumps to the end.
 */
export const MAX_TURN_REQUEST = 500;
