import { matrixSuite } from "./matrix-suite.js";

matrixSuite("kill", ["sqlite", "postgres"]);
