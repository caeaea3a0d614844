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
    const versions = await this.journal.listStreamVersions("order/");
    const moved = versions.filter(({ stream, version }) => this.known.get(stream)?.version !== version);
    // The moved orders are read together, a bounded number at a time: their catch-up reads reach the journal in
    // the same turn and go out as one batched statement, where one after the other they were one statement each
    // (about thirty a poll at 50 orders/s, which slowed the poll and the demo's client waiting on its counts).
    for (let i = 0; i < moved.length; i += READ_TOGETHER) {
      await Promise.all(moved.slice(i, i + READ_TOGETHER).map(({ stream }) => this.refresh(stream)));
    }
    const out: OrderSummary[] = [];
    for (const { stream } of versions) {
      const order = this.known.get(stream)?.order;
      if (order) out.push(order);
    }
    return out;
  }

  private async refresh(stream: string): Promise<void> {
    // Through the mailbox: a cached order catches up with the journal first (see Runtime.state).
    const read = await this.runtime.state<OrderState>(stream);
    const status = deriveStatus(read.state);
    this.known.set(stream, {
      version: read.version,
      order: status === undefined ? undefined : { orderId: read.state.orderId, status },
    });
  }
}

/** Orders read at once by a listing: enough to fill a batched read, few enough not to flood the actor cache. */
const READ_TOGETHER = 100;
