#!/usr/bin/env bash
# Runs the peer-engine harness in $PEERS_SRC (read-only; not part of this repository: a directory
# with its own run.sh, package-lock.json, engines/ and scenario) with cfgtool's engine as
# one more engine, all engines under Deno in one command, and prints the harness's table.
#
#   PEERS_SRC=/path/to/peers bench/peers/run.sh    # RUNS=3, N=200000, WARMUP=50000, RUNTIME=deno
#   RUNS=5 ENGINES="cfgtool flagd" PEERS_SRC=/path/to/peers bench/peers/run.sh
#
# Nothing is written into $PEERS_SRC: it is copied to $PEERS_WORK (default
# /tmp/cfgtool-peers), where `npm ci` installs the peers' pinned npm packages once (kept between
# runs), our engine is bundled by `deno bundle` into engines/_cfgtool_engine.mjs, and our adapter
# and manifest are dropped into engines/ and flags/cfgtool/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHARED=$(cd "${PEERS_SRC:?set PEERS_SRC to the directory of the peer-engine harness}" && pwd)
WORK=${PEERS_WORK:-/tmp/cfgtool-peers}
DENO_BIN=${DENO:-$(command -v deno || echo "$ROOT/.cache/deno/node_modules/.bin/deno")}

mkdir -p "$WORK"
# Fresh harness files (keep node_modules between runs).
find "$WORK" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
(cd "$SHARED" && tar --exclude=node_modules --exclude=results -cf - .) | (cd "$WORK" && tar -xf -)
chmod -R u+w "$WORK"
if [[ ! -d $WORK/node_modules ]] || ! cmp -s "$SHARED/package-lock.json" "$WORK/node_modules/.package-lock.json.src"; then
  (cd "$WORK" && npm ci --no-audit --no-fund >&2)
  cp "$SHARED/package-lock.json" "$WORK/node_modules/.package-lock.json.src"
fi

# Our engine: bundle (validator + engine + smol-toml + semver) and adapter, manifest.
(cd "$ROOT" && "$DENO_BIN" bundle --quiet --platform deno --format esm \
  -o "$WORK/engines/_cfgtool_engine.mjs" bench/peers/engine_entry.ts)
cp "$HERE/cfgtool.mjs" "$WORK/engines/cfgtool.mjs"
mkdir -p "$WORK/flags/cfgtool"
cp -R "$HERE/manifest/." "$WORK/flags/cfgtool/"

cd "$WORK"
RUNTIME=${RUNTIME:-deno} DENO="$DENO_BIN" ./run.sh
