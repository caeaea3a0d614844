import { matrixSuite } from "./matrix-suite.js";

matrixSuite("throw", ["sqlite", "postgres"]);
