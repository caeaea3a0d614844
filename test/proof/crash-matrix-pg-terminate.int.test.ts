import { matrixSuite } from "./matrix-suite.js";

// pg_terminate_backend is a PostgreSQL fault: there is no SQLite connection to terminate.
matrixSuite("pg-terminate", ["postgres"]);
