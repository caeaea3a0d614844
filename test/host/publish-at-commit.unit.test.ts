import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { Relay } from "../../src/messaging/relay.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { producer } from "../messaging/support/orders.js";
import { runHost } from "./fixtures/publishing-host.js";

describe("a host whose relay publishes to its own journal's published log", () => {
  it('transport "journal": each commit appends its events; no outbox row, the consumer handed over', async () => {
    const result = await runHost(new MemoryJournal(), "journal");
    expect(result.rows).toEqual([]);
    expect(result.logged).toBe(3);
    expect(result.counts).toEqual([1, 1, 1]);
    expect(result.relay).toMatchObject({ published: 3, appended: 3, handedOver: 3 });
    expect(result.consumer).toMatchObject({ applied: 3, handedOver: 3, copiesSettled: 3, duplicates: 0 });
  });

  it("a JournalTransport given on the same journal: the same", async () => {
    const journal = new MemoryJournal();
    const transport = new JournalTransport({ journal, pollMs: 20 });
    try {
      const result = await runHost(journal, transport);
      expect(result.rows).toEqual([]);
      expect(result.logged).toBe(3);
      expect(result.relay).toMatchObject({ appended: 3 });
    } finally {
      await transport.close();
    }
  });
});

describe("a host whose relay publishes elsewhere keeps the outbox and the relay", () => {
  it("a JournalTransport on another journal: rows marked published by the relay, the entries in that journal", async () => {
    const journal = new MemoryJournal();
    const other = new MemoryJournal();
    const transport = new JournalTransport({ journal: other, pollMs: 20 });
    try {
      const result = await runHost(journal, transport);
      expect(result.rows.map((row) => [row.status, row.outcome])).toEqual([
        ["done", "published"],
        ["done", "published"],
        ["done", "published"],
      ]);
      expect(result.logged).toBe(0);
      expect((await other.readPublished(0)).length).toBe(3);
      expect(result.relay).toMatchObject({ published: 3, appended: 0, handedOver: 3 });
      expect(result.counts).toEqual([1, 1, 1]);
    } finally {
      await transport.close();
    }
  });

  it("another transport (in-process): rows marked published by the relay", async () => {
    const transport = new InProcessTransport();
    try {
      const result = await runHost(new MemoryJournal(), transport);
      expect(result.rows.every((row) => row.status === "done" && row.outcome === "published")).toBe(true);
      expect(result.rows).toHaveLength(3);
      expect(result.relay).toMatchObject({ published: 3, appended: 0 });
      expect(result.counts).toEqual([1, 1, 1]);
    } finally {
      await transport.close();
    }
  });
});

describe("Relay.handOverTo atCommit", () => {
  it("is refused for a transport that is not the journal's log: its events would land in the wrong log", async () => {
    const journal = new MemoryJournal();
    const transport = new InProcessTransport();
    const relay = new Relay({ journal, transport });
    const runtime = createRuntime({ journal, actors: [producer] });
    expect(() => relay.handOverTo(runtime, [], { atCommit: true })).toThrow(/atCommit needs a JournalTransport/);
    await transport.close();
  });
});
