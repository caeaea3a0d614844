import type pg from "pg";
import { describe, expect, it } from "vitest";
import { MissingDriverError, requireDriver } from "../../src/core/require-driver.js";

describe("requireDriver", () => {
  it("names the missing driver, the subpath that needs it and the command that installs it", () => {
    const error = (() => {
      try {
        requireDriver("oncely-test-driver-that-does-not-exist", "oncely/postgres");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MissingDriverError);
    expect((error as Error).message).toBe(
      'oncely/postgres needs the package "oncely-test-driver-that-does-not-exist", which is not installed: npm install oncely-test-driver-that-does-not-exist',
    );
    expect((error as MissingDriverError).retryable).toBe(false);
    expect((error as MissingDriverError).driver).toBe("oncely-test-driver-that-does-not-exist");
  });

  it("returns an installed driver's module", () => {
    const driver = requireDriver<typeof pg>("pg", "oncely/postgres");
    expect(typeof driver.Pool).toBe("function");
  });

  it("rethrows a failure inside an installed driver as it is", () => {
    // Resolved from src/core, where requireDriver lives.
    const load = () => requireDriver("../../test/core/fixtures/driver-with-missing-dependency.cjs", "oncely/sqlite");
    expect(load).toThrow(/oncely-test-dependency-that-does-not-exist/);
    expect(load).not.toThrow(MissingDriverError);
  });
});
