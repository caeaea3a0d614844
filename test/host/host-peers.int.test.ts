import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/base/errors.js";
import { silentLogger } from "../../src/core/logger.js";
import { sliceOfAddress } from "../../src/core/slices.js";
import { createHost, type Host } from "../../src/host/host.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import type { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { HttpPeerLink, type PeerLink, PeerUnreachableError } from "../../src/ownership/peer-link.js";
import { PEER_PATH, PEER_SIGNATURE_HEADER, signPeerBody } from "../../src/ownership/peer-protocol.js";
import { CommandRouter, forwardRowId } from "../../src/ownership/router.js";
import { counter, PEER_SECRET, PEER_SLICES, peerHost } from "./support/peer-hosts.js";

const SLICES = PEER_SLICES;
const secret = PEER_SECRET;
const started: Host[] = [];
const registries = new Map<Host, Registry>();

afterEach(async () => {
  await Promise.all(started.splice(0).map((host) => host.stop()));
});

async function twoWorkers(options: { advertiseB?: string } = {}) {
  const journal = memoryJournal({ sliceCount: SLICES });
  const make = (workerId: string, advertise?: string) => {
    const { host, registry } = peerHost(journal, workerId, advertise);
    registries.set(host, registry);
    return host;
  };
  const a = make("worker-a");
  await a.start();
  started.push(a);
  const b = make("worker-b", options.advertiseB);
  await b.start();
  started.push(b);
  const la = a.ownership as SliceLeaseManager;
  const lb = b.ownership as SliceLeaseManager;
  // Rounds until the slices are shared and each worker has seen the other's leases and endpoint.
  for (let i = 0; i < 10 && (la.ownedSlices().length !== SLICES / 2 || lb.ownedSlices().length !== SLICES / 2); i++) {
    await la.round();
    await la.releasesSettled();
    await lb.round();
  }
  await la.round();
  await lb.round();
  expect(la.ownedSlices()).toHaveLength(SLICES / 2);
  expect(lb.ownedSlices()).toHaveLength(SLICES / 2);
  // An actor of b's slices, and one of a's.
  const ownedBy = (leases: SliceLeaseManager) => {
    for (let i = 0; ; i++) if (leases.owns(sliceOfAddress(`counter/${i}`, SLICES))) return `counter/${i}`;
  };
  return { journal, a, b, la, lb, ofB: ownedBy(lb), ofA: ownedBy(la) };
}

const metric = async (host: Host, name: string) => {
  const found = (await (registries.get(host) as Registry).getMetricsAsJSON()).find((m) => m.name === name);
  return (found?.values ?? []).map((v) => ({ labels: v.labels, value: v.value }));
};

const eventsOf = async (journal: Journal, address: string) => (await journal.readStream(address)).length;

