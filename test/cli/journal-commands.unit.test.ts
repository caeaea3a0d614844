import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerJournalCommands } from "../../src/cli/journal-commands.js";
import { InvalidInputError } from "../../src/core/errors.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { SimulatedClock } from "../../src/testing/clock.js";

const DAY = 86_400_000;

function cli(journal = memoryJournal(), clock = new SimulatedClock(100 * DAY)) {
  const lines: string[] = [];
  return {
    journal,
    lines,
    run: (...args: string[]) => {
      const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      registerJournalCommands(program, async () => journal, { out: (t) => lines.push(t), clock });
      return program.parseAsync(["node", "oncely", ...args]);
    },
  };
}

describe("journal commands", () => {
  it("inbox-prune removes only records older than the window", async () => {
    const c = cli();
    await c.journal.commit({ inbox: { consumer: "order/1", messageId: "old", reply: null }, now: 90 * DAY });
    await c.journal.commit({ inbox: { consumer: "order/1", messageId: "young", reply: null }, now: 95 * DAY });
    await c.run("inbox-prune", "--older-than-days", "7");
    expect(c.lines).toEqual(["removed 1 inbox records older than 7 days"]);
    expect(await c.journal.getInbox("order/1", "old")).toBeUndefined();
    expect(await c.journal.getInbox("order/1", "young")).toBeDefined();
  });

  it("refuses a window that is not a positive number, naming the flag", async () => {
    await expect(cli().run("inbox-prune", "--older-than-days", "soon")).rejects.toThrow(/--older-than-days "soon"/);
    await expect(cli().run("inbox-prune", "--older-than-days", "0")).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("stream prints an actor's events and refuses an empty or malformed address", async () => {
    const c = cli();
    await c.journal.commit({
      stream: "order/1",
      expectedVersion: 0,
      events: [{ eventId: "e1", type: "OrderPlaced", data: { type: "OrderPlaced", amount: 5 } }],
      now: 0,
    });
    await c.run("stream", "order/1", "--json");
    expect(JSON.parse(c.lines[0] ?? "")).toMatchObject({ stream: "order/1", version: 1, type: "OrderPlaced" });
    await expect(c.run("stream", "order/2")).rejects.toThrow(/has no events/);
    await expect(c.run("stream", "noslash")).rejects.toThrow(/type\/id/);
  });
});
