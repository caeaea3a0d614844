import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { type CliConsumers, registerDeadLetterCommands } from "../../src/cli/dead-letters.js";
import { OPERATOR_ACTIONS } from "../../src/console/audit.js";
import { sequentialIds } from "../../src/core/clock.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { encodeEnvelope } from "../../src/messaging/envelope.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { orderEvent, perEventCount } from "./support/orders.js";

async function journalWithLetter() {
  const journal = memoryJournal();
  await journal.commit({
    deadLetters: [
      {
        id: "view|o1:OrderPlaced",
        consumer: "view",
        messageId: "o1:OrderPlaced",
        payload: { subject: "shop.orders.OrderPlaced", body: encodeEnvelope(orderEvent("o1", 1)), envelope: null },
        error: "boom",
        stack: "Error: boom",
        attempts: 5,
        firstFailedAt: 1000,
        lastFailedAt: 2000,
      },
    ],
    now: 2000,
  });
  return journal;
}

async function run(args: string[], journal: Journal, consumers?: CliConsumers) {
  const out: string[] = [];
  const program = new Command().exitOverride();
  registerDeadLetterCommands(program, async () => journal, {
    consumers,
    out: (text) => out.push(text),
    clock: new SimulatedClock(5000),
    ids: sequentialIds("act"),
  });
  await program.parseAsync(["node", "oncely", ...args]);
  return out.join("");
}

describe("dead-letters CLI", () => {
  it("lists, shows and discards, recording the discard with who did it", async () => {
    const journal = await journalWithLetter();
    expect(await run(["dead-letters", "list"], journal)).toMatch(
      /view\|o1:OrderPlaced\s+open\s+view\s+attempts=5 .* boom\n1 dead letter/,
    );
    expect(JSON.parse(await run(["dead-letters", "show", "view|o1:OrderPlaced"], journal))).toMatchObject({
      error: "boom",
      attempts: 5,
    });
    expect(
      await run(["dead-letters", "discard", "view|o1:OrderPlaced", "--by", "bob", "--note", "test"], journal),
    ).toBe("discarded view|o1:OrderPlaced\n");
    expect(await run(["dead-letters", "list"], journal)).toBe("0 dead letter(s)\n");
    expect(await run(["dead-letters", "list", "--status", "discarded", "--json"], journal)).toMatch(
      /"status":"discarded"/,
    );
    await expect(run(["dead-letters", "discard", "view|o1:OrderPlaced"], journal)).rejects.toThrow(
      /no open dead letter/,
    );
    await expect(run(["dead-letters", "list", "--status", "weird"], journal)).rejects.toThrow(/--status/);
    const actions = (await journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc);
    expect(actions).toEqual([
      expect.objectContaining({
        action: "discard",
        target: "view|o1:OrderPlaced",
        by: "bob",
        note: "test",
        via: "cli",
      }),
    ]);
  });

  it("replays through the application's consumers, and without them says what to do", async () => {
    const journal = await journalWithLetter();
    await expect(run(["dead-letters", "replay", "view|o1:OrderPlaced"], journal)).rejects.toThrow(
      /needs the consumers of your application[\s\S]*runOncelyCli\(\{ consumers:/,
    );
    const consumers: CliConsumers = (j) => [new Consumer({ name: "view", journal: j, handler: perEventCount })];
    const out = await run(["dead-letters", "replay", "view|o1:OrderPlaced", "--by", "ada"], journal, consumers);
    expect(out).toBe("replayed view|o1:OrderPlaced: applied\n");
    expect((await journal.getDeadLetter("view|o1:OrderPlaced"))?.status).toBe("replayed");
    expect((await journal.getDocument(perEventCount.collection, "o1:OrderPlaced"))?.doc).toMatchObject({ count: 1 });
    const actions = (await journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc);
    expect(actions).toEqual([
      expect.objectContaining({ action: "replay", target: "view|o1:OrderPlaced", by: "ada", outcome: "applied" }),
    ]);
  });
});
