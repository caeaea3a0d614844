/** Test tools for oncely users: decider specs, a simulated clock, fault points, simulation, conformance. */
export { InjectedFault } from "../base/errors.js";
export { seededRandom, sequentialIds } from "../core/clock.js";
// Fault injection: named points a test arms (or ONCELY_FAULTS names) to crash, stall or fail there.
export {
  ArmableFaults,
  FAULT_POINTS,
  type FaultAction,
  type FaultPoint,
  type Faults,
  faultsFromEnv,
  noFaults,
} from "../core/faults.js";
export {
  type CommitFault,
  type MemoryJournal,
  type MemoryJournalOptions,
  memoryJournal,
  StoreFault,
} from "../journal/memory.js";
// The transports' fault knobs (drops, duplicates, delays; a reader's stalls).
export type { InProcessFaultKnobs } from "../messaging/transports/in-process.js";
export type { JournalTransportFaults } from "../messaging/transports/journal.js";
export { SimulatedClock } from "./clock.js";
export { given } from "./decider-spec.js";
export { type OutcomeOptions, outcome } from "./outcomes.js";
export * from "./simulation/index.js";