describe("commands sent straight to the owning worker (createHost peers)", () => {
  it("runs a command of another worker's slice on that worker, over its peer endpoint, with no journal forward", async () => {
    const { journal, a, b, lb, ofB } = await twoWorkers();
    expect(lb.peerEndpointOf(sliceOfAddress(ofB, SLICES))).toBeUndefined(); // its own slice: no peer
    const first = await a.send(ofB, { type: "Add", n: 2 }, { messageId: "m-1" });
    expect(first).toMatchObject({ reply: 2, forwarded: true, duplicate: false });
    expect(await journal.getOutbox(forwardRowId(ofB, "m-1"))).toBeUndefined();
    // The same message id again: the owner's inbox answers it, nothing runs twice.
    expect(await a.send(ofB, { type: "Add", n: 2 }, { messageId: "m-1" })).toMatchObject({
      reply: 2,
      duplicate: true,
    });
    expect(await eventsOf(journal, ofB)).toBe(1);
    expect(await metric(a, "oncely_commands_sent_to_peer_total")).toEqual([{ labels: { actor: "counter" }, value: 2 }]);
    expect(await metric(a, "oncely_commands_forwarded_total")).toEqual([]);
    expect(await metric(b, "oncely_peer_requests_total")).toEqual([{ labels: { outcome: "handled" }, value: 2 }]);
  });

  it("throws the owner's refusal as a journal forward would, without a second try", async () => {
    const { journal, a, ofB } = await twoWorkers();
    await expect(a.send(ofB, { type: "Add", n: -1 }, { messageId: "neg" })).rejects.toThrow(
      /forwarded command Add to counter\/\d+ failed: CommandRejectedError: cannot add -1/,
    );
    expect(await journal.getOutbox(forwardRowId(ofB, "neg"))).toBeUndefined();
    expect(await eventsOf(journal, ofB)).toBe(0);
  });

  it("takes the journal path, with the same message id, when the owner's endpoint does not answer", async () => {
    // b advertises a port nobody listens on (a worker that is gone, a network cut).
    const { journal, a, ofB } = await twoWorkers({ advertiseB: "http://127.0.0.1:1" });
    expect(await a.send(ofB, { type: "Add", n: 5 }, { messageId: "m-2" })).toMatchObject({
      reply: 5,
      forwarded: true,
    });
    expect(await journal.getOutbox(forwardRowId(ofB, "m-2"))).toMatchObject({ status: "done" });
    expect(await eventsOf(journal, ofB)).toBe(1);
    expect(await metric(a, "oncely_peer_fallbacks_total")).toEqual([
      { labels: { actor: "counter", reason: "unreachable" }, value: 1 },
    ]);
  });

  it("runs a command once when the owner committed it and its answer was lost", async () => {
    const { journal, a, la, ofB } = await twoWorkers();
    const real = new HttpPeerLink(secret);
    // The request reaches the owner and runs; the answer never comes back.
    const lossy: PeerLink = {
      send: async (endpoint, request, timeoutMs) => {
        await real.send(endpoint, request, timeoutMs);
        throw new PeerUnreachableError("answer lost");
      },
      close: () => real.close(),
    };
    const router = new CommandRouter({
      runtime: a.runtime,
      journal: a.journal,
      ownership: la,
      logger: silentLogger,
      registry: new Registry(),
      peers: { link: lossy, endpointOf: (slice) => la.peerEndpointOf(slice) },
    });
    const add: { type: "Add"; n: number } = { type: "Add", n: 7 };
    const result = await router.send(ofB, add, { messageId: "m-3" });
    real.close();
    // The journal forward with the same message id met the owner's inbox: the stored reply, once.
    expect(result).toMatchObject({ reply: 7, duplicate: true, forwarded: true });
    expect(await eventsOf(journal, ofB)).toBe(1);
  });

  it("refuses a request not signed with the workers' secret, a body that is not a command, and a slice it does not own", async () => {
    const { journal, b, la, ofA, ofB } = await twoWorkers();
    const endpoint = la.peerEndpointOf(sliceOfAddress(ofB, SLICES)) as string;
    const post = (body: string, signature: string) =>
      fetch(new URL(PEER_PATH, endpoint), {
        method: "POST",
        headers: { "content-type": "application/json", [PEER_SIGNATURE_HEADER]: signature },
        body,
      });
    const command = JSON.stringify({ address: ofB, command: { type: "Add", n: 1 }, messageId: "x" });
    const forged = await post(command, signPeerBody("another-secret-0123456789", command));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: expect.stringContaining(PEER_SIGNATURE_HEADER) });
    const malformed = JSON.stringify({ address: ofB, command: { n: 1 }, messageId: "y" });
    const bad = await post(malformed, signPeerBody(secret, malformed));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: expect.stringContaining("command.type") });
    const elsewhere = JSON.stringify({ address: ofA, command: { type: "Add", n: 1 }, messageId: "z" });
    expect(await (await post(elsewhere, signPeerBody(secret, elsewhere))).json()).toEqual({ kind: "not-owner" });
    expect(await eventsOf(journal, ofB)).toBe(0);
    expect(await eventsOf(journal, ofA)).toBe(0);
    expect(await metric(b, "oncely_peer_requests_total")).toEqual(
      expect.arrayContaining([
        { labels: { outcome: "refused" }, value: 2 },
        { labels: { outcome: "not-owner" }, value: 1 },
      ]),
    );
  });

  it("is refused at construction without leases, with a short secret, or a bad port", () => {
    const journal = memoryJournal({ sliceCount: SLICES });
    const base = { journal, actors: [counter], logger: silentLogger };
    expect(() => createHost({ ...base, peers: { listen: { port: 0 }, secret } })).toThrow(/ownership: \{ leases \}/);
    const leases = { leases: { workerId: "w", sliceCount: SLICES } };
    expect(() => createHost({ ...base, ownership: leases, peers: { listen: { port: 0 }, secret: "short" } })).toThrow(
      InvalidInputError,
    );
    expect(() => createHost({ ...base, ownership: leases, peers: { listen: { port: 70_000 }, secret } })).toThrow(
      /peers.listen.port/,
    );
  });
});
