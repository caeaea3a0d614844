import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP forwarder in the host's network namespace: it listens on an address that exists only on one
 * veth link (so only the worker at the other end can reach it) and pipes every connection to a
 * service that listens on the host's loopback (PostgreSQL, NATS, a provider). It never cuts anything
 * itself: a cut is the link going down (see netns.ts), so the worker sees silence, not a reset. It
 * counts what it carries, so a test can tell that a cut really cut.
 */

export interface ForwarderStats {
  /** Connections accepted from the link. */
  connections: number;
  /** Bytes received from the link (the worker's side), all connections together. */
  bytesIn: number;
  /** Bytes sent back over the link. */
  bytesOut: number;
  /** Upstream connections that failed (the service down or refusing). */
  upstreamErrors: number;
}

export interface TcpForwarder {
  readonly host: string;
  readonly port: number;
  readonly stats: ForwarderStats;
  close(): Promise<void>;
}

export async function startTcpForwarder(options: {
  /** Where to listen: the host end of a veth link. */
  listenHost: string;
  /** 0: any free port. */
  listenPort?: number;
  targetHost: string;
  targetPort: number;
}): Promise<TcpForwarder> {
  const stats: ForwarderStats = { connections: 0, bytesIn: 0, bytesOut: 0, upstreamErrors: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (downstream) => {
    stats.connections++;
    const upstream = createConnection({ host: options.targetHost, port: options.targetPort, noDelay: true });
    sockets.add(downstream);
    sockets.add(upstream);
    // One side gone: the other is closed too, as a direct connection would be (PostgreSQL terminating a
    // backend reaches the worker as a closed connection). Errors are expected on both sides under chaos.
    const end = () => {
      downstream.destroy();
      upstream.destroy();
      sockets.delete(downstream);
      sockets.delete(upstream);
    };
    downstream.on("data", (chunk: Buffer) => {
      stats.bytesIn += chunk.length;
    });
    upstream.on("data", (chunk: Buffer) => {
      stats.bytesOut += chunk.length;
    });
    upstream.on("error", () => {
      stats.upstreamErrors++;
      end();
    });
    downstream.on("error", end);
    upstream.on("close", end);
    downstream.on("close", end);
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.listenPort ?? 0, options.listenHost, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("forwarder: no address");
  return {
    host: options.listenHost,
    port: address.port,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        server.close(() => resolve());
      }),
  };
}
