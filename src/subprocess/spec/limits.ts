/** Limits of the spawn seam, shared by its schema and its fast check. */

/** Node's (and the kernel timer's) largest delay: 2^31 - 1 ms. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647
