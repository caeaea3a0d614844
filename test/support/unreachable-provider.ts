import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A provider that never answers: it holds a loopback port and resets every connection it accepts.
 * Tests that need an ambiguous outcome use it instead of "a port nobody listens on", because a
 * free port can be taken a moment later by another test's server, whose 404s the payment handler
 * then reads as a definite failure (the order ends payment_failed instead of attention).
 */
export async function unreachableProvider(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer();
  server.on("connection", (socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
