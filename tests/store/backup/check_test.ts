/**
 * The full store check: a store made through the store's own functions
 * (tenants, namespaces, versions with multi-chunk files, tokens, a user
 * with a membership and a session) has no problem; each kind of damage,
 * made one at a time, is found and named; harmless leftovers of an
 * interrupted deletion are warnings, not problems.
 */
import { assert, assertEquals } from "../../assert.ts";
import { closureHashOfDigests } from "../../../lib/closure/hash.ts";
import { createSession } from "../../../lib/auth/sessions.ts";
import { randomTokenKey } from "../../../lib/auth/hmac_key.ts";
import { checkStore, type StoreCheckReport } from "../../../lib/store/backup/check.ts";
import { recordKeyFingerprint } from "../../../lib/store/key_check.ts";
import { insertTokenOps } from "../../../lib/store/tokens.ts";
import { addTenantAdmin } from "../../../lib/store/tenants.ts";
import { createUser } from "../../../lib/store/users.ts";
import { getHead } from "../../../lib/store/versions.ts";
import { commitVersion } from "../commit.ts";
import { tokenRecord } from "../token_record.ts";
import { seedStore } from "../world.ts";

const enc = new TextEncoder();

/** A sound store: two namespaces, versions with a 150 KiB file, tokens, a user, a session. */
async function soundStore(): Promise<Deno.Kv> {
  const kv = await Deno.openKv(":memory:");
  await seedStore(kv, { namespaces: ["web", "api"] });
  const big = new Uint8Array(150 * 1024).map((_, i) => (i * 7) & 0xff);
  for (let v = 1; v <= 2; v++) {
    await commitVersion(kv, {
      tenant: "acme",
      namespace: "web",
      files: new Map([
        ["namespace.toml", enc.encode(`schema_version = 1 # ${v}\n`)],
        ["flags/big.toml", big],
      ]),
      environments: {},
      created_by: "test",
    });
  }
  const tokens = [
    tokenRecord({ id: "tok_1", name: "client", digest: "d1" }),
    tokenRecord({ id: "tok_2", name: "old", digest: "d2", status: "revoked" }),
    tokenRecord({
      id: "tok_3",
      type: "superadmin",
      name: "bootstrap-1",
      digest: "d3",
      tenant_slug: null,
      namespace_slug: null,
      environment_slug: null,
      allowed_origins: [],
    }),
  ];
  for (const t of tokens) {
    const op = insertTokenOps(kv.atomic(), t);
    assert((await op.commit()).ok);
  }
  // the revoked token freed its name, as transitionToken does
  await kv.delete(["token_by_name", "acme", "web", "old"]);
  const user = await createUser(kv, { email: "ana@acme.test" });
  await addTenantAdmin(kv, { tenant: "acme", user_id: user.id, added_by: "test" });
  await createSession(kv, await randomTokenKey(), { user: user.id, ttl: 3_600_000 });
  await recordKeyFingerprint(kv, "9f2c");
  return kv;
}

const check = (kv: Deno.Kv) => checkStore(kv, { closureHashOfDigests });

function problemsOf(r: StoreCheckReport): string[] {
  return r.problems.map((p) => `${p.where}: ${p.message}`);
}

/** Damages a sound store with `damage` and returns the problems found. */
async function problemsAfter(damage: (kv: Deno.Kv) => Promise<unknown>): Promise<string[]> {
  const kv = await soundStore();
  try {
    await damage(kv);
    return problemsOf(await check(kv));
  } finally {
    kv.close();
  }
}

/** The id of the big file's blob in a sound store. */
async function bigBlobId(kv: Deno.Kv): Promise<string> {
  for await (const e of kv.list<{ chunks: number }>({ prefix: ["blob_meta"] })) {
    if (e.value.chunks === 3) return e.key[1] as string;
  }
  throw new Error("no three-chunk blob");
}

function assertOne(problems: string[], expected: RegExp): void {
  assert(problems.length >= 1 && problems.every((p) => expected.test(p)), problems.join("\n"));
}

Deno.test("a store made by the store's own functions has no problem and every version verifies", async () => {
  const kv = await soundStore();
  try {
    const r = await check(kv);
    assertEquals(problemsOf(r), []);
    assertEquals(r.warnings, []);
    assertEquals(r.counts.tenants, 1);
    assertEquals(r.counts.namespaces, 2);
    assertEquals(r.counts.versions, 4, "v0 and v1, v2 of web, v0 of api");
    assertEquals(r.counts.versions_verified, 4);
    assertEquals([r.counts.tokens, r.counts.sessions, r.counts.users], [3, 1, 1]);
    assert(r.counts.blob_bytes > 150 * 1024);
    assertEquals(r.key_fingerprint, "9f2c");
    await kv.delete(["token_key_check"]);
    assertEquals((await check(kv)).warnings.map((w) => w.message), [
      "the store records no token-key fingerprint: the key file it needs cannot be checked",
    ]);
  } finally {
    kv.close();
  }
});

Deno.test("a changed chunk of a file is found, with every version that holds the file", async () => {
  const problems = await problemsAfter(async (kv) => {
    const id = await bigBlobId(kv);
    const chunk = (await kv.get<Uint8Array>(["blob", id, 1])).value!;
    chunk[0] = chunk[0]! ^ 1;
    await kv.set(["blob", id, 1], chunk);
  });
  assert(problems.some((p) => /^blob [0-9a-f]{12}…: its content does not hash to its id$/.test(p)));
  assertEquals(
    problems.filter((p) => p.includes("file flags/big.toml")).length,
    2,
    problems.join("\n"),
  );
});

