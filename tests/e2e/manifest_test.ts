import { assert, assertEquals, assertMatch } from "../assert.ts";
import { packTar } from "tar";
import { closureHash } from "../../lib/closure/hash.ts";
import { packArchive, unpackArchive } from "../../lib/closure/archive.ts";
import { startServer } from "./server_process.ts";
import { createAcmeWeb, type Installation, runCli, startInstallation } from "./installation.ts";

const NS = `schema_version = 1
[namespace]
description = "Checkout"
[namespace.environments.production]
public_evaluate = false
[namespace.environments.staging]
public_evaluate = true
`;

function flag(description: string): string {
  return `schema_version = 1
description = "${description}"
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;
}

const BASE = "/api/v1/tenants/acme/namespaces/web";

async function withInstallation(fn: (inst: Installation) => Promise<void>): Promise<void> {
  const inst = await startInstallation();
  try {
    await createAcmeWeb(inst);
    await fn(inst);
  } finally {
    await inst.close();
  }
}

async function head(inst: Installation): Promise<number> {
  const res = await inst.api("GET", `${BASE}`, inst.admin);
  return res.body.namespace.head.version;
}

Deno.test("manifest upload, download, versions and rollback through a real server", async (t) => {
  await withInstallation(async (inst) => {
    await t.step("a new namespace is at version 0 with an empty manifest", async () => {
      const res = await inst.api("GET", `${BASE}/manifest`, inst.admin, undefined, {
        accept: "application/json",
      });
      assertEquals(res.status, 200);
      assertEquals(res.body.version, 0);
      assertEquals(res.body.files, {});
      assertEquals(res.body.closure_hash, await closureHash(new Map()));
    });

    await t.step("a JSON upload creates version 1 with 201 and its closure hash", async () => {
      const files = { "namespace.toml": NS, "flags/a.toml": flag("A") };
      const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, {
        files,
        message: "first",
      });
      assertEquals(res.status, 201);
      assertEquals(res.body.version, 1);
      const enc = new TextEncoder();
      const expected = await closureHash(
        new Map(Object.entries(files).map(([k, v]) => [k, enc.encode(v)])),
      );
      assertEquals(res.body.closure_hash, expected);
    });

    await t.step(
      "uploading the same content again answers 200 with the current version",
      async () => {
        const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, {
          files: { "flags/a.toml": flag("A"), "namespace.toml": NS },
        });
        assertEquals(res.status, 200);
        assertEquals(res.body.version, 1);
        assertEquals(res.body.changed, false);
      },
    );

    await t.step(
      "a tar.gz upload creates the next version; download gives identical bytes twice",
      async () => {
        const enc = new TextEncoder();
        const archive = await packArchive(
          new Map([["namespace.toml", enc.encode(NS)], ["flags/b.toml", enc.encode(flag("B"))]]),
        );
        const res = await inst.api("PUT", `${BASE}/manifest?message=tarball`, inst.admin, archive, {
          "content-type": "application/gzip",
        });
        assertEquals(res.status, 201);
        assertEquals(res.body.version, 2);
        const get = () =>
          fetch(`${inst.url}${BASE}/manifest`, {
            headers: { authorization: `Bearer ${inst.admin}` },
          });
        const a = await get();
        const b = await get();
        const etag = a.headers.get("etag")!;
        assertMatch(etag, /^"v2-sha256:[0-9a-f]{64}"$/);
        const bytesA = new Uint8Array(await a.arrayBuffer());
        assertEquals(bytesA, new Uint8Array(await b.arrayBuffer()));
        assertEquals([...(await unpackArchive(bytesA)).keys()], ["flags/b.toml", "namespace.toml"]);
      },
    );

    await t.step(
      "If-None-Match with the current ETag gets 304; an old version stays downloadable",
      async () => {
        const first = await fetch(`${inst.url}${BASE}/manifest`, {
          headers: { authorization: `Bearer ${inst.admin}` },
        });
        await first.body?.cancel();
        const again = await fetch(`${inst.url}${BASE}/manifest`, {
          headers: {
            authorization: `Bearer ${inst.admin}`,
            "if-none-match": first.headers.get("etag")!,
          },
        });
        assertEquals(again.status, 304);
        await again.body?.cancel();
        const v1 = await inst.api("GET", `${BASE}/manifest?version=1`, inst.admin, undefined, {
          accept: "application/json",
        });
        assertEquals(Object.keys(v1.body.files).sort(), ["flags/a.toml", "namespace.toml"]);
        const missing = await inst.api("GET", `${BASE}/manifest?version=99`, inst.admin);
        assertEquals(missing.status, 404);
      },
    );

    await t.step(
      "versions lists metadata newest first, with author, message and file count",
      async () => {
        const res = await inst.api("GET", `${BASE}/versions`, inst.admin);
        assertEquals(res.status, 200);
        assertEquals(res.body.versions.map((v: { version: number }) => v.version), [2, 1, 0]);
        assertEquals(res.body.versions[0].message, "tarball");
        assertEquals(res.body.versions[1].message, "first");
        assertEquals(res.body.versions[1].file_count, 2);
        assert(res.body.versions[0].created_by.startsWith("tok_"));
        const one = await inst.api("GET", `${BASE}/versions/1`, inst.admin);
        assertEquals(one.body.version.version, 1);
        assertEquals(one.body.version.tree, undefined);
      },
    );

    await t.step("rollback creates a new version whose files equal the old one", async () => {
      const res = await inst.api("POST", `${BASE}/rollback`, inst.admin, { version: 1 });
      assertEquals(res.status, 201);
      assertEquals(res.body.version, 3);
      const v1 = await inst.api("GET", `${BASE}/manifest?version=1`, inst.admin, undefined, {
        accept: "application/json",
      });
      const v3 = await inst.api("GET", `${BASE}/manifest?version=3`, inst.admin, undefined, {
        accept: "application/json",
      });
      assertEquals(v3.body.files, v1.body.files);
      assertEquals(v3.body.closure_hash, v1.body.closure_hash);
    });

    await t.step("If-Match with a stale version gets 412 and changes nothing", async () => {
      const res = await inst.api(
        "PUT",
        `${BASE}/manifest`,
        inst.admin,
        { files: { "namespace.toml": NS, "flags/c.toml": flag("C") } },
        { "if-match": '"v1"' },
      );
      assertEquals(res.status, 412);
      assertEquals(res.body.code, "precondition_failed");
      assertEquals(await head(inst), 3);
    });

    await t.step(
      "an invalid manifest gets 422 with every problem, and no version is created",
      async () => {
        const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, {
          files: {
            "namespace.toml": NS,
            "flags/bad.toml": 'schema_version = 2\ntype = "boolean"\n',
            "README.md": "hello",
          },
        });
        assertEquals(res.status, 422);
        assertEquals(res.body.code, "invalid_manifest");
        const paths = res.body.details.problems.map((p: { path: string }) => p.path);
        assert(paths.includes("README.md"), JSON.stringify(paths));
        assert(paths.includes("flags/bad.toml"), JSON.stringify(paths));
        assert(res.body.details.problems.length >= 3);
        assertEquals(await head(inst), 3);
      },
    );

    await t.step("lint answers ok or the problems without storing anything", async () => {
      const good = await inst.api("POST", `${BASE}/lint`, inst.admin, {
        files: { "namespace.toml": NS },
      });
      assertEquals(good.body, { ok: true, problems: [] });
      const bad = await inst.api("POST", `${BASE}/lint`, inst.admin, {
        files: { "flags/x.toml": "not = = toml" },
      });
      assertEquals(bad.body.ok, false);
      assertEquals(bad.body.problems[0].path, "flags/x.toml");
      assertEquals(typeof bad.body.problems[0].line, "number");
      assertEquals(await head(inst), 3);
    });

    await t.step("bad bodies get 400 or 413 and leave the store unchanged", async () => {
      const cases: [BodyInit, Record<string, string>, number][] = [
        ["{not json", { "content-type": "application/json" }, 400],
        ["[1,2]", { "content-type": "application/json" }, 400],
        ['{"files": {"namespace.toml": 5}}', { "content-type": "application/json" }, 400],
        ['{"files": "x"}', { "content-type": "application/json" }, 400],
        ["plain bytes, no archive", { "content-type": "application/gzip" }, 400],
        [new Uint8Array(17 * 1024 * 1024), { "content-type": "application/gzip" }, 413],
      ];
      for (const [body, headers, status] of cases) {
        const res = await fetch(`${inst.url}${BASE}/manifest`, {
          method: "PUT",
          body,
          headers: { ...headers, authorization: `Bearer ${inst.admin}` },
        });
        assertEquals(res.status, status, `body ${String(body).slice(0, 30)}`);
        const envelope = await res.json();
        assertEquals(envelope.code, status === 413 ? "payload_too_large" : "invalid_request");
      }
      for (const name of ["../escape.toml", "/etc/passwd", "flags/../../x.toml"]) {
        const tar = await packTar([{ header: { name, size: 1 }, body: "x" }]);
        const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, tar, {
          "content-type": "application/x-tar",
        });
        assertEquals(res.status, 400, name);
      }
      const link = await packTar([{
        header: { name: "flags/a.toml", size: 0, type: "symlink", linkname: "/etc/passwd" },
      }]);
      const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, link, {
        "content-type": "application/x-tar",
      });
      assertEquals(res.status, 400);
      assertEquals(await head(inst), 3);
    });

    await t.step("an unknown namespace is 404 namespace_not_found", async () => {
      const res = await inst.api(
        "GET",
        "/api/v1/tenants/acme/namespaces/nope/manifest",
        inst.admin,
      );
      assertEquals(res.status, 404);
      assertEquals(res.body.code, "namespace_not_found");
    });
  });
});

Deno.test("two concurrent pushes from the same base: with If-Match one wins and one gets 412; without, both land", async () => {
  await withInstallation(async (inst) => {
    const push = (label: string, ifMatch?: string) =>
      inst.api(
        "PUT",
        `${BASE}/manifest`,
        inst.admin,
        { files: { "namespace.toml": NS, [`flags/${label}.toml`]: flag(label) } },
        ifMatch ? { "if-match": ifMatch } : {},
      );
    for (let round = 0; round < 3; round++) {
      const base = await head(inst);
      const results = await Promise.all([
        push(`x${round}`, `"v${base}"`),
        push(`y${round}`, `"v${base}"`),
      ]);
      const statuses = results.map((r) => r.status).sort();
      assertEquals(statuses, [201, 412]);
      assertEquals(await head(inst), base + 1);
    }
    const base = await head(inst);
    const free = await Promise.all([push("p"), push("q"), push("r")]);
    assertEquals(free.map((r) => r.status), [201, 201, 201]);
    assertEquals(free.map((r) => r.body.version).sort(), [base + 1, base + 2, base + 3]);
    assertEquals(await head(inst), base + 3);
  });
});

Deno.test("a server killed mid-push leaves the old or the new version, never a partial one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-kill-" });
  const kvPath = `${dir}/kv.sqlite3`;
  try {
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    const admin = boot.stdout.trim().split("\n").at(-1)!;
    const auth = { authorization: `Bearer ${admin}` };
    let server = await startServer({ kv: kvPath });
    await fetch(`${server.url}/api/v1/tenants`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ slug: "acme" }),
    }).then((r) => r.body?.cancel());
    await fetch(`${server.url}/api/v1/tenants/acme/namespaces`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ slug: "web" }),
    }).then((r) => r.body?.cancel());
    // A large manifest (many files) makes the push take long enough to be killed inside it.
    const big = (n: number) => {
      const files: Record<string, string> = { "namespace.toml": NS };
      for (let i = 0; i < 1500; i++) {
        files[`flags/f${n}-${i}.toml`] = flag(`${n}-${i}-${"x".repeat(200)}`);
      }
      return files;
    };
    const outcomes: string[] = [];
    for (const [i, delay] of [5, 40, 120, 400].entries()) {
      const before = await fetch(`${server.url}${BASE}`, { headers: auth }).then((r) => r.json());
      const push = fetch(`${server.url}${BASE}/manifest`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ files: big(i) }),
      }).then((r) => r.status, () => "killed");
      await new Promise((r) => setTimeout(r, delay));
      await server.kill();
      outcomes.push(String(await push));
      server = await startServer({ kv: kvPath });
      const after = await fetch(`${server.url}${BASE}`, { headers: auth }).then((r) => r.json());
      const v = after.namespace.head.version;
      assert(
        v === before.namespace.head.version || v === before.namespace.head.version + 1,
        `head moved from ${before.namespace.head.version} to ${v}`,
      );
      // Every version that exists reads back whole and matches its recorded hash.
      const manifest = await fetch(`${server.url}${BASE}/manifest`, {
        headers: { ...auth, accept: "application/json" },
      }).then((r) => r.json());
      const enc = new TextEncoder();
      const files = new Map(
        Object.entries(manifest.files as Record<string, string>).map((
          [k, t],
        ) => [k, enc.encode(t)]),
      );
      assertEquals(await closureHash(files), manifest.closure_hash);
      assertEquals(manifest.version, v);
      if (v > 0) assertEquals(files.size, 1501);
    }
    await server.stop();
    // at least one push must have been cut off for the test to mean anything
    assert(outcomes.includes("killed"), `outcomes: ${outcomes.join(",")}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two serve processes on one KV file see each other's writes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-two-" });
  const kvPath = `${dir}/kv.sqlite3`;
  try {
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    const admin = boot.stdout.trim().split("\n").at(-1)!;
    const auth = { authorization: `Bearer ${admin}`, "content-type": "application/json" };
    const [a, b] = await Promise.all([startServer({ kv: kvPath }), startServer({ kv: kvPath })]);
    try {
      const created = await fetch(`${a.url}/api/v1/tenants`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ slug: "acme" }),
      });
      assertEquals(created.status, 201);
      await created.body?.cancel();
      const seen = await fetch(`${b.url}/api/v1/tenants/acme`, { headers: auth });
      assertEquals(seen.status, 200);
      await seen.body?.cancel();
      await fetch(`${b.url}/api/v1/tenants/acme/namespaces`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ slug: "web" }),
      }).then((r) => r.body?.cancel());
      const pushed = await fetch(`${a.url}${BASE}/manifest`, {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ files: { "namespace.toml": NS } }),
      }).then((r) => r.json());
      const read = await fetch(`${b.url}${BASE}/manifest`, {
        headers: { ...auth, accept: "application/json" },
      }).then((r) => r.json());
      assertEquals(read.version, pushed.version);
      assertEquals(read.closure_hash, pushed.closure_hash);
      // a token minted through one process authenticates on the other
      const minted = await fetch(`${a.url}/api/v1/tokens`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          type: "namespace-read",
          name: "r",
          tenant_slug: "acme",
          namespace_slug: "web",
        }),
      }).then((r) => r.json());
      const viaB = await fetch(`${b.url}${BASE}/manifest`, {
        headers: { authorization: `Bearer ${minted.secret}` },
      });
      assertEquals(viaB.status, 200);
      await viaB.body?.cancel();
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
