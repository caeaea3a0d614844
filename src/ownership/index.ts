// Slice ownership by leases in the journal: which worker runs which actors, fenced (docs/design/ownership.md).
export { SliceLeaseManager, type SliceLeaseOptions } from "./lease-manager.js";
export { isFree, SLICE_LEASES, type SliceLease, SliceLeaseStore, WORKERS } from "./lease-store.js";
export { fairShare, planRebalance, type RebalanceInput, type RebalancePlan } from "./rebalance.js";
