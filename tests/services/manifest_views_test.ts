/**
 * The parsed-version cache of the console (lib/console/manifest_view.ts)
 * is keyed by content: a namespace deleted and made again, whose version
 * numbers come back with other files, is never shown the old files.
 */
import { assertEquals } from "../assert.ts";
import { ManifestViews } from "../../lib/services/versions.ts";
import { Runtime } from "../../lib/runtime/runtime.ts";
import { consoleTest, FIXTURE } from "../console/world.ts";
import { sessionPrincipal } from "../../lib/auth/principal.ts";
import { findSessionRecord } from "../../lib/store/sessions.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";

consoleTest("a version number reused by a namespace made again shows its own files", async (w) => {
  const runtime = new Runtime({ kv: w.kv, key: w.key, log: () => {}, settings: DEFAULT_SETTINGS });
  try {
    const views = new ManifestViews();
    const person = sessionPrincipal((await findSessionRecord(w.kv, w.writer.session_id))!);
    const deps = { kv: w.kv, key: w.key, runtime };
    const ref = { tenant: "acme", namespace: "web" };
    await w.push({ ...FIXTURE, "flags/old-secret.toml": FIXTURE["flags/max-items.toml"]! });
    const old = await views.load(deps, person, ref, 1);
    assertEquals(Object.keys(old.manifest.flags).includes("old-secret"), false);
    const v2 = await views.load(deps, person, ref, 2);
    assertEquals(Object.keys(v2.manifest.flags).includes("old-secret"), true);

    assertEquals(
      (await w.call("DELETE", "/api/v1/tenants/acme/namespaces/web", { bearer: w.admin })).status <
        300,
      true,
    );
    assertEquals(
      (await w.call("POST", "/api/v1/tenants/acme/namespaces", {
        bearer: w.admin,
        json: { slug: "web" },
      })).status,
      201,
    );
    await w.call("POST", "/api/v1/tenants/acme/namespaces/web/admins", {
      bearer: w.admin,
      json: { user_id: w.writer.user_id },
    });
    await w.push(FIXTURE);
    await w.push({ ...FIXTURE, "flags/new-only.toml": FIXTURE["flags/max-items.toml"]! });
    await w.push({ ...FIXTURE, "flags/newer.toml": FIXTURE["flags/max-items.toml"]! });
    const again = await views.load(deps, person, ref, 2);
    assertEquals(Object.keys(again.manifest.flags).includes("old-secret"), false);
    assertEquals(Object.keys(again.manifest.flags).includes("new-only"), true);
  } finally {
    runtime.close();
  }
});
