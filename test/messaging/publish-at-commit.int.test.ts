import { onSqliteAndPostgres } from "../support/sql-journal-suites.js";
import { publishAtCommitSuite } from "./support/publish-at-commit-suite.js";

await onSqliteAndPostgres("events published by their own commit", "publish_at_commit", publishAtCommitSuite);
