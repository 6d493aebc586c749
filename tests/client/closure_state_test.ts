import { assertEquals, assertRejects } from "../assert.ts";
import { base64 } from "base";
import { closureHash } from "../../lib/closure/hash.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import { packArchive } from "../../lib/closure/archive.ts";
import { ClosureState } from "../../lib/client/closure_state.ts";
import type { VersionEvent } from "../../lib/protocol/events.ts";
import { IntegrityError } from "../../lib/protocol/integrity.ts";
import { compileManifestInSlices, evaluateAll, evaluateFlag } from "../../lib/flags/evaluate.ts";
import { parseManifest } from "../../lib/flags/validate.ts";
import { boolFlag, NS_TOML, planSegment, stringFlag } from "./fixture.ts";
import { olderReleaseFileSet } from "../flags/older_release_fixture.ts";

const enc = new TextEncoder();
const files = (o: Record<string, string>) =>
  new Map(Object.entries(o).map(([k, v]) => [k, enc.encode(v)]));

const V1 = files({ "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("one") });

async function entry(path: string, op: "added" | "modified" | "enter", text: string) {
  const bytes = enc.encode(text);
  return { path, op, sha256: await sha256Hex(bytes), content_b64: base64.encode(bytes) };
}

async function inline(
  prev: ClosureState,
  next: Map<string, Uint8Array>,
  entries: VersionEvent["files"],
): Promise<VersionEvent> {
  return {
    kind: "version",
    protocol: "v2",
    namespace: "web",
    version: prev.version + 1,
    prev_version: prev.version,
    prev_closure_hash: prev.hash,
    closure_hash: await closureHash(next),
    delivery: "inline",
    files: entries,
    snapshot_url: null,
    snapshot_size_bytes: null,
  };
}

async function checkOf(p: Promise<unknown>): Promise<string> {
  const err = await assertRejects(() => p, IntegrityError);
  return err.check;
}

Deno.test("ClosureState.applyDelta() applies every op and compiles the engine's model", async () => {
  const s1 = await ClosureState.fromFiles("web", 1, V1, await closureHash(V1));
  const v2 = files({
    "namespace.toml": NS_TOML,
    "flags/banner.toml": stringFlag("two"),
    "flags/checkout.toml": boolFlag({ segment: "beta" }),
    "segments/beta.toml": planSegment("beta"),
  });
  const s2 = await s1.applyDelta(
    await inline(s1, v2, [
      await entry("flags/banner.toml", "modified", stringFlag("two")),
      await entry("flags/checkout.toml", "added", boolFlag({ segment: "beta" })),
      await entry("segments/beta.toml", "enter", planSegment("beta")),
    ]),
  );
  assertEquals(s2.version, 2);
  assertEquals(evaluateFlag(s2.model, "production", "checkout", { plan: "beta" }).value, true);
  assertEquals(s2.diff(s1).paths, [
    "flags/banner.toml",
    "flags/checkout.toml",
    "segments/beta.toml",
  ]);
  assertEquals(s2.diff(s1).flags, ["banner", "checkout"]);
  const v3 = files({ "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("two") });
  const s3 = await s2.applyDelta(
    await inline(s2, v3, [
      { path: "flags/checkout.toml", op: "removed" },
      { path: "segments/beta.toml", op: "leave" },
    ]),
  );
  assertEquals([...s3.files.keys()].sort(), ["flags/banner.toml", "namespace.toml"]);
  assertEquals(s1.version, 1, "the older state is untouched");
  assertEquals(s1.files.size, 2);
});

Deno.test("ClosureState.applyDelta() fails each integrity check and never changes the state", async () => {
  const s1 = await ClosureState.fromFiles("web", 1, V1, await closureHash(V1));
  const v2 = files({ "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("two") });
  const good = await inline(s1, v2, [
    await entry("flags/banner.toml", "modified", stringFlag("two")),
  ]);

  // 1. pre-apply: prev_closure_hash must be the tracked hash
  assertEquals(
    await checkOf(s1.applyDelta({ ...good, prev_closure_hash: `sha256:${"0".repeat(64)}` })),
    "prev_closure_hash",
  );
  // 2. per file: content must match its sha256
  const tampered = { ...good.files[0]!, content_b64: base64.encode(enc.encode("evil")) };
  assertEquals(await checkOf(s1.applyDelta({ ...good, files: [tampered] })), "file_sha256");
  const notB64 = { ...good.files[0]!, content_b64: "***" };
  assertEquals(await checkOf(s1.applyDelta({ ...good, files: [notB64] })), "file_sha256");
  // 3. post-apply: the result must hash to closure_hash
  assertEquals(
    await checkOf(s1.applyDelta({ ...good, closure_hash: s1.hash })),
    "closure_hash",
  );
  // a result that does not validate is a failed check too
  const broken = files({ "namespace.toml": NS_TOML, "flags/banner.toml": "type = 1" });
  const bad = await inline(s1, broken, [await entry("flags/banner.toml", "modified", "type = 1")]);
  assertEquals(await checkOf(s1.applyDelta(bad)), "invalid_closure");
  // a path outside the manifest shapes
  const evil = await inline(s1, V1, [await entry("../etc/passwd", "added", "x")]);
  assertEquals(await checkOf(s1.applyDelta(evil)), "protocol");

  assertEquals((await s1.applyDelta(good)).version, 2);
  assertEquals(s1.hash, await closureHash(V1));
});

Deno.test("ClosureState.fromArchive() verifies the snapshot hash (check 4)", async () => {
  const archive = await packArchive(V1);
  const s = await ClosureState.fromArchive("web", 3, archive, await closureHash(V1));
  assertEquals([s.version, s.etag.startsWith('"v3-sha256:')], [3, true]);
  const other = files({ "namespace.toml": NS_TOML });
  assertEquals(
    await checkOf(ClosureState.fromArchive("web", 3, archive, await closureHash(other))),
    "snapshot_hash",
  );
  assertEquals(
    await checkOf(ClosureState.fromArchive("web", 3, new Uint8Array([1, 2, 3]), s.hash)),
    "snapshot_hash",
  );
  const moved = s.withVersion(4);
  assertEquals([moved.version, moved.hash, moved.model.version], [4, s.hash, 4]);
});

Deno.test("ClosureState.fromFiles() builds a version an earlier release accepted under looser rules", async () => {
  const older = olderReleaseFileSet();
  const s = await ClosureState.fromFiles("web", 7, older, await closureHash(older));
  const value = (flag: string, ctx: Record<string, unknown>) =>
    evaluateFlag(s.model, "production", flag, ctx).value;
  // the JS-only pattern never holds; JavaScript would have matched "A"
  assertEquals(value("by-name", { name: "A" }), false);
  // the 40-deep chain evaluates
  assertEquals(value("deep", { plan: "pro" }), true);
  assertEquals(value("deep", { plan: "free" }), false);
  assertEquals(evaluateFlag(s.model, "env-100", "deep", { plan: "pro" }).value, true);
});

Deno.test("ClosureState's model answers before and after as the server's compiled model does", async () => {
  const set = files({
    "namespace.toml": NS_TOML,
    "flags/welcome-tour.toml": boolFlag({ segment: "new-users" }),
    "flags/trial-banner.toml": boolFlag({ segment: "trial" }),
    "segments/new-users.toml": `schema_version = 1
[[predicate]]
attribute = "user.created_at"
op = "after"
value = "2026-01-01T00:00:00Z"
`,
    "segments/trial.toml": `schema_version = 1
[[predicate]]
attribute = "account.trial_ends"
op = "before"
value = 2026-07-01T00:00:00+02:00
`,
  });
  const sdk = (await ClosureState.fromFiles("web", 3, set, await closureHash(set))).model;
  // what the server's model cache compiles from a stored version (lib/runtime/model_cache.ts)
  const server = await compileManifestInSlices(parseManifest(set, { stored: true }), 3);
  const contexts: Record<string, unknown>[] = [
    { user: { created_at: "2026-01-01T00:00:00.001Z" } },
    { user: { created_at: "2026-01-01T00:00:00Z" } },
    { user: { created_at: "2026-01-01" } },
    { user: { created_at: "2025-12-31T19:00:01-05:00" } },
    { user: { created_at: "2026-01-01T00:00:01" } },
    { user: { created_at: 1767225601000 } },
    { account: { trial_ends: "2026-06-30T21:59:59.999Z" } },
    { account: { trial_ends: "2026-06-30T22:00:00Z" } },
    { account: { trial_ends: "2026-06-30" } },
    { account: { trial_ends: "2026-06-31" } },
  ];
  const seen = new Set<unknown>();
  for (const ctx of contexts) {
    for (const env of ["production", "staging"]) {
      assertEquals(evaluateAll(sdk, env, ctx), evaluateAll(server, env, ctx), JSON.stringify(ctx));
      for (const flag of ["welcome-tour", "trial-banner"]) {
        seen.add(evaluateFlag(sdk, env, flag, ctx).value);
      }
    }
  }
  assertEquals(seen, new Set([true, false]), "both answers are exercised");
});
