/**
 * Pagination shared by every list function: `limit` defaults to 50 and is
 * capped at 500; `after` is the cursor (an id or version) returned as `next`
 * by the previous page. Lists are newest first.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";

/** Page size when `limit` is not given. */
export const DEFAULT_PAGE_LIMIT = 50;
/** Largest accepted page size; larger values are capped to it. */
export const MAX_PAGE_LIMIT = 500;

/** One page of results. */
export interface Page<T> {
  /** The items, newest first. */
  items: T[];
  /** Cursor for the next page (pass as `after`), or null at the end. */
  next: string | null;
}

/**
 * Validates a page size: undefined gives the default, values above the
 * maximum are capped, anything that is not a positive integer is a 400.
 *
 * @param limit the requested size
 * @returns the size to use
 *
 * @example
 * ```ts
 * import { pageLimit } from "./page.ts";
 * if (pageLimit(undefined) !== 50 || pageLimit(9999) !== 500) throw new Error();
 * ```
 */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new InvalidRequestError(`Cannot use limit ${limit}: it must be a positive integer`);
  }
  return Math.min(limit, MAX_PAGE_LIMIT);
}
