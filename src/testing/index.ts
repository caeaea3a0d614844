/** Test tools for oncely users: decider specs, a simulated clock, fault points, simulation, conformance. */
export { ArmableFaults, type FaultAction } from "../core/faults.js";
export {
  type CommitFault,
  MemoryJournal,
  type MemoryJournalOptions,
  memoryJournal,
  StoreFault,
} from "../journal/memory.js";
export { SimulatedClock } from "./clock.js";
export { given } from "./decider-spec.js";
export { type OutcomeOptions, outcome } from "./outcomes.js";
export * from "./simulation/index.js";
