import { Registry } from "prom-client";
import { CommandRejectedError } from "../../../src/base/errors.js";
import { defineActor } from "../../../src/core/actor.js";
import { silentLogger } from "../../../src/core/logger.js";
import { createHost, type Host } from "../../../src/host/host.js";
import type { Journal } from "../../../src/journal/types.js";

/** The peers tests' actor: adds `n`, refuses a negative one for good. */
export const counter = defineActor<{ total: number }, { type: "Add"; n: number }, { type: "Added"; n: number }>({
  type: "counter",
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.n }),
  decide: (command, state) => {
    if (command.n < 0) throw new CommandRejectedError(`cannot add ${command.n}`);
    return { events: [{ type: "Added", n: command.n }], reply: state.total + command.n };
  },
});

export const PEER_SLICES = 8;
export const PEER_SECRET = "peers-secret-for-tests-0123";

/** A worker of the peers tests: leases on `journal`, a peer port on any free port (advertised as given), its own registry. */
export function peerHost(journal: Journal, workerId: string, advertise?: string): { host: Host; registry: Registry } {
  const registry = new Registry();
  const host = createHost({
    journal,
    actors: [counter],
    logger: silentLogger,
    registry,
    ownership: { leases: { workerId, sliceCount: PEER_SLICES, leaseMs: 60_000 } },
    peers: { listen: { port: 0 }, secret: PEER_SECRET, ...(advertise ? { advertise } : {}) },
  });
  return { host, registry };
}
