import { Registry } from "prom-client";
import { type Clock, type IdGenerator, type Random, randomIds, systemClock, systemRandom } from "./clock.js";
import { type Faults, noFaults } from "./faults.js";
import { type Logger, resolveLogger } from "./logger.js";

/**
 * What every component takes from the world rather than from its own options: time, randomness,
 * ids, where it logs, which fault points are armed, and where its metrics go. A test or a
 * simulation fixes these; in production each is the default below.
 */
export interface Environment {
  clock: Clock;
  random: Random;
  ids: IdGenerator;
  logger: Logger;
  faults: Faults;
  /** Where the component's prom-client metrics are registered. */
  registry: Registry;
}

/** The environment a component's options may carry: any part of it, the rest defaulted by `resolveEnvironment`. */
export type EnvironmentOptions = { [K in keyof Environment]?: Environment[K] | undefined };

/**
 * The one place an environment's defaults are chosen: each part given is kept as it is (the same
 * object, so components built from one resolved environment share it), each part missing is the
 * default: the system clock, `Math.random`, time-ordered UUIDs, the default logger (pino on
 * stderr at `warn`, see logger.ts), no faults, and a fresh registry (never prom-client's global
 * one, so two hosts can live in one process).
 *
 * `createHost` resolves once and passes the result to every component it builds; a component
 * built on its own resolves its options through this same function, so it has the same defaults.
 * Resolving an environment already resolved returns equal parts.
 */
export function resolveEnvironment(partial: EnvironmentOptions = {}): Environment {
  return {
    clock: partial.clock ?? systemClock,
    random: partial.random ?? systemRandom,
    ids: partial.ids ?? randomIds,
    logger: resolveLogger(partial.logger),
    faults: partial.faults ?? noFaults,
    registry: partial.registry ?? new Registry(),
  };
}
