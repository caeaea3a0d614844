#!/usr/bin/env node
import { runOncelyCli } from "./program.js";

// The built-in `oncely` binary: no consumers of an application, so `dead-letters replay` explains
// how to replay from a CLI of your own (`runOncelyCli({ consumers })`, exported by "oncely").
await runOncelyCli();
