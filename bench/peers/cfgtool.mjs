// cfgtool's engine (lib/flags/evaluate.ts) as a peer-harness engine. run.sh copies this file to
// engines/cfgtool.mjs of a temporary copy of the peer harness ($PEERS_SRC), next to the bundle
// engines/_cfgtool_engine.mjs (validator + engine, built by `deno bundle`) and the manifest
// flags/cfgtool/ (the scenario in cfgtool's TOML format). The manifest is validated and compiled
// in create() (outside the clock); evaluate() is one evaluateFlag() call.
import { readdirSync, readFileSync } from "node:fs";

// Both modules exist only in the harness copy that run.sh prepares, so they are imported
// dynamically: `deno check bench/` in the repository does not try to resolve them.
const harness = (path) => new URL(path, import.meta.url).href;

const ROOT = new URL("../flags/cfgtool/", import.meta.url);

function readManifest() {
  const files = new Map();
  files.set("namespace.toml", new Uint8Array(readFileSync(new URL("namespace.toml", ROOT))));
  for (const dir of ["flags", "segments"]) {
    for (const name of readdirSync(new URL(dir + "/", ROOT))) {
      files.set(`${dir}/${name}`, new Uint8Array(readFileSync(new URL(`${dir}/${name}`, ROOT))));
    }
  }
  return files;
}

export default {
  name: "cfgtool",
  package: "cfgtool lib/flags/evaluate.ts",
  note: "ours",
  version: () => "0.1.0",
  async create() {
    const { compileManifest, evaluateFlag, parseManifest } = await import(
      harness("./_cfgtool_engine.mjs")
    );
    const { FLAG_KEY } = await import(harness("../scenario.mjs"));
    const model = compileManifest(parseManifest(readManifest()), 1);
    return {
      mode: "sync",
      // cfgtool contexts are plain JSON objects; the scenario's flat attributes are used as they are.
      prepare: (c) => ({ targeting_key: c.userId, ...c }),
      evaluate: (ctx) => evaluateFlag(model, "production", FLAG_KEY, ctx).value,
      close() {},
    };
  },
};
