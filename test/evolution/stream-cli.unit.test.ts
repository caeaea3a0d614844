import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerJournalCommands } from "../../src/cli/journal-commands.js";
import { createRuntime } from "../../src/core/runtime.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { orderV1 } from "./fixtures/orders-v1.js";
import { orderV2 } from "./fixtures/orders-v2.js";

async function streamLines(journal: ReturnType<typeof memoryJournal>, args: string[], actors = [orderV2]) {
  const lines: string[] = [];
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerJournalCommands(program, async () => journal, { out: (t) => lines.push(t), actors });
  await program.parseAsync(["node", "oncely", "stream", ...args]);
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("oncely stream across versions", () => {
  it("shows events as today's code reads them, or as stored with --stored", async () => {
    const journal = memoryJournal();
    await createRuntime({ journal, actors: [orderV1] }).send("order/o1", {
      type: "PlaceOrder",
      customerEmail: "ann@example.com",
      amount: 9,
    });
    const [placed] = await streamLines(journal, ["order/o1", "--json"]);
    expect(placed).toMatchObject({
      type: "OrderPlaced",
      schemaVersion: 2,
      storedVersion: 1,
      data: { email: "ann@example.com", channel: "web", risk: "waived" },
    });
    const [stored] = await streamLines(journal, ["order/o1", "--json", "--stored"]);
    expect(stored).toMatchObject({ schemaVersion: 1, data: { customerEmail: "ann@example.com" } });
    expect(stored).not.toHaveProperty("storedVersion");
  });

  it("loads the definitions from --actors, and lists an event it cannot read as stored, with the reason", async () => {
    const journal = memoryJournal();
    await createRuntime({ journal, actors: [orderV2] }).send("order/n1", {
      type: "PlaceOrder",
      email: "bo@example.com",
      amount: 3,
      channel: "app",
    });
    const module = fileURLToPath(new URL("./fixtures/orders-v1.ts", import.meta.url));
    const [placed, risk] = await streamLines(journal, ["order/n1", "--json", "--actors", module], []);
    expect(placed).toMatchObject({ schemaVersion: 2, data: { email: "bo@example.com" } });
    expect(placed?.unreadable).toBe(
      "actor order/n1: OrderPlaced is at version 2, this code knows up to version 1; leaving it to a newer worker",
    );
    expect(risk).toMatchObject({ type: "RiskCheckRequested", schemaVersion: 1 });
  });
});
