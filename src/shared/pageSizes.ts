/**
 * How many turns and table rows the conversation view reads at a time. Both sides need the numbers: the host clamps every
 * `turns/get`, the view asks for pages of this size.
 */

/** Turns per page of the conversation view: the first page of a branch and each page the view loads as it scrolls. */
export const VIEW_TURN_PAGE = 100;

/** The most turns one `turns/get` request returns (the host clamps `limit` to 1…this). */
export const MAX_TURN_REQUEST = 500;

/** Rows per page of the Tokens table. */
export const USAGE_PAGE = 200;

/** The most usage rows one `tables/get` returns (the host clamps the window's `limit` to 1…this). */
export const MAX_USAGE_REQUEST = 500;

/** How many turns without usage `tables/get` lists (it also says how many there are). */
export const MISSING_USAGE_LISTED = 20;
