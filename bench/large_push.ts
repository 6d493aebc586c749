/**
 * Load script: how long one push of N distinct flag files takes through the
 * service's request handler, on a KV file in a temp dir (the embedded store
 * of `cfgtool serve`), first as a new manifest, then with half of the files
 * changed.
 *
 *     deno run -A --unstable-kv bench/large_push.ts [files=10000] [kv=<temp file>]
 *
 * @module
 */
import { createServer } from "../server.ts";
import { randomTokenKey } from "../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../lib/auth/bootstrap.ts";
import { createTenant } from "../lib/store/tenants.ts";
import { createNamespace } from "../lib/store/namespaces.ts";
import { openKv } from "../lib/store/kv.ts";

const count = Number(Deno.args[0] ?? 10_000);
const dir = await Deno.makeTempDir();
const kv = await openKv(Deno.args[1] ?? `${dir}/kv.sqlite3`);
const key = await randomTokenKey();
const { secret } = await bootstrapSuperadmin(kv, key);
await createTenant(kv, { slug: "acme", created_by: "bench" });
await createNamespace(kv, { tenant: "acme", slug: "big", created_by: "bench" });
const server = createServer({ kv, key, log: () => {} });

const files: Record<string, string> = {
  "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n",
};
for (let i = 0; i < count; i++) {
  files[`flags/f${i}.toml`] =
    `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${i}\n`;
}
try {
  for (const round of ["new manifest", "half the files changed"]) {
    if (round !== "new manifest") {
      for (let i = 0; i < count; i += 2) files[`flags/f${i}.toml`] += "# changed\n";
    }
    const t0 = performance.now();
    const res = await server.fetch(
      new Request("http://bench/api/v1/tenants/acme/namespaces/big/manifest", {
        method: "PUT",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ files }),
      }),
    );
    await res.body?.cancel();
    if (res.status !== 201) throw new Error(`push answered ${res.status}`);
    console.log(`${count} files, ${round}: ${(performance.now() - t0).toFixed(0)} ms`);
  }
} finally {
  await server.close();
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
