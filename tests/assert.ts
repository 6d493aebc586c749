/**
 * Test assertions. JSR (@std/assert) is not reachable from our machines, so
 * tests use Node's strict assertions through Deno's node compatibility, under
 * the names @std/assert uses.
 *
 * @module
 */
import assertNode from "node:assert/strict";

// A message is passed on only when given: Node's typings overload the
// message parameter differently across @types/node versions.
export function assert(value: unknown, message?: string): asserts value {
  if (message === undefined) assertNode.ok(value);
  else assertNode.ok(value, message);
}
export const assertEquals = <T>(
  actual: T,
  expected: T,
  message?: string,
): void =>
  message === undefined
    ? assertNode.deepStrictEqual(actual, expected)
    : assertNode.deepStrictEqual(actual, expected, message);
export const assertNotEquals = <T>(
  actual: T,
  expected: T,
  message?: string,
): void =>
  message === undefined
    ? assertNode.notDeepStrictEqual(actual, expected)
    : assertNode.notDeepStrictEqual(actual, expected, message);
export const assertMatch = (
  actual: string,
  re: RegExp,
  message?: string,
): void =>
  message === undefined ? assertNode.match(actual, re) : assertNode.match(actual, re, message);
export const assertStringIncludes = (
  actual: string,
  expected: string,
  message?: string,
): void =>
  assertNode.ok(
    actual.includes(expected),
    message ??
      `expected ${JSON.stringify(actual)} to include ${JSON.stringify(expected)}`,
  );
export async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  cls?: new (...args: any[]) => E,
  includes?: string,
): Promise<E> {
  try {
    await fn();
  } catch (err) {
    if (cls && !(err instanceof cls)) {
      throw new Error(`expected ${cls.name}, got ${err}`);
    }
    if (includes && !String((err as Error).message).includes(includes)) {
      throw new Error(
        `expected message to include ${includes}, got ${(err as Error).message}`,
      );
    }
    return err as E;
  }
  throw new Error("expected the promise to reject");
}
export function assertThrows<E extends Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  cls?: new (...args: any[]) => E,
  includes?: string,
): E {
  try {
    fn();
  } catch (err) {
    if (cls && !(err instanceof cls)) {
      throw new Error(`expected ${cls.name}, got ${err}`);
    }
    if (includes && !String((err as Error).message).includes(includes)) {
      throw new Error(
        `expected message to include ${includes}, got ${(err as Error).message}`,
      );
    }
    return err as E;
  }
  throw new Error("expected the function to throw");
}
