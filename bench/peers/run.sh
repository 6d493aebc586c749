#!/usr/bin/env bash
# Runs the peer-engine harness in $PEERS_SRC (read-only; not part of this repository: a directory
# with its own run.sh, package-lock.json, engines/ and scenario) with cfgtool's engine as
# one more engine, all engines under Deno in one command, and prints the harness's table.
#
#   PEERS_SRC=/path/to/peers bench/peers/run.sh    # RUNS=3, N=200000, WARMUP=50000, RUNTIME=deno
#   RUNS=5 ENGINES="cfgtool flagd" PEERS_SRC=/path/to/peers bench/peers/run.sh
#   BEFORE=HEAD PEERS_SRC=/path/to/peers bench/peers/run.sh   # adds the row cfgtool-before
#
#   SLICES=1 BEFORE=HEAD RUNS=5 PEERS_SRC=/path/to/peers bench/peers/run.sh   # slices.mjs instead
#
# BEFORE=<git revision> also bundles the engine of that committed revision (its lib/, from
# `git archive`) as the engine "cfgtool-before", so that a change is measured against the engine
# it replaces in the same run, on the same machine load (with ENGINES set, name it there too).
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
if [[ -n ${BEFORE:-} ]]; then
  OLD=$(mktemp -d /tmp/cfgtool-before.XXXXXX)
  trap 'rm -rf "$OLD"' EXIT
  (cd "$ROOT" && git archive "$BEFORE" lib bench/peers/engine_entry.ts deno.json deno.lock) |
    (cd "$OLD" && tar -xf -)
  (cd "$OLD" && "$DENO_BIN" bundle --quiet --platform deno --format esm \
    -o "$WORK/engines/_cfgtool_before_engine.mjs" bench/peers/engine_entry.ts)
  REV=$(cd "$ROOT" && git rev-parse --short "$BEFORE")
  sed -e 's|_cfgtool_engine\.mjs|_cfgtool_before_engine.mjs|' \
    -e 's|name: "cfgtool"|name: "cfgtool-before"|' \
    -e "s|version: () => \"[^\"]*\"|version: () => \"$REV\"|" \
    "$HERE/cfgtool.mjs" >"$WORK/engines/cfgtool-before.mjs"
fi
mkdir -p "$WORK/flags/cfgtool"
cp -R "$HERE/manifest/." "$WORK/flags/cfgtool/"

cd "$WORK"
if [[ -n ${SLICES:-} ]]; then
  # Slice timing (slices.mjs): RUNS rounds of one process per engine, round-major like run.sh.
  cp "$HERE/slices.mjs" "$WORK/slices.mjs"
  ENGINES=${ENGINES:-baseline cfgtool${BEFORE:+ cfgtool-before}}
  lines=slices.txt
  : >"$lines"
  for ((round = 1; round <= ${RUNS:-3}; round++)); do
    for engine in $ENGINES; do
      DENO_DIR=${DENO_DIR:-/tmp/deno-dir-flag-eval-peers} "$DENO_BIN" run --quiet \
        --allow-read=. --allow-env --allow-sys slices.mjs --engine "$engine" | tee -a "$lines"
    done
  done
  "$DENO_BIN" run --quiet --allow-read=. --allow-env --allow-sys slices.mjs --report "$lines"
  rm -f "$lines"
  exit 0
fi
RUNTIME=${RUNTIME:-deno} DENO="$DENO_BIN" ./run.sh
