import type { Registry } from "prom-client";
import { InvalidInputError } from "../base/errors.js";
import type { Logger } from "../core/logger.js";
import type { Ownership } from "../core/slices.js";
import type { SliceLeaseManager } from "../ownership/lease-manager.js";
import { HttpPeerLink } from "../ownership/peer-link.js";
import { requirePeerSecret } from "../ownership/peer-protocol.js";
import { PeerServer } from "../ownership/peer-server.js";
import type { LocalRuntime, RouterPeers } from "../ownership/router.js";

/**
 * How the workers sharing a journal reach each other: each listens on `listen` and publishes
 * `advertise` with its lease heartbeat; a command for a slice another worker holds goes to that
 * worker's endpoint first, and through the journal when it gives no answer.
 */
export interface HostPeers {
  /** Where this worker listens for its peers' commands (`port` 0: any free port). Default host 127.0.0.1. */
  listen: { port: number; host?: string };
  /** The URL the other workers reach this one at (default `http://<host>:<port listened on>`). */
  advertise?: string;
  /** At least 16 characters, the same on every worker: each command is signed with it and checked on receipt. */
  secret: string;
  /** How long to wait for a peer's answer before the journal path (default `OWNERSHIP_DEFAULTS.peerTimeoutMs`). */
  timeoutMs?: number;
}

/**
 * A host's side of `peers`: the link its router sends with, and the server its peers send to,
 * listening from `listen()` (before the first lease round, so the first heartbeat already says
 * where this worker is) to `close()` (first thing at stop, so senders take the journal path).
 */
export class HostPeering {
  readonly link: HttpPeerLink;
  /** Where the other workers reach this one, once listening. */
  endpoint: string | undefined;
  private server: PeerServer | undefined;

  constructor(
    private readonly options: HostPeers,
    hasLeases: boolean,
  ) {
    if (!hasLeases) {
      throw new InvalidInputError(
        "createHost peers needs ownership: { leases }: the leases say which worker owns what",
      );
    }
    requirePeerSecret(options.secret);
    const port = options.listen?.port;
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new InvalidInputError(`createHost peers.listen.port must be a port number (0 for any), got ${port}`);
    }
    if (options.advertise !== undefined && !/^https?:\/\/[^/]+/.test(options.advertise)) {
      throw new InvalidInputError(`createHost peers.advertise must be an http:// URL, got "${options.advertise}"`);
    }
    this.link = new HttpPeerLink(options.secret);
  }

  /** What the router needs: this link, and the owners the leases last saw. */
  routerPeers(leases: SliceLeaseManager): RouterPeers {
    return {
      link: this.link,
      endpointOf: (slice) => leases.peerEndpointOf(slice),
      ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
    };
  }

  /** Serve `runtime`'s slices of `ownership` (the runtime itself: a peer never forwards again). */
  serve(runtime: LocalRuntime, ownership: Ownership, logger: Logger, registry: Registry): void {
    this.server = new PeerServer({ runtime, ownership, secret: this.options.secret, logger, registry });
  }

  async listen(): Promise<void> {
    if (!this.server) return;
    const host = this.options.listen.host ?? "127.0.0.1";
    const port = await this.server.listen(this.options.listen.port, host);
    this.endpoint = this.options.advertise ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.link.close();
  }
}
