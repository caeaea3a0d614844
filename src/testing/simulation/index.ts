export { BUILT_IN_INVARIANTS } from "./invariants.js";
export {
  type Execution,
  type ProviderFault,
  ProviderTimeout,
  ProviderUnavailable,
  SimulatedProvider,
  type SimulatedProviderOptions,
} from "./provider.js";
export { runSeeds, type SeedsReport } from "./run-seeds.js";
export { type SimulationOptions, type SimulationResult, simulate, type Violation } from "./simulate.js";
export { DEFAULT_WEIGHTS, formatSteps, parseSteps, type Step, type StepWeights } from "./steps.js";
export {
  type Invariant,
  ProcessDead,
  type SimCommand,
  type SimEnv,
  SimulatedCrash,
  type SimulationSystem,
  type SimWorker,
  SimWorld,
} from "./world.js";
