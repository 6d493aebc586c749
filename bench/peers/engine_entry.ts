/**
 * Entry point of the bundle that the peer-engine adapter (`cfgtool.mjs`)
 * imports: the manifest validator and the evaluation engine, bundled with
 * their npm dependencies by `deno bundle` in `run.sh`, so that the harness can
 * load them from its own directory without our import map.
 *
 * @module
 */
export { parseManifest } from "../../lib/flags/validate.ts";
export { compileManifest, evaluateFlag } from "../../lib/flags/evaluate.ts";
