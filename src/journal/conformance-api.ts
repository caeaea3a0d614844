import type { Journal } from "./types.js";

/**
 * The test functions the journal conformance suite runs on. It is the subset of vitest's (and
 * jest's) API the suite uses, so `oncely/testing/conformance` imports no test runner: pass yours.
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from "vitest";
 * journalConformance({ describe, it, expect, beforeEach, afterEach }, "my store", factory);
 */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void> | void): unknown;
  beforeEach(hook: () => Promise<void> | void): unknown;
  afterEach(hook: () => Promise<void> | void): unknown;
  expect(actual: unknown): ConformanceAssertion;
}

/** The matchers the suite uses, as `expect(actual)` returns them. */
export interface ConformanceAssertion extends Matchers<void> {
  not: Matchers<void>;
  rejects: Matchers<Promise<unknown>>;
}

interface Matchers<R> {
  toBe(expected: unknown): R;
  toEqual(expected: unknown): R;
  toMatchObject(expected: object): R;
  // biome-ignore lint/suspicious/noExplicitAny: any constructor, as the runners' own typing does
  toBeInstanceOf(expected: abstract new (...args: any[]) => unknown): R;
  toBeNull(): R;
  toBeUndefined(): R;
  toHaveLength(expected: number): R;
  toThrow(expected?: string | RegExp): R;
}

/**
 * One journal to test. The factory is called before every test and `cleanup` after it; it may
 * hand out a fresh store each time, or the same store emptied (e.g. one PostgreSQL schema per
 * test file, truncated between tests).
 */
export interface ConformanceSubject {
  journal: Journal;
  /** Open the same store again (after `journal.close()`), as a restarted process would. */
  reopen: () => Promise<Journal>;
  /** A second journal instance on the same store (another connection, pool or process). */
  secondWriter?: () => Promise<Journal>;
  /** Close everything the subject opened and release or empty the store. */
  cleanup: () => Promise<void>;
}
