import { isDeepStrictEqual } from "node:util";
import { parseAddress } from "../../core/address.js";
import { silentLogger } from "../../core/logger.js";
import { recover } from "../../core/recovery.js";
import { outcomeRecorded } from "../../journal/outcome-record.js";
import type { Invariant, SimWorld } from "./world.js";

/**
 * The built-in invariants, checked against the providers' own ledgers and the journal, never
 * against what the actors believe.
 */

const effectRows = (world: SimWorld) => world.journal.listOutbox({ category: "effect" });

/** Every requested effect ends with exactly one recorded outcome, and that outcome is what the provider did. */
export const outcomeMatchesProvider: Invariant = {
  name: "outcome-recorded-once-and-true",
  async check(world) {
    const problems: string[] = [];
    for (const row of await effectRows(world)) {
      const provider = world.providers.find((p) => p.kind === row.kind);
      if (row.status !== "done") {
        problems.push(`effect ${row.id} never finished (status ${row.status})`);
        continue;
      }
      const recorded = await outcomeRecorded(world.journal, row.stream, row.id, `${row.id}#outcome`);
      if (!recorded) problems.push(`effect ${row.id} is done but its outcome was never recorded in ${row.stream}`);
      if (!provider) continue;
      const performed = provider.performedFor(row.id);
      if (row.outcome === "completed") {
        const found = provider.find(row.id);
        if (performed.length === 0 || found.outcome !== "succeeded") {
          problems.push(`effect ${row.id} recorded as completed but the provider never performed it`);
        } else if (!isDeepStrictEqual(found.result, row.result)) {
          problems.push(
            `effect ${row.id} recorded result ${JSON.stringify(row.result)} but the provider says ${JSON.stringify(found.result)}`,
          );
        }
      }
      if (row.outcome === "failed" && performed.some((e) => e.result.outcome === "succeeded")) {
        problems.push(`effect ${row.id} recorded as failed although the provider performed it successfully`);
      }
    }
    return problems;
  },
};

/** No key is performed twice, and every key the providers saw is one an actor asked for. */
export const onceAndOnlyRequested: Invariant = {
  name: "performed-at-most-once-per-requested-key",
  async check(world) {
    const problems: string[] = [];
    const requested = new Map((await effectRows(world)).map((r) => [r.id, r]));
    for (const provider of world.providers) {
      const keys = new Set(provider.executions.map((e) => e.key));
      for (const key of keys) {
        const performed = provider.performedFor(key);
        if (performed.length > 1) problems.push(`${provider.kind} performed key ${key} ${performed.length} times`);
        if (!requested.has(key)) problems.push(`${provider.kind} received key ${key}, which no actor requested`);
        const inputs = provider.executions.filter((e) => e.key === key).map((e) => JSON.stringify(e.input));
        if (new Set(inputs).size > 1) problems.push(`${provider.kind} key ${key} executed with different inputs`);
      }
      for (const execution of provider.executions) {
        if (!execution.fromHandler) {
          problems.push(
            `${provider.kind} was called for ${execution.key} outside an effect handler (from evolve or decide?)`,
          );
        }
      }
    }
    return problems;
  },
};

/** Every command that was acknowledged to its sender is in the receiver's inbox. */
export const acknowledgedNotLost: Invariant = {
  name: "acknowledged-commands-kept",
  async check(world) {
    const problems: string[] = [];
    for (const command of world.acked) {
      if (!(await world.journal.getInbox(command.address, command.messageId))) {
        problems.push(`acknowledged message ${command.messageId} to ${command.address} left no trace`);
      }
    }
    return problems;
  },
};

/** State in memory equals state rebuilt by full replay, and snapshot + tail equals full replay. */
export const replayEqualsLive: Invariant = {
  name: "replay-equals-live",
  async check(world) {
    const problems: string[] = [];
    for (const address of await world.journal.listStreams("")) {
      const definition = world.actors.find((a) => a.type === parseAddress(address).type);
      if (!definition) continue;
      const { id } = parseAddress(address);
      const live = await world.runtime.state(address);
      const { snapshot: _ignored, ...withoutSnapshots } = definition;
      const full = await recover(world.journal, withoutSnapshots, address, id, silentLogger);
      const fromSnapshot = await recover(world.journal, definition, address, id, silentLogger);
      if (!isDeepStrictEqual(json(live.state), json(full.state))) {
        problems.push(`${address}: live state differs from full replay`);
      }
      if (!isDeepStrictEqual(json(fromSnapshot.state), json(full.state))) {
        problems.push(`${address}: snapshot + tail differs from full replay`);
      }
    }
    return problems;
  },
};

/** Once faults stop, every workflow reaches a terminal state. */
export const everyWorkflowTerminal: Invariant = {
  name: "workflows-terminal",
  async check(world) {
    const isTerminal = world.system.isTerminal;
    if (!isTerminal) return [];
    const problems: string[] = [];
    for (const address of await world.journal.listStreams("")) {
      const definition = world.actors.find((a) => a.type === parseAddress(address).type);
      if (!definition) continue;
      const { state } = await world.runtime.state(address);
      if (!isTerminal(address, state)) problems.push(`${address} is not terminal: ${JSON.stringify(state)}`);
    }
    return problems;
  },
};

export const BUILT_IN_INVARIANTS: Invariant[] = [
  outcomeMatchesProvider,
  onceAndOnlyRequested,
  acknowledgedNotLost,
  replayEqualsLive,
  everyWorkflowTerminal,
];

const json = (value: unknown) => JSON.parse(JSON.stringify(value ?? null));
