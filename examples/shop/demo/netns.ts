import { execFile, execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { startTcpForwarder, type TcpForwarder } from "./tcp-forwarder.js";

/**
 * Workers on network namespaces of their own, so a test can cut one off from PostgreSQL, and
 * separately from NATS, while it runs (iproute2: `ip netns`, veth; root only).
 *
 * Each worker's namespace has three veth links to the host, each a /30 in 10.250.B.0/24 (B chosen
 * per lab, claimed by creating the first interface, whose name carries B): `postgres` and `nats`,
 * on whose host ends a TCP forwarder pipes to the service on the host's loopback, and `app`, which
 * carries everything else (the worker's HTTP port, listened on its end of the link, and forwarders to
 * the providers). These addresses exist only on those links: nothing outside the machine is a target.
 *
 * A cut sets the host end of one link down. Inside the namespace the link loses its carrier but
 * keeps its route, and the neighbour entries are permanent, so the worker's packets vanish: an open
 * connection stalls and retransmits, a new one hangs in connect, nothing answers with a reset or an
 * "unreachable". On the host, the link's route goes while it is down; a blackhole route for
 * 10.250.0.0/16 (metric 4000, added once, left in place: it only ever catches these links' traffic)
 * keeps the host's replies from taking the default route out of the machine. A heal sets the link up:
 * stalled connections resume, as after a real partition.
 *
 * Failure windows: a process killed between creating a namespace and `close()` leaves it behind;
 * `createPartitionLab` deletes those of dead labs (name `oncely-t-<pid>-w<i>`, no process inside).
 */

const run = promisify(execFile);
export const LINKS = ["postgres", "nats", "app"] as const;
export type LinkName = (typeof LINKS)[number];
const LINK_LETTER: Record<LinkName, string> = { postgres: "p", nats: "n", app: "a" };
const BLACKHOLE = "10.250.0.0/16";
const MAX_WORKERS = 16;

export interface NetworkLink {
  name: LinkName;
  hostInterface: string;
  hostIp: string;
  namespaceIp: string;
}

export interface WorkerNetwork {
  /** The namespace's name (`ip netns exec <name> …`). */
  readonly name: string;
  readonly links: Readonly<Record<LinkName, NetworkLink>>;
  /** The prefix that runs a command inside the namespace: `[ip, netns, exec, name]`. */
  readonly exec: readonly string[];
  /**
   * A forwarder on the host end of `link` to `target` (host:port on the host's loopback): the worker
   * reaches the service at the returned forwarder's host and port.
   */
  forward(link: LinkName, target: { host: string; port: number }): Promise<TcpForwarder>;
  cut(link: LinkName): Promise<void>;
  heal(link: LinkName): Promise<void>;
  isCut(link: LinkName): boolean;
  /** TCP segments retransmitted inside the namespace so far (/proc/net/snmp of the namespace). */
  tcpRetransmits(): Promise<number>;
  /**
   * The kernel's counters of `link`: bytes the host end received (what crossed from the worker's
   * side), and packets the namespace's end dropped (sent into a cut link, vanished).
   */
  linkCounters(link: LinkName): Promise<{ hostReceivedBytes: number; namespaceDroppedPackets: number }>;
}

export interface PartitionLab {
  readonly networks: readonly WorkerNetwork[];
  /** Closes every forwarder, stops what still runs inside, deletes the namespaces (and so their links). */
  close(): Promise<void>;
}

/** Why namespaces cannot be made here (and what to do), or undefined when they can. */
export async function partitionUnsupported(): Promise<string | undefined> {
  const fix =
    "The partition runs need root and iproute2 (`ip netns`, veth): run as root (CI runs as root; locally `sudo -E npm test`, or `sudo -E npm run chaos -- --partition`), and `apt-get install iproute2` if `ip` is missing.";
  if (process.platform !== "linux")
    return `network namespaces exist only on Linux (this is ${process.platform}). ${fix}`;
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    return `not root (uid ${process.getuid()}): creating a network namespace needs CAP_SYS_ADMIN and CAP_NET_ADMIN. ${fix}`;
  }
  try {
    await run("ip", ["netns", "list"], { timeout: 10_000 });
  } catch (error) {
    return `\`ip netns list\` failed: ${describe(error)}. ${fix}`;
  }
  return undefined;
}

