import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { defaultLogLevel, resolveLogger, silentLogger } from "../../src/core/logger.js";

describe("the default log level", () => {
  it("is warn, or what ONCELY_LOG_LEVEL says", () => {
    expect(defaultLogLevel({})).toBe("warn");
    expect(defaultLogLevel({ ONCELY_LOG_LEVEL: "" })).toBe("warn");
    expect(defaultLogLevel({ ONCELY_LOG_LEVEL: "silent" })).toBe("silent");
    expect(defaultLogLevel({ ONCELY_LOG_LEVEL: "Debug" })).toBe("debug");
  });

  it("refuses a level pino does not have, naming the variable", () => {
    expect(() => defaultLogLevel({ ONCELY_LOG_LEVEL: "loud" })).toThrow(InvalidInputError);
    expect(() => defaultLogLevel({ ONCELY_LOG_LEVEL: "loud" })).toThrow(/ONCELY_LOG_LEVEL must be one of .*"loud"/);
  });
});

it("a logger given is the logger used", () => {
  expect(resolveLogger(silentLogger)).toBe(silentLogger);
  expect(resolveLogger(undefined)).toBe(resolveLogger(undefined)); // one default per process
});
