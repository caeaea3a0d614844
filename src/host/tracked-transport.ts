import type { DeliveryHandler, SubscribeOptions, Subscription, Transport } from "../messaging/transport.js";

/**
 * A transport that counts the deliveries its subscribers are handling, so a host can tell when
 * none is in flight (`drain`). Publishing and closing go to the wrapped transport unchanged.
 * It sees only this process's deliveries: a message still in the broker is not counted.
 */
export class TrackedTransport implements Transport {
  private handling = 0;

  constructor(
    private readonly target: Transport,
    private readonly settled: () => void,
  ) {}

  get name(): string {
    return this.target.name;
  }

  wraps(transport: Transport): boolean {
    return this.target === transport;
  }

  /** Deliveries being handled right now by subscribers of this transport. */
  get inFlight(): number {
    return this.handling;
  }

  publish(...args: Parameters<Transport["publish"]>): Promise<void> {
    return this.target.publish(...args);
  }

  subscribe(consumerName: string, options: SubscribeOptions, handler: DeliveryHandler): Promise<Subscription> {
    return this.target.subscribe(consumerName, options, async (delivery) => {
      this.handling++;
      try {
        return await handler(delivery);
      } finally {
        this.handling--;
        this.settled();
      }
    });
  }

  close(): Promise<void> {
    return this.target.close();
  }
}
