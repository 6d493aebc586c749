/**
 * Load script: how long one push of N distinct flag files takes through the
 * service's request handler, on a KV file in a temp dir (the embedded store
 * of `cfgtool serve`), first as a new manifest, then with half of the files
 * changed (comments only). The same pushes go to a second namespace whose
 * production environment is then protected: its second push pays for the guard
 * that tells which environments the change affects (none), the yardstick
 * being the unprotected push of the same run.
 *
 *     deno run -A --unstable-kv bench/large_push.ts [flags=9999] [kv=<temp file>]
 *
 * @module
 */
import { createServer } from "../server.ts";
import { randomTokenKey } from "../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../lib/auth/bootstrap.ts";
import { createTenant } from "../lib/store/tenants.ts";
import { createNamespace } from "../lib/store/namespaces.ts";
import { openKv } from "../lib/store/kv.ts";

const count = Number(Deno.args[0] ?? 9_999); // with namespace.toml: the 10,000 files a manifest may hold
const dir = await Deno.makeTempDir();
const kv = await openKv(Deno.args[1] ?? `${dir}/kv.sqlite3`);
const key = await randomTokenKey();
const { secret } = await bootstrapSuperadmin(kv, key);
await createTenant(kv, { slug: "acme", created_by: "bench" });
await createNamespace(kv, { tenant: "acme", slug: "big", created_by: "bench" });
await createNamespace(kv, { tenant: "acme", slug: "guarded", created_by: "bench" });
const server = createServer({ kv, key, log: () => {} });

const files: Record<string, string> = {
  "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n",
};
for (let i = 0; i < count; i++) {
  files[`flags/f${i}.toml`] =
    `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${i}\n`;
}
/** PUT a request to the handler; the status and the ms it took. */
async function send(path: string, method: string, body: unknown): Promise<[number, number]> {
  const t0 = performance.now();
  const res = await server.fetch(
    new Request(`http://bench/api/v1/tenants/acme/namespaces/${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  await res.body?.cancel();
  return [res.status, performance.now() - t0];
}

try {
  for (const round of ["new manifest", "half the files changed"]) {
    if (round !== "new manifest") {
      for (let i = 0; i < count; i += 2) files[`flags/f${i}.toml`] += "# changed\n";
      // production is protected once it exists (declaring it is a change to it)
      const protect = { environments: { production: { required_approvals: 1 } } };
      const [status] = await send("guarded/protection", "PUT", protect);
      if (status !== 200) throw new Error(`protection answered ${status}`);
    }
    for (const ns of ["big", "guarded"]) {
      // each namespace its own bytes: neither push finds the other's blobs stored
      const own = Object.fromEntries(
        Object.entries(files).map(([path, text]) => [path, `${text}# ${ns}\n`]),
      );
      const [status, ms] = await send(`${ns}/manifest`, "PUT", { files: own });
      if (status !== 201) throw new Error(`push answered ${status}`);
      const what = ns === "big" ? "" : ", production protected";
      console.log(`${count} files, ${round}${what}: ${ms.toFixed(0)} ms`);
    }
  }
} finally {
  await server.close();
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
