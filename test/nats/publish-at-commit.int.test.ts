import { describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory.js";
import { runHost } from "../host/fixtures/publishing-host.js";
import { probeNats } from "../support/services.js";
import { natsFixture } from "./support/nats.js";

const nats = await probeNats();

describe.skipIf(!nats.available)(`a host on NATS JetStream keeps the outbox and the relay ${nats.reason}`, () => {
  it("every event is an outbox row the relay publishes and marks; none is appended at commit", async () => {
    const fx = await natsFixture("atcommit");
    try {
      const journal = new MemoryJournal();
      const result = await runHost(journal, fx.transport, fx.prefix);
      expect(result.rows).toHaveLength(3);
      expect(result.rows.every((row) => row.status === "done" && row.outcome === "published")).toBe(true);
      expect(result.logged).toBe(0);
      expect(result.relay).toMatchObject({ published: 3, appended: 0, handedOver: 3 });
      expect(result.counts).toEqual([1, 1, 1]);
    } finally {
      await fx.cleanup();
    }
  });
});
