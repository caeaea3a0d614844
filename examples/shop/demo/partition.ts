import type { LinkName, PartitionLab, WorkerNetwork } from "./netns.js";
import type { TcpForwarder } from "./tcp-forwarder.js";

/**
 * The demo's partitions: which worker loses which service when, for how long. Times count from the
 * moment the client starts placing orders; every cut is healed before the audit.
 */

export interface PartitionCut {
  /** Index of the worker (0-based) whose link is cut. */
  worker: number;
  link: Extract<LinkName, "postgres" | "nats">;
  atMs: number;
  forMs: number;
}

/**
 * The default: the last worker (not worker 0, which the warehouse calls back) loses PostgreSQL for
 * 6 s (twice the demo's 3 s effect lease: its claims expire and another worker takes them over while
 * it still holds them in memory), then, 3 s after it is healed, NATS for 6 s (with NATS).
 */
export function defaultPartitionPlan(workers: number, nats: boolean): PartitionCut[] {
  const worker = workers - 1;
  const cuts: PartitionCut[] = [{ worker, link: "postgres", atMs: 2_000, forMs: 6_000 }];
  if (nats) cuts.push({ worker, link: "nats", atMs: 11_000, forMs: 6_000 });
  return cuts;
}

/** What happened to one cut, for the report (times from the start of placing). */
export interface PartitionRecord extends PartitionCut {
  /** When the link went down and came up again (ms from the start of placing). */
  cutAtMs: number;
  healedAtMs: number;
  /** Orders placed and ended at the cut and at the heal. */
  atCut: { placed: number; terminal: number };
  atHeal: { placed: number; terminal: number };
  /**
   * Bytes that crossed the link from the worker's side while it was cut (the kernel's count on the
   * host end, not the forwarder's, which may still be reading what arrived before the cut): 0 for a
   * real cut.
   */
  bytesWhileCut: number;
  /** Packets the worker's end of the link dropped while cut: what it sent that vanished. */
  packetsDroppedWhileCut: number;
  /**
   * Bytes the service answered on the worker's connections while cut, which the link could not carry
   * (they wait in the host's socket buffers). A worker whose every connection awaited an answer at
   * the cut sends nothing more (no retransmit, no drop on its side), and shows up here instead.
   */
  answersHeldWhileCut: number;
  /** Bytes delivered after the heal until the end of the run: above 0 when the worker came back. */
  bytesAfterHeal: number;
  /** The forwarder's total at the heal (bytesAfterHeal counts from it). */
  bytesAtHeal: number;
  /** TCP segments the worker's namespace retransmitted while cut: above 0 when it tried to talk. */
  retransmitsWhileCut: number;
}

export interface PartitionedWorkers {
  lab: PartitionLab;
  /** Per worker, the forwarders its services are reached through. */
  forwarders: { postgres: TcpForwarder; nats: TcpForwarder | undefined }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** A `host:port` URL's target; the port defaults to `defaultPort`. */
export function urlTarget(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, "") || "127.0.0.1";
  return { host, port: parsed.port === "" ? defaultPort : Number(parsed.port) };
}

/** `url` with its host and port replaced by the forwarder's. */
export function throughForwarder(url: string, forwarder: { host: string; port: number }): string {
  const parsed = new URL(url);
  parsed.hostname = forwarder.host;
  parsed.port = String(forwarder.port);
  return parsed.toString();
}

/**
 * Runs `plan` against the workers' networks: cut, wait, heal, in order of `atMs` (cuts may overlap).
 * Resolves when every cut is healed; `onEvent` hears each cut and heal as it happens. `progress`
 * reads the demo's counters at that moment.
 */
export async function runPartitions(
  plan: readonly PartitionCut[],
  workers: PartitionedWorkers,
  startedAt: number,
  progress: () => { placed: number; terminal: number },
  onEvent: (line: string) => void,
): Promise<PartitionRecord[]> {
  const records: PartitionRecord[] = [];
  await Promise.all(
    plan.map(async (cut) => {
      const network = workers.lab.networks[cut.worker] as WorkerNetwork | undefined;
      const forwarder = workers.forwarders[cut.worker]?.[cut.link];
      if (!network || !forwarder) throw new Error(`partition plan: worker ${cut.worker} has no ${cut.link} link`);
      await sleep(startedAt + cut.atMs - Date.now());
      const retransmitsBefore = await network.tcpRetransmits();
      await network.cut(cut.link);
      const countersAtCut = await network.linkCounters(cut.link);
      const answeredAtCut = forwarder.stats.bytesOut;
      const cutAtMs = Date.now() - startedAt;
      const atCut = progress();
      onEvent(
        `${(cutAtMs / 1000).toFixed(1)} s: worker ${cut.worker + 1} cut off from ${cut.link} (${atCut.placed} placed, ${atCut.terminal} ended)`,
      );
      await sleep(startedAt + cut.atMs + cut.forMs - Date.now());
      const countersAtHeal = await network.linkCounters(cut.link);
      const bytesAtHeal = forwarder.stats.bytesIn;
      const retransmitsWhileCut = (await network.tcpRetransmits()) - retransmitsBefore;
      await network.heal(cut.link);
      const healedAtMs = Date.now() - startedAt;
      const atHeal = progress();
      onEvent(
        `${(healedAtMs / 1000).toFixed(1)} s: worker ${cut.worker + 1} healed from ${cut.link} (${atHeal.placed} placed, ${atHeal.terminal} ended; ${retransmitsWhileCut} TCP retransmits in its namespace and ${countersAtHeal.namespaceDroppedPackets - countersAtCut.namespaceDroppedPackets} packets dropped on the link while cut)`,
      );
      const record: PartitionRecord = {
        ...cut,
        cutAtMs,
        healedAtMs,
        atCut,
        atHeal,
        bytesWhileCut: countersAtHeal.hostReceivedBytes - countersAtCut.hostReceivedBytes,
        answersHeldWhileCut: forwarder.stats.bytesOut - answeredAtCut,
        packetsDroppedWhileCut: countersAtHeal.namespaceDroppedPackets - countersAtCut.namespaceDroppedPackets,
        // Filled in at the end of the run (`settlePartitionRecords`).
        bytesAfterHeal: 0,
        bytesAtHeal,
        retransmitsWhileCut,
      };
      records.push(record);
    }),
  );
  return records.sort((a, b) => a.cutAtMs - b.cutAtMs);
}

/** At the end of the run: how much each cut worker sent to the service after its heal. */
export function settlePartitionRecords(records: PartitionRecord[], workers: PartitionedWorkers): PartitionRecord[] {
  return records.map((record) => {
    const forwarder = workers.forwarders[record.worker]?.[record.link];
    return { ...record, bytesAfterHeal: (forwarder?.stats.bytesIn ?? 0) - record.bytesAtHeal };
  });
}
