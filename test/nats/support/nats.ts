import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../../src/nats/connection.js";
import { NatsTransport } from "../../../src/nats/transport.js";
import { NATS_URL } from "../../support/services.js";

/** A stream and subject prefix of its own for one test file, deleted afterwards. */
export async function natsFixture(label: string, options: { url?: string; storage?: "file" | "memory" } = {}) {
  const unique = `${label}_${process.pid}_${Date.now().toString(36)}`.replace(/[^a-zA-Z0-9_]/g, "_");
  const stream = `T_${unique}`.toUpperCase();
  const prefix = `t_${unique}`;
  const connections: NatsConnection[] = [];
  const transports: NatsTransport[] = [];
  const open = async (): Promise<NatsTransport> => {
    const nc = await connectNats(options.url ?? NATS_URL);
    connections.push(nc);
    const transport = await NatsTransport.create({
      connection: nc,
      stream,
      subjects: [`${prefix}.>`],
      storage: options.storage ?? "memory",
      ackWaitMs: 1000,
      retryBaseMs: 20,
      retryMaxMs: 100,
      publishTimeoutMs: 2000,
    });
    transports.push(transport);
    return transport;
  };
  const first = await open();
  return {
    stream,
    prefix,
    transport: first,
    open,
    async messagesInStream(): Promise<number> {
      return (await first.manager.streams.info(stream)).state.messages;
    },
    async cleanup(): Promise<void> {
      for (const t of transports) await t.close().catch(() => {});
      const nc = connections.find((c) => !c.isClosed());
      if (nc) {
        const t = transports[connections.indexOf(nc)];
        await t?.manager.streams.delete(stream).catch(() => {});
      }
      for (const c of connections) await c.close().catch(() => {});
    },
  };
}

export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface PrivateNatsOptions {
  /** A configuration file's text (given the store directory), JetStream included: started with `-c`. */
  config?: (storeDir: string, port: number) => string;
  /** Credentials the readiness probe connects with (a server with authorization refuses anonymous ones). */
  probe?: { user: string; pass: string };
}

/** A private nats-server with JetStream on a loopback port, which a test may kill and restart. */
export class PrivateNatsServer {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), "oncely-nats-"));
  constructor(
    readonly port: number,
    private readonly options: PrivateNatsOptions = {},
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const flags = ["-a", "127.0.0.1", "-p", String(this.port)];
    if (this.options.config) {
      // The file configures JetStream itself (nats-server refuses `-sd` next to a `store_dir`).
      const file = join(this.dir, "nats-server.conf");
      writeFileSync(file, this.options.config(this.dir, this.port));
      flags.push("-c", file);
    } else {
      flags.push("-js", "-sd", this.dir);
    }
    const child = spawn("/usr/sbin/nats-server", flags, { stdio: "ignore" });
    this.child = child;
    await waitFor(async () => {
      try {
        const nc = await connectNats(this.url, {
          maxReconnectAttempts: 0,
          waitOnFirstConnect: false,
          timeout: 500,
          ...this.options.probe,
        });
        await nc.close();
        return true;
      } catch {
        return false;
      }
    }, `nats-server on ${this.port}`);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    this.child = undefined;
  }

  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
