import { describe, expect, it, vi } from "vitest";
import { CheckpointConflictError, MessageConflictError } from "../../src/base/errors.js";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { orderEvent, orderFacts } from "./support/orders.js";

// A facts-mode projection writes without reading its inbox first: the commit's inbox row refuses a
// message handled before, and only then is the held row read (duplicate or conflict).

describe("a facts-mode projection's commit", () => {
  it("reads the inbox only when the commit finds the message handled before", async () => {
    const journal = memoryJournal();
    const inboxReads = vi.spyOn(journal, "getInbox");
    const consumer = new Consumer({ name: "facts", journal, handler: orderFacts, metrics: messagingMetrics() });
    const shipped = orderEvent("o1", 4);
    expect((await consumer.handle(orderEvent("o1", 1))).outcome).toBe("applied");
    expect((await consumer.handle(shipped)).outcome).toBe("applied");
    expect(inboxReads).not.toHaveBeenCalled();

    expect((await consumer.handle(shipped)).outcome).toBe("duplicate");
    expect(inboxReads).toHaveBeenCalledTimes(1);
    await expect(consumer.handle({ ...shipped, payload: { orderId: "o1", amount: 43 } })).rejects.toBeInstanceOf(
      MessageConflictError,
    );
    // Neither the duplicate nor the conflicting copy touched the document.
    expect((await journal.getDocument(orderFacts.collection, "o1"))?.doc).toMatchObject({
      applied: 2,
      placed: true,
      shipping: "Shipped",
    });
  });

  it("counts a backwards fact once: not for a duplicate, nor again for an attempt retried after a conflict", async () => {
    const journal = memoryJournal();
    const consumer = new Consumer({ name: "facts", journal, handler: orderFacts, metrics: messagingMetrics() });
    await consumer.handle(orderEvent("o1", 4)); // shipped
    const ready = orderEvent("o1", 3); // behind shipped: ignored and counted
    expect((await consumer.handle(ready)).outcome).toBe("applied");
    expect(consumer.stats.backwards).toBe(1);
    expect((await consumer.handle(ready)).outcome).toBe("duplicate");
    expect(consumer.stats.backwards).toBe(1);

    // Another instance moved the document between this one's read and its commit: the attempt is
    // refused and made again; the backwards move it found is counted once, when a commit lands.
    await consumer.handle(orderEvent("o2", 4));
    const commit = vi.spyOn(journal, "commit");
    commit.mockRejectedValueOnce(new CheckpointConflictError("facts#doc", "order-facts/o2", 1, 2));
    expect((await consumer.handle(orderEvent("o2", 3))).outcome).toBe("applied");
    expect(commit).toHaveBeenCalledTimes(2);
    expect(consumer.stats.backwards).toBe(2);
  });
});
