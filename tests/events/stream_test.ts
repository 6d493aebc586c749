import { assert, assertEquals, assertMatch } from "../assert.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { headKey, versionKey } from "../../lib/store/keys.ts";
import { pruneNamespace } from "../../lib/store/retention.ts";
import type { Received } from "./sse_client.ts";
import { flagToml, NS_TOML, ORIGIN, segmentToml, world } from "./world.ts";

const isEvent = (r: Received) => r.kind === "event";
const data = (r: Received) => JSON.parse(r.data);
const settle = (ms = 80) => new Promise((r) => setTimeout(r, ms));

Deno.test("the first event of each namespace is a snapshot; inline deltas chain after it", async () => {
  const w = await world({}, ["web", "api"]);
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
    await w.push({ "namespace.toml": NS_TOML, "flags/x.toml": flagToml("X") }, "api");
    const s = await w.stream("ns=acme/web:a&ns=acme/api:*", w.admin);
    const local = w.local();
    const firsts = [await s.next(), await s.next()];
    for (const f of firsts) {
      const d = data(f);
      assertEquals(f.event, "version");
      assertEquals(d.delivery, "snapshot");
      assertEquals(d.prev_version, null);
      assertEquals(d.prev_closure_hash, null);
      assertEquals(f.id, `${d.namespace}:1`);
      assert(
        d.snapshot_url.startsWith(
          `${ORIGIN}/api/v1/tenants/acme/namespaces/${d.namespace}/closure?`,
        ),
      );
      assert(d.snapshot_size_bytes > 1024);
      await local.apply(f); // downloads with the signed token, no bearer
    }
    assertEquals([...local.namespaces.keys()].sort(), ["api", "web"]);
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    const e = await s.next();
    const d = data(e);
    assertEquals([d.delivery, d.version, d.prev_version, e.id], ["inline", 2, 1, "web:2"]);
    await local.apply(e);
    assertEquals(local.namespaces.get("web")!.hash, d.closure_hash);
  } finally {
    await w.close();
  }
});

Deno.test("no event when the subscription's closure is byte-identical", async () => {
  const w = await world();
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
    const s = await w.stream("ns=acme/web:a", w.admin);
    const local = w.local();
    await local.apply(await s.next());
    await w.push({
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A"),
      "flags/b.toml": flagToml("B"),
    });
    await settle();
    await w.server.runtime.hub.settled();
    assertEquals(s.received.filter(isEvent).length, 1);
    // the next change of `a` chains from the closure the client holds, prev_version = 1
    await w.push({
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A3"),
      "flags/b.toml": flagToml("B"),
    });
    const e = await s.next();
    assertEquals([data(e).version, data(e).prev_version], [3, 1]);
    await local.apply(e);
  } finally {
    await w.close();
  }
});

Deno.test("subscribers with the same subscription share one delta computation", async () => {
  const w = await world();
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
    const same = await Promise.all([1, 2, 3, 4, 5].map(() => w.stream("ns=acme/web:a", w.admin)));
    const other = await w.stream("ns=acme/web:*", w.admin);
    for (const s of [...same, other]) await s.next();
    const hub = w.server.runtime.hub;
    assertEquals(hub.stats.feeds, 1);
    assertEquals(hub.stats.groups, 2);
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    const events = await Promise.all([...same, other].map((s) => s.next()));
    assertEquals(hub.stats.deltas, 2);
    assertEquals(new Set(events.slice(0, 5).map((e) => e.data)).size, 1);
  } finally {
    await w.close();
  }
});

Deno.test("since and Last-Event-ID fill prev_version of the first snapshot", async () => {
  const w = await world();
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A1") });
    const v1Hash = await closureHash(
      new Map([
        ["namespace.toml", new TextEncoder().encode(NS_TOML)],
        ["flags/a.toml", new TextEncoder().encode(flagToml("A1"))],
      ]),
    );
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    const first = async (q: string, h: Record<string, string> = {}) => {
      const s = await w.stream(q, w.admin, h);
      const d = data(await s.next());
      s.close();
      return d;
    };
    let d = await first("ns=acme/web:a&since=web:1");
    assertEquals([d.delivery, d.version, d.prev_version, d.prev_closure_hash], [
      "snapshot",
      2,
      1,
      v1Hash,
    ]);
    d = await first("ns=acme/web:a&since=acme/web:1", { "last-event-id": "web:2" });
    assertEquals([d.prev_version, d.prev_closure_hash], [2, d.closure_hash]);
    d = await first("ns=acme/web:a&since=web:9"); // beyond the head (a restore)
    assertEquals([d.delivery, d.prev_version, d.prev_closure_hash], ["snapshot", null, null]);
    await pruneNamespace(w.kv, "acme", "web", { days: 0, versions: 1 });
    d = await first("ns=acme/web:a", { "last-event-id": "web:1" }); // pruned
    assertEquals([d.delivery, d.prev_version], ["snapshot", null]);
    d = await first("ns=acme/web:a", { "last-event-id": "garbage" }); // advisory: ignored
    assertEquals(d.delivery, "snapshot");
    const bad = await w.request("GET", "/api/v1/events?ns=acme/web:a&since=web", w.admin);
    assertEquals([bad.status, bad.body.code], [400, "invalid_request"]);
  } finally {
    await w.close();
  }
});