export async function createPartitionLab(workers: number): Promise<PartitionLab> {
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new Error(`a partition lab has 1 to ${MAX_WORKERS} workers, got ${workers}`);
  }
  const unsupported = await partitionUnsupported();
  if (unsupported) throw new Error(unsupported);
  await removeStaleLabs();
  await ip(["route", "replace", "blackhole", BLACKHOLE, "metric", "4000"]);
  const networks: Network[] = [];
  const block = await claimBlock();
  try {
    for (let i = 0; i < workers; i++) {
      const network = new Network(`oncely-t-${process.pid}-w${i}`, block, i);
      networks.push(network);
      await network.create(i === 0);
    }
  } catch (error) {
    for (const network of networks) await network.destroy();
    throw error;
  }
  // A process that exits without awaiting close() (a test runner tearing down a timed-out test, an
  // uncaught error) still removes its namespaces and stops what runs inside them, synchronously.
  const onExit = () => {
    for (const network of networks) network.destroySync();
  };
  process.once("exit", onExit);
  return {
    networks,
    close: async () => {
      process.off("exit", onExit);
      for (const network of networks) await network.destroy();
    },
  };
}

class Network implements WorkerNetwork {
  readonly links: Record<LinkName, NetworkLink>;
  readonly exec: readonly string[];
  private readonly cutLinks = new Set<LinkName>();
  private readonly forwarders: TcpForwarder[] = [];
  private created = false;

  constructor(
    readonly name: string,
    block: number,
    index: number,
  ) {
    this.exec = ["ip", "netns", "exec", name];
    const entries = LINKS.map((link, k): [LinkName, NetworkLink] => {
      const base = 16 * index + 4 * k;
      return [
        link,
        {
          name: link,
          hostInterface: interfaceName(block, index, link),
          hostIp: `10.250.${block}.${base + 1}`,
          namespaceIp: `10.250.${block}.${base + 2}`,
        },
      ];
    });
    this.links = Object.fromEntries(entries) as Record<LinkName, NetworkLink>;
  }

  /** `firstLinkMade`: the block's first interface already exists (claimBlock made it). */
  async create(firstLinkMade: boolean): Promise<void> {
    await ip(["netns", "add", this.name]);
    this.created = true;
    await this.inside(["link", "set", "lo", "up"]);
    for (const link of LINKS) {
      const { hostInterface, hostIp, namespaceIp } = this.links[link];
      const peer = peerName(hostInterface);
      if (firstLinkMade && link === LINKS[0]) {
        await ip(["link", "set", peer, "netns", this.name]);
      } else {
        await ip(["link", "add", hostInterface, "type", "veth", "peer", "name", peer, "netns", this.name]);
      }
      await ip(["addr", "add", `${hostIp}/30`, "dev", hostInterface]);
      await ip(["link", "set", hostInterface, "up"]);
      await this.inside(["addr", "add", `${namespaceIp}/30`, "dev", peer]);
      await this.inside(["link", "set", peer, "up"]);
      // Permanent neighbours: without them, a cut would end in ARP failing and the kernel answering
      // the worker "host unreachable" after ~3 s instead of leaving it in silence.
      const hostMac = (await readFile(`/sys/class/net/${hostInterface}/address`, "utf8")).trim();
      const peerMac = (await this.insideOutput(["cat", `/sys/class/net/${peer}/address`])).trim();
      await this.inside(["neigh", "replace", hostIp, "lladdr", hostMac, "dev", peer, "nud", "permanent"]);
      await ip(["neigh", "replace", namespaceIp, "lladdr", peerMac, "dev", hostInterface, "nud", "permanent"]);
    }
  }

  async forward(link: LinkName, target: { host: string; port: number }): Promise<TcpForwarder> {
    const forwarder = await startTcpForwarder({
      listenHost: this.links[link].hostIp,
      targetHost: target.host,
      targetPort: target.port,
    });
    this.forwarders.push(forwarder);
    return forwarder;
  }

  async cut(link: LinkName): Promise<void> {
    await ip(["link", "set", this.links[link].hostInterface, "down"]);
    this.cutLinks.add(link);
  }

  async heal(link: LinkName): Promise<void> {
    const { hostInterface, namespaceIp } = this.links[link];
    await ip(["link", "set", hostInterface, "up"]);
    // Setting a link down drops its neighbour entries on the host side; put the permanent one back.
    const peerMac = (await this.insideOutput(["cat", `/sys/class/net/${peerName(hostInterface)}/address`])).trim();
    await ip(["neigh", "replace", namespaceIp, "lladdr", peerMac, "dev", hostInterface, "nud", "permanent"]);
    this.cutLinks.delete(link);
  }

  isCut(link: LinkName): boolean {
    return this.cutLinks.has(link);
  }

  async tcpRetransmits(): Promise<number> {
    const snmp = await this.insideOutput(["cat", "/proc/net/snmp"]);
    return tcpCounter(snmp, "RetransSegs");
  }

