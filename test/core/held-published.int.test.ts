import { onSqliteAndPostgres } from "../support/sql-journal-suites.js";
import { heldPublishedSuite } from "./support/held-published-suite.js";

await onSqliteAndPostgres("published counts held by the activation", "held_published", heldPublishedSuite);