Deno.test("deltas with more file entries than the limit, or data over the limit, go as snapshots", async () => {
  const w = await world({ deltaFileLimit: 2, inlineEventLimitBytes: 2048 });
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
    const s = await w.stream("ns=acme/web:*", w.admin);
    const local = w.local();
    await local.apply(await s.next());
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A"),
    };
    files["flags/b.toml"] = flagToml("B");
    files["flags/c.toml"] = flagToml("C");
    await w.push(files); // 2 entries: inline
    let d = await local.apply(await s.next());
    assertEquals([d.delivery, d.files.length], ["inline", 2]);
    files["flags/d.toml"] = flagToml("D");
    files["flags/e.toml"] = flagToml("E");
    files["flags/f.toml"] = flagToml("F");
    await w.push(files); // 3 entries: snapshot
    d = await local.apply(await s.next());
    assertEquals([d.delivery, d.version, d.prev_version], ["snapshot", 3, 2]);
    assertEquals(d.prev_closure_hash, local.namespaces.get("web") && d.prev_closure_hash);
    files["flags/a.toml"] = flagToml("A".repeat(3000)); // one entry, > 2 KiB of data
    await w.push(files);
    d = await local.apply(await s.next());
    assertEquals(d.delivery, "snapshot");
    files["flags/a.toml"] = flagToml("small");
    await w.push(files);
    d = await local.apply(await s.next());
    assertEquals(d.delivery, "inline");
  } finally {
    await w.close();
  }
});

Deno.test("a namespace at version 0 gets its first snapshot with its first push", async () => {
  const w = await world();
  try {
    const s = await w.stream("ns=acme/web:*", w.admin);
    await settle();
    assertEquals(s.received.length, 0);
    await w.push({ "namespace.toml": NS_TOML });
    const d = data(await s.next());
    assertEquals([d.delivery, d.version, d.prev_version], ["snapshot", 1, null]);
    // an empty manifest later gives the empty closure for *
    await w.push({});
    const e = data(await s.next());
    assertEquals(e.closure_hash, await closureHash(new Map()));
    assertEquals(e.files, [{ path: "namespace.toml", op: "removed" }]);
  } finally {
    await w.close();
  }
});

Deno.test("a head that goes back (restore) gives resync unknown_since", async () => {
  const w = await world();
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A1") });
    const s = await w.stream("ns=acme/web:a", w.admin);
    const local = w.local();
    await local.apply(await s.next());
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    await local.apply(await s.next());
    // restore: the head is version 1 again
    const v1 = (await w.kv.get<{ closure_hash: string }>(versionKey("acme", "web", 1))).value!;
    await w.kv.set(headKey("acme", "web"), {
      version: 1,
      closure_hash: v1.closure_hash,
      environments: {},
    });
    const r = await s.next();
    const d = data(r);
    assertEquals([r.event, r.id, d.reason, d.current_version], [
      "resync",
      "web:1",
      "unknown_since",
      1,
    ]);
    assertMatch(d.snapshot_url, /closure\?version=1&subscription=YQ&token=/);
    await local.apply(r);
    // inline events continue from current_version
    await w.kv.delete(versionKey("acme", "web", 2));
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A3") });
    const next = await s.next();
    assertEquals([data(next).delivery, data(next).version, data(next).prev_version], [
      "inline",
      2,
      1,
    ]);
    await local.apply(next);
  } finally {
    await w.close();
  }
});

