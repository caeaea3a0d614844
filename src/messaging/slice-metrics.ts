import { Counter, type Registry } from "prom-client";
import { perRegistry } from "../observability/per-registry.js";

/**
 * Metrics of transports' readers that read some slices (docs/design/event-partitions.md), one set
 * per registry, told apart by transport and consumer.
 */
export interface SliceReaderMetrics {
  registry: Registry;
  /** Events read (delivered or passed over) per slice. */
  read: Counter<"transport" | "consumer" | "slice">;
  /** Slices a reader started (`gained`) or stopped (`lost`) reading as its worker's ownership changed. */
  moves: Counter<"transport" | "consumer" | "change">;
  /** A slice stopped while some of its events were read and not settled (its next owner delivers them again). */
  stoppedInFlight: Counter<"transport" | "consumer">;
}

export const sliceReaderMetrics = perRegistry(
  (registry): SliceReaderMetrics => ({
    registry,
    read: new Counter({
      name: "oncely_slice_events_read_total",
      help: "Integration events read by a reader of some slices, per slice (handled or passed over as not for its subjects)",
      labelNames: ["transport", "consumer", "slice"],
      registers: [registry],
    }),
    moves: new Counter({
      name: "oncely_slice_reader_moves_total",
      help: "Slices a reader started (gained) or stopped (lost) reading as its worker's ownership changed",
      labelNames: ["transport", "consumer", "change"],
      registers: [registry],
    }),
    stoppedInFlight: new Counter({
      name: "oncely_slice_reader_stopped_in_flight_total",
      help: "Slices a reader stopped while events of theirs were read and not settled; the next owner delivers those again",
      labelNames: ["transport", "consumer"],
      registers: [registry],
    }),
  }),
);
