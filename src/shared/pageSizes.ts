/**
 * How many turns the conversation view reads at a time. Both sides need the numbers: the host clamps every
 * `turns/get`, the view asks for pages of this size.
 */

/** Turns per page of the conversation view: the first page of a branch and each page the view loads as it scrolls. */
export const VIEW_TURN_PAGE = 100;

/**
 * The most turns one `turns/get` request returns (the host clamps `limit` to 1…this); the view asks for this many
 * when it jumps to the end.
 */
export const MAX_TURN_REQUEST = 500;
