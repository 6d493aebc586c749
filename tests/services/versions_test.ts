/**
 * The version reads (lib/services/versions.ts): the list (the API's and
 * the console's), one version's metadata, one version with what it
 * changed, the files that differ between two versions, one flag of the
 * head, and the parsed-version cache; each authorises once and refuses
 * before reading.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import type { SessionPrincipal } from "../../lib/auth/principal.ts";
import { ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import { pushManifest } from "../../lib/services/manifests.ts";
import {
  fileText,
  flagView,
  listVersionPage,
  ManifestViews,
  versionDetails,
  versionDiff,
  versionMeta,
} from "../../lib/services/versions.ts";
import { addNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { createUser } from "../../lib/store/users.ts";
import { countingKv } from "./kv_reads.ts";
import { serviceTest, type ServiceWorld } from "./world.ts";

const web = { tenant: "acme", namespace: "web" };
const ctx = { requestId: "req-versions" };
const decoder = new TextDecoder();

const NAMESPACE =
  "schema_version = 1\n[namespace.environments.prod]\n[namespace.environments.qa]\n";
const DARK = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\n' +
  "off = false\n";

/** Pushes files to acme/web as the superadmin; returns the new version. */
async function push(w: ServiceWorld, files: Record<string, string>, message = "push") {
  const bytes = new TextEncoder().encode(JSON.stringify({ files, message }));
  const pushed = await pushManifest(w.services, w.superadmin, web, {
    upload: { format: "json", bytes },
  }, ctx);
  if ("proposed" in pushed) throw new Error("a push without propose commits");
  return pushed.version.version;
}

/** A person signed in to acme; a namespace admin of acme/web when `admin`. */
async function person(w: ServiceWorld, email: string, admin: boolean): Promise<SessionPrincipal> {
  const user = await createUser(w.kv, { email });
  if (admin) {
    await addNamespaceAdmin(w.kv, { ...web, user_id: user.id, added_by: "test" });
  }
  return {
    kind: "session",
    user_id: user.id,
    session_id: `ssn_${email}`,
    tenants: ["acme"],
    groups: [],
    since: new Date().toISOString(),
  };
}

serviceTest("the version list pages newest first and needs versions.read", async (w) => {
  for (let i = 0; i < 3; i++) await push(w, { "namespace.toml": `${NAMESPACE}# ${i}\n` });
  const first = await listVersionPage(w.services, w.superadmin, web, { limit: 2 });
  assertEquals(first.head.version, 3);
  assertEquals(first.items.map((v) => v.version), [3, 2]);
  assertEquals(first.next, "2");
  const rest = await listVersionPage(w.services, w.superadmin, web, () => ({ after: 2 }));
  assertEquals(rest.items.map((v) => v.version), [1, 0]);
  assertEquals(rest.next, null);

  const reader = await w.asWeb("namespace-read"); // reads the manifest, not the version history
  let read = false;
  await assertRejects(
    () =>
      listVersionPage(w.services, reader, web, () => {
        read = true;
        return {};
      }),
    ForbiddenError,
  );
  assert(!read, "the request was read before authorisation");
  const member = await person(w, "ana@acme.test", false);
  assertEquals((await listVersionPage(w.services, member, web, {})).items.length, 4);
});

serviceTest("one version's metadata, or 404 version_not_found", async (w) => {
  await push(w, { "namespace.toml": NAMESPACE }, "first");
  const meta = await versionMeta(w.services, w.superadmin, web, () => 1);
  assertEquals(meta.message, "first");
  assertEquals(meta.file_count, 1);
  const err = await assertRejects(
    () => versionMeta(w.services, w.superadmin, web, 9),
    NotFoundError,
  );
  assertEquals(err.code, "version_not_found");
  await assertRejects(
    () => versionMeta(w.services, w.superadmin, { tenant: "acme", namespace: "nope" }, 0),
    NotFoundError,
  );
});

