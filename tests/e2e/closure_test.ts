import { assertEquals } from "../assert.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { unpackArchive } from "../../lib/closure/archive.ts";
import { encodeSubscription } from "../../lib/protocol/subscription.ts";
import { createNamespace } from "../../lib/store/namespaces.ts";
import { commitVersion } from "../store/commit.ts";
import { openKv } from "../../lib/store/kv.ts";
import { readSse } from "../events/sse_client.ts";
import { flagToml, NS_TOML, segmentToml } from "../events/world.ts";
import { type ApiResponse, startInstallation } from "./installation.ts";
import { tamper } from "../tamper.ts";

const FILES: Record<string, string> = {
  "namespace.toml": NS_TOML,
  "flags/a.toml": flagToml("A", ["s1"]),
  "flags/b.toml": flagToml("B"),
  "segments/s1.toml": segmentToml("S1", ["s2"]),
  "segments/s2.toml": segmentToml("S2"),
  "segments/orphan.toml": segmentToml("O"),
};

function assertError(res: ApiResponse, status: number, code: string, what: string) {
  const seen = `${what}: ${res.status} ${JSON.stringify(res.body)}`;
  assertEquals(res.status, status, seen);
  assertEquals(res.body?.code, code, seen);
}

Deno.test("GET …/closure through a real server: archive, headers, 304, auth and every error row", async (t) => {
  const inst = await startInstallation({
    args: ["--retention-versions", "1", "--retention-days", "1", "--prune-interval-ms", "150"],
  });
  try {
    const admin = inst.admin;
    for (const slug of ["acme", "beta"]) {
      assertEquals((await inst.api("POST", "/api/v1/tenants", admin, { slug })).status, 201);
      assertEquals(
        (await inst.api("POST", `/api/v1/tenants/${slug}/namespaces`, admin, { slug: "web" }))
          .status,
        201,
      );
    }
    const base = "/api/v1/tenants/acme/namespaces/web";
    const push = await inst.api("PUT", `${base}/manifest`, admin, { files: FILES });
    assertEquals(push.status, 201);
    const url = (q: string) => `${base}/closure?${q}`;
    const q = (v: number | string, flags: "*" | string[]) =>
      `version=${v}&subscription=${encodeSubscription(flags)}`;
    const get = (path: string, token: string | null = admin, h: Record<string, string> = {}) =>
      fetch(`${inst.url}${path}`, {
        headers: { ...h, ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
      });

    await t.step("200 with the closure, its headers, and identical bytes each time", async () => {
      const res = await get(url(q(1, ["a", "not-yet"])));
      assertEquals(res.status, 200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      assertEquals(res.headers.get("content-type"), "application/x-tar");
      assertEquals(res.headers.get("cache-control"), "private, max-age=60");
      assertEquals(res.headers.get("content-length"), String(bytes.length));
      const files = await unpackArchive(bytes);
      assertEquals([...files.keys()].sort(), [
        "flags/a.toml",
        "namespace.toml",
        "segments/s1.toml",
        "segments/s2.toml",
      ]);
      const hash = await closureHash(files);
      assertEquals(res.headers.get("etag"), `"v1-${hash}"`);
      const again = new Uint8Array(await (await get(url(q(1, ["a", "not-yet"])))).arrayBuffer());
      assertEquals(again, bytes);
      const notModified = await get(url(q(1, ["a", "not-yet"])), admin, {
        "if-none-match": `"v1-${hash}"`,
      });
      assertEquals(notModified.status, 304);
      assertEquals(notModified.headers.get("etag"), `"v1-${hash}"`);
      await notModified.body?.cancel();
    });

    await t.step("* includes orphan segments; a narrow subscription does not", async () => {
      const star = await unpackArchive(
        new Uint8Array(await (await get(url(q(1, "*")))).arrayBuffer()),
      );
      assertEquals(star.size, Object.keys(FILES).length);
      const narrow = await unpackArchive(
        new Uint8Array(await (await get(url(q(1, ["a", "b"])))).arrayBuffer()),
      );
      assertEquals(narrow.has("segments/orphan.toml"), false);
      assertEquals(narrow.size, 5);
    });

    await t.step("a namespace-read token of the namespace is enough; others get 403", async () => {
      const mint = async (body: Record<string, unknown>) =>
        (await inst.api("POST", "/api/v1/tokens", admin, {
          name: crypto.randomUUID().slice(0, 8),
          ...body,
        }))
          .body.secret as string;
      const read = await mint({
        type: "namespace-read",
        tenant_slug: "acme",
        namespace_slug: "web",
      });
      assertEquals((await get(url(q(1, "*")), read)).status, 200);
      const otherTenant = await mint({
        type: "namespace-read",
        tenant_slug: "beta",
        namespace_slug: "web",
      });
      const res = await get(url(q(1, "*")), otherTenant);
      assertEquals(res.status, 403);
      assertEquals((await res.json()).code, "forbidden");
    });

    await t.step("400 invalid_request for a missing or bad version or subscription", async () => {
      const sub = `subscription=${encodeSubscription("*")}`;
      for (
        const query of [
          sub,
          `version=&${sub}`,
          `version=abc&${sub}`,
          `version=-1&${sub}`,
          `version=0&${sub}`,
          "version=1",
          "version=1&subscription=",
          "version=1&subscription=YiwK", // not a flag list
          `version=1&subscription=${btoa("b,a").replace(/=+$/, "")}`, // not canonical
          "version=1&subscription=Kg==",
        ]
      ) {
        assertError(await inst.api("GET", url(query), admin), 400, "invalid_request", query);
      }
    });

    await t.step(
      "404 namespace_not_found for an unknown namespace or a future version",
      async () => {
        assertError(
          await inst.api("GET", `/api/v1/tenants/acme/namespaces/nope/closure?${q(1, "*")}`, admin),
          404,
          "namespace_not_found",
          "unknown namespace",
        );
        assertError(await inst.api("GET", url(q(2, "*")), admin), 404, "namespace_not_found", "v2");
      },
    );

    await t.step("401 without credentials; signed tokens from the stream work alone", async () => {
      assertError(await inst.api("GET", url(q(1, "*")), null), 401, "unauthorized", "none");
      const ac = new AbortController();
      const stream = readSse(
        await fetch(`${inst.url}/api/v1/events?ns=acme/web:a`, {
          headers: { authorization: `Bearer ${admin}` },
          signal: ac.signal,
        }),
        ac,
      );
      const event = JSON.parse((await stream.next()).data);
      stream.close();
      const signed = new URL(event.snapshot_url);
      assertEquals(signed.origin, inst.url);
      const ok = await fetch(signed);
      assertEquals(ok.status, 200);
      assertEquals(ok.headers.get("etag"), `"v1-${event.closure_hash}"`);
      await ok.body?.cancel();
      const token = signed.searchParams.get("token")!;
      const path = (tenant: string, ns: string, v: number, flags: "*" | string[]) =>
        `/api/v1/tenants/${tenant}/namespaces/${ns}/closure?${q(v, flags)}&token=${token}`;
      for (
        const [what, p] of [
          ["other tenant", path("beta", "web", 1, ["a"])],
          ["other subscription", path("acme", "web", 1, "*")],
          [
            "tampered",
            path("acme", "web", 1, ["a"]).replace(`token=${token}`, `token=${tamper(token, 0)}`),
          ],
          ["garbage", `${url(q(1, ["a"]))}&token=nope`],
        ] as const
      ) {
        assertError(await inst.api("GET", p, null), 401, "closure_token_invalid", what);
      }
    });

    await t.step("410 closure_unavailable once the version was pruned", async () => {
      // acme/old and its versions 1..3 were made 40 days ago (written straight into the
      // KV file, as another process would); version 4 is pushed now. The server keeps
      // one version or one day, whichever holds more, so its pruner deletes v0..v3.
      // openKv retries a commit refused with "database is locked" while the server writes
      const kv = await openKv(inst.kvPath);
      const old = () => new Date(Date.now() - 40 * 24 * 3600 * 1000);
      const enc = (o: Record<string, string>) =>
        new Map(Object.entries(o).map(([k, v]) => [k, new TextEncoder().encode(v)]));
      try {
        await createNamespace(kv, { tenant: "acme", slug: "old", created_by: "test", now: old });
        for (let i = 1; i <= 3; i++) {
          await commitVersion(kv, {
            tenant: "acme",
            namespace: "old",
            files: enc({ ...FILES, "flags/b.toml": flagToml(`B${i}`) }),
            environments: { production: { public_evaluate: false } },
            created_by: "test",
            now: old,
          });
        }
      } finally {
        kv.close();
      }
      const oldBase = "/api/v1/tenants/acme/namespaces/old";
      const files = { ...FILES, "flags/b.toml": flagToml("B4") };
      assertEquals(
        (await inst.api("PUT", `${oldBase}/manifest`, admin, { files })).body.version,
        4,
      );
      let res: ApiResponse | undefined;
      for (let i = 0; i < 50; i++) {
        res = await inst.api("GET", `${oldBase}/closure?${q(2, "*")}`, admin);
        if (res.status === 410) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assertError(res!, 410, "closure_unavailable", "pruned v2");
      assertEquals((await get(`${oldBase}/closure?${q(4, "*")}`)).status, 200);
      // the recent namespace keeps its history (the day window)
      assertEquals((await get(url(q(1, "*")))).status, 200);
    });
  } finally {
    await inst.close();
  }
});
