import type pg from "pg";
import { Pg } from "./driver.js";
import { quoteIdent } from "./tables.js";

/**
 * One dedicated connection that LISTENs on one of the schema's channels and calls `wake` on each
 * notification, except those sent by a backend `isOwn` names: the journal woke its own listeners
 * when its commit returned, with what it added, so its own NOTIFY coming back adds nothing. If the
 * connection drops (server restart, pg_terminate_backend, network), it reconnects with a capped
 * backoff and calls `wake` once: notifications sent while it was away are lost, so listeners must
 * look at the outbox again.
 */
export class OutboxListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private delayMs = 100;
  private connectedOnce = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    /** Called with the notification's payload; with none after a reconnect (what was missed is not known). */
    private readonly wake: (payload?: string) => void,
    private readonly isOwn: (backendPid: number) => boolean = () => false,
  ) {}

  start(): void {
    if (!this.client && !this.timer && !this.stopped) void this.open();
  }

  /** Resolves once the LISTEN is active (again). */
  listening(): Promise<void> {
    if (this.client && this.delayMs === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private async open(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    const client = new Pg.Client(this.config);
    this.client = client;
    client.on("notification", (message) => {
      if (message.channel === this.channel && !this.isOwn(message.processId)) this.wake(message.payload);
    });
    client.on("error", () => this.retry(client));
    client.on("end", () => this.retry(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.channel)}`);
    } catch {
      this.retry(client);
      return;
    }
    if (this.client !== client) return;
    this.delayMs = 0;
    if (this.connectedOnce) this.wake();
    this.connectedOnce = true;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private retry(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    if (this.stopped) return;
    this.delayMs = Math.min(Math.max(this.delayMs * 2, 100), 5_000);
    this.timer = setTimeout(() => void this.open(), this.delayMs);
    // A listener alone must not keep the process alive.
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    for (const resolve of this.waiters.splice(0)) resolve();
    await client?.end().catch(() => {});
  }
}