  async linkCounters(link: LinkName): Promise<{ hostReceivedBytes: number; namespaceDroppedPackets: number }> {
    const { hostInterface } = this.links[link];
    const host = await readFile(`/sys/class/net/${hostInterface}/statistics/rx_bytes`, "utf8");
    const dropped = await this.insideOutput(["cat", `/sys/class/net/${peerName(hostInterface)}/statistics/tx_dropped`]);
    return { hostReceivedBytes: Number(host.trim()), namespaceDroppedPackets: Number(dropped.trim()) };
  }

  async destroy(): Promise<void> {
    for (const forwarder of this.forwarders.splice(0)) await forwarder.close().catch(() => {});
    if (!this.created) return;
    this.created = false;
    // Whatever still runs inside was started by this lab (the workers): it cannot outlive its network.
    const pids = await run("ip", ["netns", "pids", this.name]).then(
      (r) => r.stdout.split(/\s+/).filter((p) => /^\d+$/.test(p)),
      () => [] as string[],
    );
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone already
      }
    }
    // Deleting the namespace destroys the veth ends inside it, and with them their host ends.
    await ip(["netns", "del", this.name]).catch((error: unknown) => {
      process.stderr.write(`partition lab: could not delete namespace ${this.name}: ${describe(error)}\n`);
    });
  }

  destroySync(): void {
    if (!this.created) return;
    this.created = false;
    try {
      const pids = execFileSync("ip", ["netns", "pids", this.name], { encoding: "utf8" }).split(/\s+/);
      for (const pid of pids.filter((p) => /^\d+$/.test(p))) process.kill(Number(pid), "SIGKILL");
      execFileSync("ip", ["netns", "del", this.name]);
    } catch {
      // Nothing more can be done while exiting; the next lab removes what is left (removeStaleLabs).
    }
  }

  private inside(args: string[]): Promise<void> {
    return ip(["-n", this.name, ...args]);
  }

  private async insideOutput(command: string[]): Promise<string> {
    const { stdout } = await run("ip", ["netns", "exec", this.name, ...command], { timeout: 10_000 });
    return stdout;
  }
}

/** `oc<block>w<index><p|n|a>h`: at most 10 characters (Linux allows 15); the peer ends in `n`. */
function interfaceName(block: number, index: number, link: LinkName): string {
  return `oc${block}w${index}${LINK_LETTER[link]}h`;
}

const peerName = (hostInterface: string) => `${hostInterface.slice(0, -1)}n`;

/**
 * A /24 of 10.250.0.0/16 for this lab. Claimed by creating the block's first veth pair (its name
 * carries the block, so a second lab choosing the same block gets "File exists" and moves on);
 * the pair's other end is moved into worker 0's namespace when it is made.
 */
async function claimBlock(): Promise<number> {
  const start = process.pid % 250;
  for (let k = 0; k < 250; k++) {
    const block = 1 + ((start + k) % 250);
    const name = interfaceName(block, 0, LINKS[0]);
    try {
      await ip(["link", "add", name, "type", "veth", "peer", "name", peerName(name)]);
      return block;
    } catch (error) {
      if (/exists/i.test(describe(error))) continue;
      throw error;
    }
  }
  throw new Error("partition lab: every block of 10.250.0.0/16 is taken by another lab");
}

/** Namespaces `oncely-t-<pid>-w<i>` whose process is gone and in which nothing runs any more. */
async function removeStaleLabs(): Promise<void> {
  const { stdout } = await run("ip", ["netns", "list"], { timeout: 10_000 });
  for (const line of stdout.split("\n")) {
    const match = /^(oncely-t-(\d+)-w\d+)\b/.exec(line.trim());
    if (!match) continue;
    const [, name, pid] = match as unknown as [string, string, string];
    if (alive(Number(pid))) continue;
    const pids = await run("ip", ["netns", "pids", name]).then(
      (r) => r.stdout.trim(),
      () => "",
    );
    if (pids === "") await ip(["netns", "del", name]).catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One counter of the `Tcp:` lines of /proc/net/snmp (a header line, then a values line). */
export function tcpCounter(snmp: string, field: string): number {
  const lines = snmp.split("\n").filter((line) => line.startsWith("Tcp:"));
  const header = lines[0]?.split(/\s+/) ?? [];
  const values = lines[1]?.split(/\s+/) ?? [];
  const index = header.indexOf(field);
  if (index < 0) throw new Error(`no Tcp ${field} in /proc/net/snmp`);
  return Number(values[index]);
}

async function ip(args: string[]): Promise<void> {
  try {
    await run("ip", args, { timeout: 10_000 });
  } catch (error) {
    throw new Error(`ip ${args.join(" ")}: ${describe(error)}`);
  }
}

function describe(error: unknown): string {
  if (error && typeof error === "object" && "stderr" in error && String(error.stderr).trim() !== "") {
    return String(error.stderr).trim();
  }
  return error instanceof Error ? error.message : String(error);
}
