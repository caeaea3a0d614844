import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { parseDuration } from "../../src/cli/duration.js";
import { registerJournalCommands } from "../../src/cli/journal-commands.js";
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

  it("outbox-prune removes only done rows older than the window", async () => {
    const c = cli();
    const row = (id: string) => ({
      id,
      category: "effect" as const,
      kind: "k",
      stream: "order/1",
      payload: {},
      notBefore: 0,
    });
    await c.journal.commit({ outbox: [row("old"), row("young"), row("open")], now: 80 * DAY });
    await c.journal.commit({ outboxDone: [{ id: "old", outcome: "completed" }], now: 90 * DAY });
    await c.journal.commit({ outboxDone: [{ id: "young", outcome: "completed" }], now: 95 * DAY });
    await c.run("outbox-prune", "--older-than", "7d");
    expect(c.lines).toEqual(["removed 1 done outbox rows older than 7d"]);
    expect((await c.journal.listOutbox({})).map((r) => r.id)).toEqual(["young", "open"]);
    await c.run("outbox-prune", "--older-than", "36h", "--redelivery-window", "1d");
    expect(c.lines[1]).toBe("removed 1 done outbox rows older than 36h");
    expect((await c.journal.listOutbox({})).map((r) => r.id)).toEqual(["open"]);
  });

  it("outbox-prune refuses a duration without a unit, and a window shorter than the redelivery window", async () => {
    await expect(cli().run("outbox-prune", "--older-than", "7")).rejects.toThrow(
      /--older-than "7" must be a positive duration/,
    );
    await expect(cli().run("outbox-prune", "--older-than", "-1d")).rejects.toBeInstanceOf(InvalidInputError);
    await expect(cli().run("outbox-prune", "--redelivery-window", "soon")).rejects.toThrow(
      /--redelivery-window "soon"/,
    );
    await expect(cli().run("outbox-prune", "--older-than", "1d")).rejects.toThrow(/shorter than the redelivery window/);
  });

  it("parses durations with their unit", () => {
    expect(["500ms", "30s", "90m", "36h", "7d", "2w", "1.5h"].map((v) => parseDuration("--x", v))).toEqual([
      500,
      30_000,
      5_400_000,
      129_600_000,
      7 * DAY,
      14 * DAY,
      5_400_000,
    ]);
    for (const bad of ["", "7", "0d", "d", "7 days", "1e3s", "7D"]) {
      expect(() => parseDuration("--x", bad)).toThrow(InvalidInputError);
    }
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
