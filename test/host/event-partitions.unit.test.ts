import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { sliceOf } from "../../src/core/slices.js";
import { createHost } from "../../src/host/host.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { orderEvent, perEventCount } from "../messaging/support/orders.js";
import { MovableOwnership } from "../support/movable-ownership.js";

describe("createHost with an ownership, on the journal transport", () => {
  it("each host's consumer handles only the events of the slices its ownership holds", async () => {
    const journal = new MemoryJournal();
    const count = journal.sliceCount;
    const slices = Array.from({ length: count }, (_, i) => i);
    const owners = [
      new MovableOwnership(
        count,
        slices.filter((s) => s % 2 === 0),
      ),
      new MovableOwnership(
        count,
        slices.filter((s) => s % 2 === 1),
      ),
    ];
    const hosts = owners.map((ownership, i) =>
      createHost({
        name: `w${i}`,
        journal,
        actors: [],
        transport: "journal",
        relay: false,
        ownership,
        logger: silentLogger,
        consumers: [{ name: "count", handler: perEventCount, subjects: ["shop.>"] }],
      }),
    );
    for (const host of hosts) await host.start();
    const orders = Array.from({ length: 20 }, (_, i) => `h${i}`);
    const publisher = new JournalTransport({ journal });
    for (const order of orders) await publisher.publish(orderEvent(order, 1), "shop.orders.OrderPlaced");
    const mine = (i: number) => orders.filter((o) => sliceOf(o, count) % 2 === i).length;
    for (let t = 0; t < 400; t++) {
      if (hosts.every((host, i) => host.consumers[0]?.stats.applied === mine(i))) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hosts.map((host) => host.consumers[0]?.stats.applied)).toEqual([mine(0), mine(1)]);
    expect(hosts.map((host) => host.consumers[0]?.stats.duplicates)).toEqual([0, 0]);
    for (const host of hosts) await host.stop();
    await publisher.close();
  });
});
