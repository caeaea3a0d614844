import { Runtime } from "oncely";
import { memoryJournal } from "oncely/testing";
import { describe, expect, it, vi } from "vitest";
import { orderActor } from "../ordering/actor.js";
import { OrderStatuses } from "./order-statuses.js";

const place = {
  type: "PlaceOrder" as const,
  customerEmail: "ada@example.com",
  currency: "EUR",
  lines: [{ sku: "book", quantity: 1, unitPrice: 1250 }],
};
const paid = (orderId: string) => ({
  type: "RecordPaymentProcessed" as const,
  eventId: `payment:${orderId}:processed`,
  paymentId: `pay_${orderId}`,
});

describe("OrderStatuses", () => {
  it("reads again only the orders whose version moved, whichever process appended", async () => {
    const journal = memoryJournal();
    // Two runtimes on one journal: two processes serving the same orders.
    const here = new Runtime({ journal, actors: [orderActor] });
    const elsewhere = new Runtime({ journal, actors: [orderActor] });
    await here.send("order/a", place);
    await here.send("order/b", place);
    const statuses = new OrderStatuses(journal, here);
    const reads = vi.spyOn(here, "state");

    expect(await statuses.list()).toEqual([
      { orderId: "a", status: "placed" },
      { orderId: "b", status: "placed" },
    ]);
    expect(reads).toHaveBeenCalledTimes(2);

    // Nothing appended: the listing reads versions only.
    reads.mockClear();
    expect((await statuses.list()).map((o) => o.status)).toEqual(["placed", "placed"]);
    expect(reads).not.toHaveBeenCalled();

    // Another process moves order b (this runtime's cached b is now behind): b alone is read, and
    // its status is the journal's, not the stale cache's.
    await elsewhere.send("order/b", paid("b"));
    reads.mockClear();
    expect(await statuses.list()).toEqual([
      { orderId: "a", status: "placed" },
      { orderId: "b", status: "paid" },
    ]);
    expect(reads.mock.calls).toEqual([["order/b"]]);

    // A new order appears in the next listing.
    await elsewhere.send("order/c", place);
    reads.mockClear();
    expect((await statuses.list()).map((o) => o.orderId)).toEqual(["a", "b", "c"]);
    expect(reads.mock.calls).toEqual([["order/c"]]);
  });
});
