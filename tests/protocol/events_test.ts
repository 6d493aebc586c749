import { assert, assertEquals, assertThrows } from "../assert.ts";
import {
  inlineData,
  inlineParts,
  isClosureHash,
  parseEventData,
  resyncData,
  snapshotData,
  type WireFileEntry,
} from "../../lib/protocol/events.ts";
import { IntegrityError } from "../../lib/protocol/integrity.ts";

const A = `sha256:${"a".repeat(64)}`;
const B = `sha256:${"b".repeat(64)}`;

Deno.test("an inline event parses back to what the server encoded, for every prev_version", () => {
  const files: WireFileEntry[] = [
    { path: "flags/a.toml", op: "added", sha256: "c".repeat(64), content_b64: "eA==" },
    { path: "segments/s.toml", op: "leave" },
  ];
  const parts = inlineParts("web", 5, A, B, files);
  for (const prev of [0, 4]) {
    assertEquals(parseEventData("version", inlineData(parts, prev)), {
      kind: "version",
      protocol: "v2",
      namespace: "web",
      version: 5,
      prev_version: prev,
      prev_closure_hash: A,
      closure_hash: B,
      delivery: "inline",
      files,
      snapshot_url: null,
      snapshot_size_bytes: null,
    });
  }
});

Deno.test("inline data has the spec's field order and is the same bytes as JSON.stringify", () => {
  const files: WireFileEntry[] = [{ path: "flags/x.toml", op: "removed" }];
  const text = inlineData(inlineParts('w"eb', 2, A, B, files), 1);
  assertEquals(
    text,
    JSON.stringify({
      protocol: "v2",
      namespace: 'w"eb',
      version: 2,
      prev_version: 1,
      prev_closure_hash: A,
      closure_hash: B,
      delivery: "inline",
      files,
    }),
  );
});

Deno.test("a snapshot event parses back; a first snapshot carries no prev_closure_hash", () => {
  const first = snapshotData({
    namespace: "web",
    version: 1,
    prev_version: null,
    prev_closure_hash: A, // ignored: there is no previous version
    closure_hash: B,
    snapshot_url: "http://h/c",
    snapshot_size_bytes: 2048,
  });
  assertEquals(JSON.parse(first).prev_closure_hash, null);
  assertEquals(parseEventData("version", first), {
    kind: "version",
    protocol: "v2",
    namespace: "web",
    version: 1,
    prev_version: null,
    prev_closure_hash: null,
    closure_hash: B,
    delivery: "snapshot",
    files: [],
    snapshot_url: "http://h/c",
    snapshot_size_bytes: 2048,
  });
  const next = parseEventData(
    "version",
    snapshotData({
      namespace: "web",
      version: 3,
      prev_version: 2,
      prev_closure_hash: A,
      closure_hash: B,
      snapshot_url: "http://h/c",
      snapshot_size_bytes: 1,
    }),
  );
  assert(next.kind === "version");
  assertEquals([next.prev_version, next.prev_closure_hash], [2, A]);
});

Deno.test("a resync event parses back with its reason; an unknown reason is a protocol failure", () => {
  for (
    const reason of [
      "version_too_old",
      "unknown_since",
      "pre_git_era",
      "protocol_downgrade",
    ] as const
  ) {
    assertEquals(parseEventData("resync", resyncData("web", 3, reason, "http://h/c")), {
      kind: "resync",
      protocol: "v2",
      namespace: "web",
      current_version: 3,
      reason,
      snapshot_url: "http://h/c",
    });
  }
  const bad = JSON.stringify({
    ...JSON.parse(resyncData("web", 3, "unknown_since", "u")),
    reason: "x",
  });
  assertEquals(assertThrows(() => parseEventData("resync", bad), IntegrityError).check, "protocol");
});

Deno.test("isClosureHash() accepts sha256: and 64 lower-case hex digits only", () => {
  assert(isClosureHash(A));
  for (const bad of [A.toUpperCase(), "sha256:ab", `md5:${"a".repeat(64)}`, 7, null]) {
    assert(!isClosureHash(bad), String(bad));
  }
});

Deno.test("parseEventData() accepts protocol v2 only and checks required fields", () => {
  const hash = `sha256:${"a".repeat(64)}`;
  const snap = {
    protocol: "v2",
    namespace: "web",
    version: 1,
    prev_version: null,
    prev_closure_hash: null,
    closure_hash: hash,
    delivery: "snapshot",
    snapshot_url: "http://h/c",
    snapshot_size_bytes: 10,
  };
  const ev = parseEventData("version", JSON.stringify(snap));
  assert(ev.kind === "version" && ev.delivery === "snapshot" && ev.snapshot_url === "http://h/c");
  const check = (data: unknown) => {
    const err = assertThrows(
      () => parseEventData("version", JSON.stringify(data)),
      IntegrityError,
    );
    return err.check;
  };
  assertEquals(check({ ...snap, protocol: "v1" }), "protocol");
  assertEquals(check({ ...snap, protocol: undefined }), "protocol");
  assertEquals(check({ ...snap, closure_hash: "md5:x" }), "protocol");
  assertEquals(check({ ...snap, snapshot_url: undefined }), "protocol");
  assertEquals(
    check({ ...snap, delivery: "inline", prev_version: 1, prev_closure_hash: hash }),
    "protocol",
  );
  assertEquals(check({ ...snap, prev_version: 1 }), "protocol");
  assertEquals(
    check({
      ...snap,
      delivery: "inline",
      prev_version: 1,
      prev_closure_hash: hash,
      files: [{ path: "flags/a.toml", op: "added" }],
    }),
    "protocol",
  );
  assertThrows(() => parseEventData("version", "not json"), IntegrityError);
});
