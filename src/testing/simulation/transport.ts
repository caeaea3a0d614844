import type { Envelope } from "../../messaging/envelope.js";
import type { Transport } from "../../messaging/transport.js";

/** What the next publish does, queued by a `publish-fault` step. */
export type PublishFault = "fail" | "lost-ack" | "duplicate";

export class PublishRefused extends Error {
  constructor(eventId: string) {
    super(`simulated broker refused ${eventId} (nothing stored)`);
    this.name = "PublishRefused";
  }
}

export class PublishAckLost extends Error {
  constructor(eventId: string) {
    super(`simulated broker stored ${eventId} but its acknowledgement was lost`);
    this.name = "PublishAckLost";
  }
}

/** What the simulated broker needs of the run (a `SimEnv` is one). */
export interface PublishEnv {
  publishFault(): PublishFault | undefined;
  count(name: string): void;
}

/**
 * A transport for the relay in a simulation: `accept` stores an envelope in the simulated broker
 * (which lives outside the process and decides delivery order). The seed's `publish-fault` steps
 * make the next publish fail before storing, store but report failure, or store twice.
 */
export function simulatedTransport(env: PublishEnv, accept: (envelope: Envelope, subject: string) => void): Transport {
  return {
    name: "simulated-broker",
    async publish(envelope, subject) {
      const fault = env.publishFault();
      if (fault === "fail") {
        env.count("coverage:relay-publish-failure");
        throw new PublishRefused(envelope.eventId);
      }
      accept(envelope, subject);
      if (fault === "duplicate") {
        env.count("transport:duplicate");
        accept(envelope, subject);
      }
      if (fault === "lost-ack") {
        env.count("coverage:relay-publish-failure");
        throw new PublishAckLost(envelope.eventId);
      }
    },
    subscribe: () => Promise.reject(new Error("the simulated broker is drained by the simulation's own worker")),
    close: async () => {},
  };
}
