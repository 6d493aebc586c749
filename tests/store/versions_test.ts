import { assert, assertEquals, assertRejects } from "../assert.ts";
import { NotFoundError, PreconditionFailedError } from "../../lib/errors.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { createNamespace } from "../../lib/store/namespaces.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { getHead, getVersion, listVersions, readFiles } from "../../lib/store/versions.ts";
import { commitVersion, type TestCommitInput } from "./commit.ts";

const enc = new TextEncoder();

async function withNamespace(fn: (kv: Deno.Kv) => Promise<void>) {
  const kv = await Deno.openKv(":memory:");
  try {
    await createTenant(kv, { slug: "acme", created_by: "test" });
    await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "test" });
    await fn(kv);
  } finally {
    kv.close();
  }
}

const push = (
  files: Record<string, string>,
  extra: Partial<TestCommitInput> = {},
): TestCommitInput => ({
  tenant: "acme",
  namespace: "web",
  files: new Map(Object.entries(files).map(([p, t]) => [p, enc.encode(t)])),
  environments: { production: { public_evaluate: false } },
  created_by: "usr_1",
  ...extra,
});

Deno.test("a new namespace has version 0: the empty manifest", () =>
  withNamespace(async (kv) => {
    const head = await getHead(kv, "acme", "web");
    assertEquals(head, {
      version: 0,
      closure_hash: await closureHash(new Map()),
      environments: {},
    });
    assertEquals((await readFiles(kv, "acme", "web", 0)).size, 0);
    assertEquals((await getVersion(kv, "acme", "web", 0)).file_count, 0);
  }));

Deno.test("commitVersion() writes version N+1 with metadata, head and environments", () =>
  withNamespace(async (kv) => {
    const r = await commitVersion(
      kv,
      push({ "namespace.toml": "a", "flags/x.toml": "b" }, { message: "first" }),
    );
    assertEquals(r.changed, true);
    assertEquals(
      [r.version.version, r.version.file_count, r.version.message, r.version.created_by],
      [1, 2, "first", "usr_1"],
    );
    const head = await getHead(kv, "acme", "web");
    assertEquals(head?.version, 1);
    assertEquals(head?.closure_hash, r.version.closure_hash);
    assertEquals(head?.environments, { production: { public_evaluate: false } });
    const files = await readFiles(kv, "acme", "web", 1);
    assertEquals([...files.keys()], ["flags/x.toml", "namespace.toml"]);
    assertEquals(new TextDecoder().decode(files.get("namespace.toml")), "a");
  }));

Deno.test("commitVersion() with unchanged content returns the head and changed: false", () =>
  withNamespace(async (kv) => {
    await commitVersion(kv, push({ "namespace.toml": "a" }));
    const again = await commitVersion(kv, push({ "namespace.toml": "a" }, { ifMatch: 1 }));
    assertEquals([again.changed, again.version.version], [false, 1]);
    assertEquals((await getHead(kv, "acme", "web"))?.version, 1);
  }));

Deno.test("commitVersion() with an ifMatch that is not the head is 412 precondition_failed", () =>
  withNamespace(async (kv) => {
    await commitVersion(kv, push({ "namespace.toml": "a" }));
    const err = await assertRejects(
      () => commitVersion(kv, push({ "namespace.toml": "b" }, { ifMatch: 0 })),
      PreconditionFailedError,
    );
    assertEquals([err.status, err.code], [412, "precondition_failed"]);
    assertEquals(
      (await commitVersion(kv, push({ "namespace.toml": "b" }, { ifMatch: 1 }))).version.version,
      2,
    );
  }));

Deno.test("two concurrent commits from the same base without ifMatch both land, as N+1 and N+2", () =>
  withNamespace(async (kv) => {
    const [a, b] = await Promise.all([
      commitVersion(kv, push({ "namespace.toml": "a" })),
      commitVersion(kv, push({ "namespace.toml": "b" })),
    ]);
    assertEquals([a.version.version, b.version.version].sort(), [1, 2]);
    assertEquals((await getHead(kv, "acme", "web"))?.version, 2);
  }));

Deno.test("two concurrent commits with the same ifMatch: exactly one wins, the other gets 412", () =>
  withNamespace(async (kv) => {
    const results = await Promise.allSettled([
      commitVersion(kv, push({ "namespace.toml": "a" }, { ifMatch: 0 })),
      commitVersion(kv, push({ "namespace.toml": "b" }, { ifMatch: 0 })),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected");
    assertEquals([won.length, lost.length], [1, 1]);
    assert((lost[0] as PromiseRejectedResult).reason instanceof PreconditionFailedError);
    assertEquals((await getHead(kv, "acme", "web"))?.version, 1);
  }));

Deno.test("commitVersion() on an unknown namespace is 404 namespace_not_found", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const err = await assertRejects(() => commitVersion(kv, push({})), NotFoundError);
    assertEquals(err.code, "namespace_not_found");
  } finally {
    kv.close();
  }
});

Deno.test("listVersions() pages newest first", () =>
  withNamespace(async (kv) => {
    for (const t of ["a", "b", "c"]) await commitVersion(kv, push({ "namespace.toml": t }));
    const p1 = await listVersions(kv, "acme", "web", { limit: 2 });
    assertEquals(p1.items.map((v) => v.version), [3, 2]);
    assertEquals(p1.next, "2");
    const p2 = await listVersions(kv, "acme", "web", { limit: 2, after: Number(p1.next) });
    assertEquals(p2.items.map((v) => v.version), [1, 0]);
    assertEquals(p2.next, null);
    const err = await assertRejects(() => getVersion(kv, "acme", "web", 9), NotFoundError);
    assertEquals(err.code, "version_not_found");
  }));

Deno.test("a push of 5,000 distinct files is written in tens of atomic commits, not thousands", () =>
  withNamespace(async (kv) => {
    let commits = 0;
    const atomic = kv.atomic.bind(kv);
    kv.atomic = () => {
      const op = atomic();
      const commit = op.commit.bind(op);
      op.commit = () => (commits++, commit());
      return op;
    };
    const files: Record<string, string> = { "namespace.toml": "ns" };
    for (let i = 0; i < 5000; i++) files[`flags/f${i}.toml`] = `flag ${i}`;
    const { version } = await commitVersion(kv, push(files));
    assertEquals(version.file_count, 5001);
    assert(commits <= 40, `${commits} commits`);
    const back = await readFiles(kv, "acme", "web", version.version);
    assertEquals(new TextDecoder().decode(back.get("flags/f4999.toml")), "flag 4999");
  }));
