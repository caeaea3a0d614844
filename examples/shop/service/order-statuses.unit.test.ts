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

  it("reads the moved orders together, not one after the other", async () => {
    const journal = memoryJournal();
    const runtime = new Runtime({ journal, actors: [orderActor] });
    await runtime.send("order/a", place);
    await runtime.send("order/b", place);
    const statuses = new OrderStatuses(journal, runtime);
    const read = runtime.state.bind(runtime);
    let open = 0;
    let most = 0;
    vi.spyOn(runtime, "state").mockImplementation(async (address: string) => {
      open++;
      most = Math.max(most, open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      open--;
      return read(address);
    });
    expect((await statuses.list()).map((o) => o.orderId)).toEqual(["a", "b"]);
    expect(most).toBe(2);
  });
});
