export { Stall } from "./budget.js";
export { COVERAGE_KINDS, type CoverageKind, coverageOf, unexercised } from "./coverage.js";
export { type DrawOptions, drawWorld, SNAPSHOT_INTERVALS, type WorldDraw } from "./draw.js";
export { BUILT_IN_INVARIANTS } from "./invariants.js";
export {
  type Execution,
  type ProviderFault,
  ProviderTimeout,
  ProviderUnavailable,
  SimulatedProvider,
  type SimulatedProviderOptions,
} from "./provider.js";
export { runSeeds, type SeedsOptions, type SeedsReport } from "./run-seeds.js";
export {
  DEFAULT_SHRINK_TIME_MS,
  DEFAULT_TIME_BUDGET_MS,
  type OperatorLookup,
  type SimulationOptions,
  type SimulationResult,
  settleFromLedger,
  simulate,
  type Violation,
} from "./simulate.js";
export { DEFAULT_WEIGHTS, formatSteps, parseSteps, type Step, type StepWeights } from "./steps.js";
export { PublishAckLost, type PublishFault, PublishRefused, simulatedTransport } from "./transport.js";
export {
  type Invariant,
  ProcessDead,
  type SimAction,
  type SimCommand,
  type SimEnv,
  SimulatedCrash,
  type SimulationSystem,
  type SimWorker,
  type SimWorkerLike,
  SimWorld,
  type SystemUpgrade,
} from "./world.js";
