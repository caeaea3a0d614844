import { parseWith } from "../base/standard-schema.js";
import type { AnyActor } from "./actor.js";
import type { Typed } from "./decider.js";

/**
 * A command as its actor's `commands` schema reads it: refused with `InvalidInputError` naming
 * the actor and the field (`invalid command for "subscription/7": amount: Too small`), or returned
 * as the schema's output. The runtime's own commands (`oncely.*`: outcomes, fired timers, routed
 * events) pass unchecked: they are built by the library, not by a caller.
 */
export function checkCommand(definition: AnyActor, address: string, command: Typed): Typed {
  if (definition.commands === undefined || command.type.startsWith("oncely.")) return command;
  return parseWith<Typed>(definition.commands, command, `command for "${address}"`);
}