serviceTest(
  "a version's details hold its files, only the files it changed, and the right to roll back",
  async (w) => {
    await push(w, { "namespace.toml": NAMESPACE, "flags/dark.toml": DARK });
    await push(w, {
      "namespace.toml": NAMESPACE,
      "flags/dark.toml": DARK.replace('default = "off"', 'default = "on"'),
      "flags/new.toml": DARK,
    });
    const v2 = await versionDetails(w.services, w.superadmin, web, 2);
    assertEquals(v2.head.version, 2);
    assertEquals([...v2.files.keys()], ["flags/dark.toml", "flags/new.toml", "namespace.toml"]);
    assertEquals([...v2.changes!.before.keys()], ["flags/dark.toml"]);
    assertEquals([...v2.changes!.after.keys()].sort(), ["flags/dark.toml", "flags/new.toml"]);
    assertEquals(v2.mayWrite, true);
    assertEquals((await versionDetails(w.services, w.superadmin, web, 0)).changes, null);

    const member = await person(w, "ana@acme.test", false);
    const seen = await versionDetails(w.services, member, web, 1);
    assertEquals(seen.mayWrite, false);
    assertEquals(seen.changes!.before.size, 0); // version 0 is empty
    await assertRejects(() => versionDetails(w.services, member, web, 7), NotFoundError);
    const outsider = await w.as({
      type: "namespace-write",
      name: "o",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    await assertRejects(() => versionDetails(w.services, outsider, web, 1), ForbiddenError);
  },
);

serviceTest("a diff reads both versions and only the files that differ", async (w) => {
  await push(w, { "namespace.toml": NAMESPACE, "flags/dark.toml": DARK });
  await push(w, { "namespace.toml": NAMESPACE, "flags/other.toml": DARK });
  const diff = await versionDiff(w.services, w.superadmin, web, { from: 1, to: 2 });
  assertEquals([diff.from.version, diff.to.version, diff.head.version], [1, 2, 2]);
  assertEquals([...diff.before.keys()], ["flags/dark.toml"]);
  assertEquals([...diff.after.keys()], ["flags/other.toml"]);
  assertEquals(decoder.decode(diff.after.get("flags/other.toml")), DARK);
  const same = await versionDiff(w.services, w.superadmin, web, { from: 2, to: 2 });
  assertEquals([same.before.size, same.after.size], [0, 0]);
  const err = await assertRejects(
    () => versionDiff(w.services, w.superadmin, web, { from: 8, to: 9 }),
    NotFoundError,
  );
  assertEquals(err.message, "No version 8 of acme/web", "the first missing version is named");
});

serviceTest(
  "a flag's page reads the head once, the flag and environment, and asks for the write right only with an environment",
  async (w) => {
    await push(w, { "namespace.toml": NAMESPACE, "flags/dark.toml": DARK });
    const counted = countingKv(w.kv);
    const deps = { ...w.services, kv: counted.kv, views: new ManifestViews() };
    const writer = await person(w, "nia@acme.test", true);
    counted.reset();
    const shown = await flagView(deps, writer, web, { flag: "dark", env: "prod" });
    assertEquals(shown.flag.default, "off");
    assertEquals(shown.mayWrite, true);
    assertEquals(counted.reads("ns_head"), 1);
    counted.reset();
    // the flag as written offers its editors to a writer too
    assertEquals((await flagView(deps, writer, web, { flag: "dark", env: "" })).mayWrite, true);

    const member = await person(w, "ana@acme.test", false);
    assertEquals((await flagView(deps, member, web, { flag: "dark", env: "qa" })).mayWrite, false);
    const flag = await assertRejects(
      () => flagView(deps, member, web, { flag: "nope", env: "" }),
      NotFoundError,
    );
    assertEquals(flag.message, "Version 1 of acme/web has no flag nope");
    const env = await assertRejects(
      () => flagView(deps, member, web, { flag: "dark", env: "eu" }),
      NotFoundError,
    );
    assertEquals(env.code, "environment_not_found");
  },
);

serviceTest(
  "a view of a version keeps its files and when each file last changed",
  async (w) => {
    await push(w, { "namespace.toml": NAMESPACE, "flags/dark.toml": DARK });
    await push(w, { "namespace.toml": NAMESPACE, "flags/dark.toml": `${DARK}# v2\n` });
    const views = new ManifestViews();
    const head = await views.load(w.services, w.superadmin, web);
    assertEquals(head.meta.version, 2);
    assertEquals(fileText(head, "flags/dark.toml"), `${DARK}# v2\n`);
    assertEquals(
      Object.fromEntries(await head.lastChanges()),
      { "flags/dark.toml": 2, "namespace.toml": 1 },
    );
    assert((await head.lastChanges()) === (await head.lastChanges()), "read once, then kept");
    const first = await views.view(w.services, web, head.head, 1);
    assertEquals(first.head.version, 2);
    assertEquals(fileText(first, "flags/dark.toml"), DARK);
    await assertRejects(() => views.view(w.services, web, head.head, 5), NotFoundError);
    const reader = await w.asWeb("namespace-read");
    assertEquals((await views.load(w.services, reader, web, 1)).meta.version, 1);
    const outsider = await w.as({
      type: "namespace-read",
      name: "o",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    await assertRejects(() => views.load(w.services, outsider, web), ForbiddenError);
  },
);
