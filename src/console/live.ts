import type { ConsoleQueries } from "../journal/console-queries.js";
import type { JournalAdmin, OutboxStore, PublishedLog } from "../journal/types.js";

/** What the live feed reads: the pages' fingerprints and the wake-ups. */
type LiveJournal = Pick<ConsoleQueries, "pageOutbox" | "pageDeadLetters" | "consumerPositions"> &
  Pick<JournalAdmin, "summarize"> &
  Pick<OutboxStore, "onOutbox"> &
  Pick<PublishedLog, "onPublished">;

/** What a page shows, as the live feed names it: a page reloads when its topic changed. */
export type LiveTopic = "effects" | "reconciliation" | "dead-letters" | "parked" | "lag";

/**
 * One small read per topic, cheap on any journal size: the open rows' counts (`summarize`), the
 * newest row of each list (one-row pages), and the consumers' positions. A change in any of them
 * says the topic's page may show something else now.
 */
async function fingerprints(journal: LiveJournal): Promise<Record<LiveTopic, string>> {
  const summary = await journal.summarize();
  const newestEffect = (await journal.pageOutbox({ category: "effect", limit: 1 })).items[0];
  const newestLetter = (await journal.pageDeadLetters({ limit: 1 })).items[0];
  const positions = await journal.consumerPositions();
  const effects = summary.outbox.filter((g) => g.category === "effect");
  return {
    effects: JSON.stringify([effects, newestEffect?.id, newestEffect?.updatedAt]),
    reconciliation: JSON.stringify(effects.filter((g) => g.status === "reconcile")),
    "dead-letters": JSON.stringify([summary.deadLetters, newestLetter?.id, newestLetter?.status]),
    parked: JSON.stringify(summary.parked),
    lag: JSON.stringify(positions),
  };
}

/**
 * The console's live updates, shared by every open page: while at least one page listens, the
 * journal is looked at every `intervalMs` (and soon after its own outbox and published-log
 * signals), one set of reads whatever the number of pages, and each listener is sent a
 * server-sent event `change` naming the topics that changed. A failed look is retried at the
 * next tick and reported to `onError` (the page keeps what it shows).
 */
export class LiveFeed {
  private readonly listeners = new Set<(chunk: string) => void>();
  private last: Record<LiveTopic, string> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];
  private looking = false;
  private again = false;

  constructor(
    private readonly journal: LiveJournal,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Start sending `send` the feed's events; returns the function that stops it. */
  listen(send: (chunk: string) => void): () => void {
    this.listeners.add(send);
    if (this.listeners.size === 1) this.start();
    return () => {
      this.listeners.delete(send);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Stop every listener (the server is closing). */
  close(): void {
    this.listeners.clear();
    this.stop();
  }

  private start(): void {
    this.timer = setInterval(() => void this.look(), this.intervalMs);
    // A comment line now and then keeps proxies from closing a quiet stream.
    this.heartbeat = setInterval(() => this.broadcast(": ping\n\n"), 15_000);
    const soon = () => void this.look();
    this.unsubscribe = [this.journal.onOutbox(soon), this.journal.onPublished(soon)];
    void this.look();
  }

  private stop(): void {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    this.last = undefined;
  }

  private async look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = true;
    try {
      do {
        this.again = false;
        const now = await fingerprints(this.journal);
        const before = this.last;
        this.last = now;
        if (!before) continue;
        const changed = (Object.keys(now) as LiveTopic[]).filter((t) => now[t] !== before[t]);
        if (changed.length > 0 && this.listeners.size > 0)
          this.broadcast(`event: change\ndata: ${JSON.stringify({ topics: changed })}\n\n`);
      } while (this.again);
    } catch (error) {
      this.onError(error);
    } finally {
      this.looking = false;
    }
  }

  private broadcast(chunk: string): void {
    for (const send of this.listeners) send(chunk);
  }
}