Deno.test("a missing chunk, or missing content, of a file is found", async () => {
  assertOne(
    await problemsAfter(async (kv) => kv.delete(["blob", await bigBlobId(kv), 2])),
    /blob .*: 2 chunk\(s\) stored, its metadata says 3|file flags\/big.toml: blob .* is missing or damaged/,
  );
  const gone = await problemsAfter(async (kv) => {
    const id = await bigBlobId(kv);
    for (const i of [0, 1, 2]) await kv.delete(["blob", id, i]);
  });
  assert(gone.some((p) => p.endsWith("its metadata exists but no content")), gone.join("\n"));
});

Deno.test("a head naming a version that is gone, or another closure hash, is found", async () => {
  assertEquals(
    await problemsAfter((kv) => kv.delete(["version", "acme", "web", 2])),
    ["acme/web: the head names version 2, which is not stored"],
  );
  const other = await problemsAfter(async (kv) => {
    const head = (await getHead(kv, "acme", "web"))!;
    await kv.set(["ns_head", "acme", "web"], { ...head, closure_hash: "sha256:" + "0".repeat(64) });
  });
  assertOne(
    other,
    /^acme\/web: the head says version 2 has closure hash sha256:0{64}, the version records sha256:/,
  );
});

Deno.test("a version whose files do not hash to its closure hash is found", async () => {
  const problems = await problemsAfter(async (kv) => {
    const v = (await kv.get<Record<string, unknown>>(["version", "acme", "web", 1])).value!;
    await kv.set(["version", "acme", "web", 1], { ...v, closure_hash: "sha256:" + "1".repeat(64) });
  });
  assertOne(
    problems,
    /^acme\/web v1: its files hash to sha256:[0-9a-f]{64}, the version records sha256:1{64}$/,
  );
});

Deno.test("a namespace without its head, and a head without its namespace, are found", async () => {
  assertEquals(
    await problemsAfter((kv) => kv.delete(["ns_head", "acme", "api"])),
    ["acme/api: the namespace has no head (no current version)"],
  );
  const noRecord = await problemsAfter((kv) => kv.delete(["ns", "acme", "api"]));
  assertEquals(noRecord, ["acme/api: a head without a namespace record"]);
});

Deno.test("a token whose digest index is gone, or points elsewhere, is found", async () => {
  assertEquals(
    await problemsAfter((kv) => kv.delete(["token_by_digest", "d1"])),
    ["token tok_1: its digest is not indexed: the token cannot authenticate"],
  );
  const swapped = await problemsAfter((kv) => kv.set(["token_by_digest", "d1"], "tok_3"));
  assert(
    swapped.includes("token tok_3: the digest index holds a digest the token record does not"),
  );
  assert(swapped.includes("token tok_1: its digest is not indexed: the token cannot authenticate"));
  const orphan = await problemsAfter((kv) => kv.set(["token_by_digest", "d9"], "tok_9"));
  assertEquals(orphan, ["token tok_9: its digest is indexed, but the token record is missing"]);
});

Deno.test("a token missing from its scope or name index is found", async () => {
  assertEquals(
    await problemsAfter((kv) => kv.delete(["token_by_namespace", "acme", "web", "tok_1"])),
    ["token tok_1: it is missing from the index of acme/web"],
  );
  assertEquals(
    await problemsAfter((kv) => kv.delete(["token_by_tenant", "acme", "tok_1"])),
    ["token tok_1: it is missing from the index of tenant acme"],
  );
  assertEquals(
    await problemsAfter((kv) =>
      kv.delete(["token_by_name", "_installation", "_installation", "bootstrap-1"])
    ),
    ["token tok_3: it is active, but its name bootstrap-1 is not indexed to it"],
  );
});

Deno.test("a live session without its digest index, a user without its email index, a half membership, are found", async () => {
  const session = await problemsAfter(async (kv) => {
    for await (const e of kv.list({ prefix: ["session_by_digest"] })) await kv.delete(e.key);
  });
  assertOne(
    session,
    /^session ssn_\w+: its digest is not indexed: the session cannot authenticate$/,
  );
  const email = await problemsAfter((kv) => kv.delete(["user_by_email", "ana@acme.test"]));
  assertOne(email, /^user usr_\w+: its email ana@acme.test is not indexed$/);
  const member = await problemsAfter(async (kv) => {
    for await (const e of kv.list({ prefix: ["tenant_admin_by_user"] })) await kv.delete(e.key);
  });
  assertOne(member, /^user usr_\w+: admin of acme: missing from the by-user index$/);
});

Deno.test("the versions of a namespace whose deletion was cut short are a warning, not a problem", async () => {
  const kv = await soundStore();
  try {
    await kv.delete(["ns", "acme", "web"]);
    await kv.delete(["ns_head", "acme", "web"]);
    const r = await check(kv);
    assertEquals(problemsOf(r), []);
    assertEquals(r.warnings.map((w) => `${w.where}: ${w.message}`), [
      "acme/web: 3 version(s) of a deleted namespace (an interrupted deletion)",
    ]);
    assertEquals(r.counts.versions_verified, 4, "their files are still checked");
  } finally {
    kv.close();
  }
});
