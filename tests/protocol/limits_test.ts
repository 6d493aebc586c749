import { assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { InvalidRequestError, ProblemsError } from "../../lib/errors.ts";
import { createTenant, findTenant } from "../../lib/store/tenants.ts";
import { createNamespace, findNamespace } from "../../lib/store/namespaces.ts";
import { getHead } from "../../lib/store/versions.ts";
import { commitVersion } from "../store/commit.ts";
import { insertTokenOps, type TokenRecord } from "../../lib/store/tokens.ts";
import { createUser, findUser } from "../../lib/store/users.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_ENVIRONMENTS } from "../../lib/protocol/limits.ts";
import { withKv } from "../store/world.ts";

const HUGE = "y".repeat(70 * 1024); // over the 64 KiB KV value limit

Deno.test("a tenant or namespace description over the limit is 400 naming description, and nothing is stored", async () => {
  await withKv(async (kv) => {
    const err = await assertRejects(
      () => createTenant(kv, { slug: "big", description: HUGE, created_by: "tok_1" }),
      InvalidRequestError,
    );
    assertEquals(err.details, { field: "description", limit: MAX_DESCRIPTION_LENGTH });
    assertEquals(await findTenant(kv, "big"), null);
    await createTenant(kv, {
      slug: "acme",
      description: "d".repeat(MAX_DESCRIPTION_LENGTH),
      created_by: "tok_1",
    });
    await assertRejects(
      () =>
        createNamespace(kv, { tenant: "acme", slug: "web", description: HUGE, created_by: "x" }),
      InvalidRequestError,
    );
    assertEquals(await findNamespace(kv, "acme", "web"), null);
  });
});

Deno.test("a push message over the limit and too many environments are refused before any write", async () => {
  await withKv(async (kv) => {
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
    const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
    const base = { tenant: "acme", namespace: "web", files, created_by: "tok_1" };
    const err = await assertRejects(
      () => commitVersion(kv, { ...base, environments: {}, message: HUGE }),
      InvalidRequestError,
    );
    assertEquals(err.details?.field, "message");
    const environments = Object.fromEntries(
      Array.from(
        { length: 2000 },
        (_, i) => [`env-${i}-${"e".repeat(55)}`, { public_evaluate: false }],
      ),
    );
    const problems = await assertRejects(
      () => commitVersion(kv, { ...base, environments }),
      ProblemsError,
    );
    assertEquals(problems.problems[0]!.key, "namespace.environments");
    assertEquals((await getHead(kv, "acme", "web"))?.version, 0);
    const ok = Object.fromEntries(
      Array.from({ length: MAX_ENVIRONMENTS }, (_, i) => [`env-${i}`, { public_evaluate: true }]),
    );
    assertEquals((await commitVersion(kv, { ...base, environments: ok })).version.version, 1);
  });
});

Deno.test("a token record with a long description or too many origins is refused before the commit", () => {
  const record = {
    id: "tok_1",
    name: "n",
    digest: "d",
    tenant_slug: "acme",
    namespace_slug: "web",
    description: null,
    allowed_origins: [] as string[],
  } as unknown as TokenRecord;
  const op = { check: () => op, set: () => op } as unknown as Deno.AtomicOperation;
  insertTokenOps(op, record);
  assertEquals(
    assertThrows(() => insertTokenOps(op, { ...record, description: HUGE }), InvalidRequestError)
      .details
      ?.field,
    "description",
  );
  const origins = Array.from({ length: 2000 }, (_, i) => `https://h${i}.example.com`);
  assertEquals(
    assertThrows(
      () => insertTokenOps(op, { ...record, allowed_origins: origins }),
      InvalidRequestError,
    )
      .details?.field,
    "allowed_origins",
  );
  assertThrows(
    () => insertTokenOps(op, { ...record, allowed_origins: [`https://${"h".repeat(300)}.com`] }),
    InvalidRequestError,
  );
});

Deno.test("a user email over 254 characters is refused, and looking one up finds nobody", async () => {
  await withKv(async (kv) => {
    const email = `${"a".repeat(3000)}@example.com`;
    const err = await assertRejects(() => createUser(kv, { email }), InvalidRequestError);
    assertEquals(err.details?.field, "email");
    assertEquals(await findUser(kv, email), null);
  });
});
