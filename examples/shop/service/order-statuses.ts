import type { Journal, Runtime } from "oncely";
import type { OrderState } from "../ordering/state.js";
import { deriveStatus, type OrderStatus } from "../ordering/status.js";

export interface OrderSummary {
  orderId: string;
  status: OrderStatus;
}

/**
 * Every order's derived status, each kept with the stream version it was derived at. A status is a
 * pure function of the order's events, so an order whose version has not moved is not read again:
 * a listing reads all the orders' versions in one journal read (`listStreamVersions`) and rebuilds
 * only the orders some process appended to since. Before it, `GET /admin/stats` read every order
 * through its mailbox on each call: with 2,000 orders the demo's progress poll took a tenth of the
 * worker's time, and its back-off left the client waiting on stale counts.
 */
export class OrderStatuses {
  private readonly known = new Map<string, { version: number; order: OrderSummary | undefined }>();

  constructor(
    private readonly journal: Journal,
    private readonly runtime: Runtime,
  ) {}

  /** Every order with a status (an order with no facts has none), oldest stream name first. */
  async list(): Promise<OrderSummary[]> {
    const out: OrderSummary[] = [];
    for (const { stream, version } of await this.journal.listStreamVersions("order/")) {
      let entry = this.known.get(stream);
      if (entry?.version !== version) {
        // Through the mailbox: a cached order catches up with the journal first (see Runtime.state).
        const read = await this.runtime.state<OrderState>(stream);
        const status = deriveStatus(read.state);
        entry = {
          version: read.version,
          order: status === undefined ? undefined : { orderId: read.state.orderId, status },
        };
        this.known.set(stream, entry);
      }
      if (entry.order) out.push(entry.order);
    }
    return out;
  }
}
