import type pg from "pg";
import { requireDriver } from "../core/require-driver.js";

/** node-postgres, loaded when `oncely/postgres` is imported; a missing `pg` says to install it. */
export const Pg: typeof pg = requireDriver("pg", "oncely/postgres");
