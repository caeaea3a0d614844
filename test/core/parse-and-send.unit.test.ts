import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { sequentialIds } from "../../src/core/clock.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { type CounterCommand, counter } from "./fixtures/counter.js";

/** The counter, validating raw input the way an actor does at an HTTP or broker boundary. */
const parsing = {
  ...counter,
  parseCommand(input: unknown): CounterCommand {
    const amount = (input as { amount?: unknown } | null)?.amount;
    if ((input as { type?: unknown } | null)?.type !== "Add" || typeof amount !== "number") {
      throw new InvalidInputError("not an Add command", ["amount: a number"]);
    }
    return { type: "Add", amount };
  },
};

describe("Runtime.parseAndSend", () => {
  it("parses raw input with the actor's parseCommand, then sends the command it returns", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [parsing], ids: sequentialIds("ps") });
    const result = await runtime.parseAndSend("counter/a", { type: "Add", amount: 3, extra: "dropped" });
    expect(result.reply).toBe(3);
    expect((await journal.readStream("counter/a")).map((e) => e.data)).toEqual([{ type: "Added", amount: 3 }]);
  });

  it("refuses input parseCommand rejects, committing nothing", async () => {
    const journal = memoryJournal();
    const runtime = createRuntime({ journal, actors: [parsing], ids: sequentialIds("ps") });
    // Thrown before any promise exists, as `send` throws for a bad address or option.
    expect(() => runtime.parseAndSend("counter/a", { type: "Add", amount: "3" })).toThrow(InvalidInputError);
    expect(await journal.streamVersion("counter/a")).toBe(0);
  });
});
