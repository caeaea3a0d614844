import type Database from "better-sqlite3";
import { requireDriver } from "../core/require-driver.js";

/** better-sqlite3, loaded when `oncely/sqlite` is imported; a missing package says to install it. */
export const BetterSqlite3: typeof Database = requireDriver("better-sqlite3", "oncely/sqlite");