Deno.test("a pruned base gives resync version_too_old after inline events, a snapshot before", async () => {
  const w = await world();
  try {
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A1"),
    };
    await w.push(files);
    const followed = await w.stream("ns=acme/web:a", w.admin); // will see an inline event
    const fresh = await w.stream("ns=acme/web:a", w.admin);
    const l1 = w.local();
    const l2 = w.local();
    await l1.apply(await followed.next());
    await l2.apply(await fresh.next());
    fresh.close(); // reconnects later with only a snapshot behind it
    files["flags/a.toml"] = flagToml("A2");
    await w.push(files); // v2: inline for `followed`
    await l1.apply(await followed.next());
    const again = await w.stream("ns=acme/web:a", w.admin, { "last-event-id": "web:1" });
    const resumed = await again.next();
    assertEquals([data(resumed).version, data(resumed).prev_version], [2, 1]);
    await l2.apply(resumed);
    for (let i = 0; i < 3; i++) { // v3..v5 do not touch `a`: no events, the clients stay at v2
      files[`flags/other${i}.toml`] = flagToml(`O${i}`);
      await w.push(files);
    }
    await settle();
    await w.server.runtime.hub.settled();
    await pruneNamespace(w.kv, "acme", "web", { days: 0, versions: 2 }); // keeps v4, v5
    files["flags/a.toml"] = flagToml("A6");
    await w.push(files); // v6
    const r = await followed.next();
    assertEquals([r.event, data(r).reason, data(r).current_version], [
      "resync",
      "version_too_old",
      6,
    ]);
    await l1.apply(r);
    const snap = await again.next();
    const d = data(snap);
    assertEquals([snap.event, d.delivery, d.version, d.prev_version], [
      "version",
      "snapshot",
      6,
      2,
    ]);
    assertEquals(d.prev_closure_hash, l2.namespaces.get("web")!.hash);
    await l2.apply(snap);
  } finally {
    await w.close();
  }
});

Deno.test("a base missing above the horizon gives resync pre_git_era", async () => {
  const w = await world();
  try {
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A1"),
    };
    await w.push(files);
    const s = await w.stream("ns=acme/web:a", w.admin);
    await s.next();
    files["flags/a.toml"] = flagToml("A2");
    await w.push(files);
    assertEquals(data(await s.next()).delivery, "inline");
    files["flags/b.toml"] = flagToml("B");
    await w.push(files); // v3: no event; the client stays at v2
    await settle();
    await w.server.runtime.hub.settled();
    await w.kv.delete(versionKey("acme", "web", 2)); // history rewritten (a backfill)
    files["flags/a.toml"] = flagToml("A4");
    await w.push(files);
    const r = await s.next();
    assertEquals([r.event, data(r).reason, r.id], ["resync", "pre_git_era", "web:4"]);
  } finally {
    await w.close();
  }
});

Deno.test("segments entering and leaving the closure give enter and leave entries", async () => {
  const w = await world();
  try {
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/a.toml": flagToml("A", ["s1"]),
      "segments/s1.toml": segmentToml("S1"),
      "segments/s2.toml": segmentToml("S2"),
    };
    await w.push(files);
    const s = await w.stream("ns=acme/web:a", w.admin);
    const local = w.local();
    await local.apply(await s.next());
    files["flags/a.toml"] = flagToml("A", ["s2"]);
    await w.push(files);
    const d = await local.apply(await s.next());
    assertEquals(d.files.map((f: { path: string; op: string }) => `${f.op} ${f.path}`), [
      "modified flags/a.toml",
      "leave segments/s1.toml",
      "enter segments/s2.toml",
    ]);
  } finally {
    await w.close();
  }
});

Deno.test("keepalive comments on idle streams, idle close, and shutdown end streams", async () => {
  const w = await world({ keepaliveMs: 100, idleCloseMs: 700 });
  try {
    await w.push({ "namespace.toml": NS_TOML });
    const s = await w.stream("ns=acme/web:*", w.admin);
    await s.next();
    await s.ended; // the idle close
    const comments = s.received.filter((r) => r.kind === "comment");
    assert(comments.length >= 3, `only ${comments.length} keepalives`);
    assert(comments.every((c) => c.data === "keepalive"));
    const times = s.received.map((r) => r.at);
    for (let i = 1; i < times.length; i++) {
      const gap = times[i]! - times[i - 1]!;
      assert(gap >= 50 && gap <= 180, `gap ${gap} ms`);
    }
    const s2 = await w.stream("ns=acme/web:*", w.admin);
    await s2.next();
    await w.server.close();
    await s2.ended;
    assert(s2.done);
  } finally {
    await w.close();
  }
});

Deno.test("deleting a namespace ends its streams", async () => {
  const w = await world();
  try {
    await w.push({ "namespace.toml": NS_TOML });
    const s = await w.stream("ns=acme/web:*", w.admin);
    await s.next();
    const res = await w.request("DELETE", "/api/v1/tenants/acme/namespaces/web", w.admin);
    assertEquals(res.status < 300, true, JSON.stringify(res.body));
    await s.ended;
  } finally {
    await w.close();
  }
});
