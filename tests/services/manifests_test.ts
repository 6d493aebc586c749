import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import type { SessionPrincipal } from "../../lib/auth/principal.ts";
import { hashFileSet } from "../../lib/closure/hash.ts";
import { ForbiddenError, NotFoundError, ProblemsError } from "../../lib/errors.ts";
import type { QuickChange } from "../../lib/flags/quick_change.ts";
import {
  commitFiles,
  commitFlagChange,
  flagChangeForm,
  type FlagChangeRequest,
  lintManifest,
  manifestTarget,
  type ManifestUpload,
  previewFlagChange,
  pushManifest,
  readManifest,
  rollbackManifest,
} from "../../lib/services/manifests.ts";
import { ManifestViews } from "../../lib/services/versions.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { addNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { createUser } from "../../lib/store/users.ts";
import { commitVersion, getHead, listVersions } from "../../lib/store/versions.ts";
import { countingKv } from "./kv_reads.ts";
import { serviceTest, type ServiceWorld } from "./world.ts";

const web = { tenant: "acme", namespace: "web" };
const ctx = { requestId: "req-svc" };

/** A JSON upload of a `namespace.toml` with the given environments. */
function upload(envs: string[], message?: string): ManifestUpload {
  const toml = ["schema_version = 1", ...envs.map((e) => `[namespace.environments.${e}]`)]
    .join("\n") + "\n";
  const body = { files: { "namespace.toml": toml }, ...(message ? { message } : {}) };
  return { format: "json", bytes: new TextEncoder().encode(JSON.stringify(body)) };
}

const invalid: ManifestUpload = {
  format: "json",
  bytes: new TextEncoder().encode(
    JSON.stringify({ files: { "namespace.toml": "schema_version = 99\n" } }),
  ),
};

serviceTest(
  "a push by a namespace-write token commits the next version and the runtime's model sees it at once",
  async (w) => {
    const writer = await w.asWeb("namespace-write");
    assertEquals((await w.runtime.models.get("acme", "web"))?.head.version, 0);
    const pushed = await pushManifest(w.services, writer, web, {
      upload: upload(["prod"], "first"),
    }, ctx);
    if ("proposed" in pushed) throw new Error("a push without propose commits");
    assertEquals(pushed.changed, true);
    assertEquals(pushed.version.version, 1);
    assertEquals(pushed.version.message, "first");
    assertEquals(w.changes, ["ns:acme/web"]);
    assertEquals((await w.runtime.models.get("acme", "web"))?.head.version, 1);
  },
);

serviceTest(
  "pushing the head's content again changes nothing and tells the runtime nothing",
  async (w) => {
    await pushManifest(w.services, w.superadmin, web, { upload: upload(["prod"]) }, ctx);
    const again = await pushManifest(
      w.services,
      w.superadmin,
      web,
      { upload: upload(["prod"]) },
      ctx,
    );
    if ("proposed" in again) throw new Error("a push without propose commits");
    assertEquals(again.changed, false);
    assertEquals(again.version.version, 1);
    assertEquals(w.changes, ["ns:acme/web"]);
  },
);

serviceTest(
  "a namespace-read token cannot push: 403 before the request is read or anything written",
  async (w) => {
    const reader = await w.asWeb("namespace-read");
    let read = false;
    await assertRejects(
      () =>
        pushManifest(w.services, reader, web, () => {
          read = true;
          return { upload: upload(["prod"]) };
        }, ctx),
      ForbiddenError,
    );
    assert(!read, "the request was read before authorisation");
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 0);
    assertEquals(w.changes, []);
  },
);

serviceTest("a token of one namespace cannot push to another tenant's namespace", async (w) => {
  const writer = await w.asWeb("namespace-write");
  await assertRejects(
    () =>
      pushManifest(w.services, writer, { tenant: "other", namespace: "app" }, {
        upload: upload([]),
      }, ctx),
    ForbiddenError,
  );
  assertEquals((await getHead(w.kv, "other", "app"))?.version, 0);
});

serviceTest("a push to a namespace that does not exist is 404 namespace_not_found", async (w) => {
  const err = await assertRejects(
    () =>
      pushManifest(w.services, w.superadmin, { tenant: "acme", namespace: "nope" }, {
        upload: upload([]),
      }, ctx),
    NotFoundError,
  );
  assertEquals(err.code, "namespace_not_found");
});

serviceTest(
  "an invalid manifest is refused with its problems and leaves the head as it was",
  async (w) => {
    const err = await assertRejects(
      () => pushManifest(w.services, w.superadmin, web, { upload: invalid }, ctx),
      ProblemsError,
    );
    assert(err.problems.length > 0);
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 0);
    assertEquals(w.changes, []);
  },
);

serviceTest("a push whose If-Match is not the head is refused and commits nothing", async (w) => {
  const err = await assertRejects(() =>
    pushManifest(w.services, w.superadmin, web, { upload: upload(["prod"]), ifMatch: 7 }, ctx)
  );
  assertEquals((err as { status?: number }).status, 412);
  assertEquals((await getHead(w.kv, "acme", "web"))?.version, 0);
});

serviceTest("an archive upload with an empty body is a 400", async (w) => {
  const err = await assertRejects(() =>
    pushManifest(w.services, w.superadmin, web, {
      upload: { format: "archive", bytes: new Uint8Array() },
    }, ctx)
  );
  assertEquals((err as { status?: number }).status, 400);
});

serviceTest("lint reports problems without storing anything; a valid manifest is ok", async (w) => {
  const bad = await lintManifest(w.services, w.superadmin, web, invalid);
  assertEquals(bad.ok, false);
  assert(bad.problemCount > 0);
  const good = await lintManifest(w.services, w.superadmin, web, () => upload(["prod"]));
  assertEquals(good, { ok: true, problems: [], problemCount: 0 });
  assertEquals((await getHead(w.kv, "acme", "web"))?.version, 0);
  assertEquals(w.changes, []);
});

serviceTest("a namespace-read token cannot lint (manifest.write)", async (w) => {
  const reader = await w.asWeb("namespace-read");
  await assertRejects(() => lintManifest(w.services, reader, web, upload([])), ForbiddenError);
});

serviceTest(
  "a rollback commits an old version's files as the next version and tells the runtime",
  async (w) => {
    await pushManifest(w.services, w.superadmin, web, { upload: upload(["prod"]) }, ctx);
    const back = await rollbackManifest(w.services, w.superadmin, web, { version: 0 }, ctx);
    if ("proposed" in back) throw new Error("a rollback without propose commits");
    assertEquals(back.changed, true);
    assertEquals(back.version.version, 2);
    assertEquals(back.version.message, "rollback to version 0");
    assertEquals(back.version.closure_hash, (await getHead(w.kv, "acme", "web"))?.closure_hash);
    assertEquals(w.changes, ["ns:acme/web", "ns:acme/web"]);
    assertEquals((await w.runtime.models.get("acme", "web"))?.head.version, 2);
  },
);

serviceTest("a rollback by a namespace-read token is 403 and writes nothing", async (w) => {
  await pushManifest(w.services, w.superadmin, web, { upload: upload(["prod"]) }, ctx);
  const reader = await w.asWeb("namespace-read");
  await assertRejects(
    () => rollbackManifest(w.services, reader, web, { version: 0 }, ctx),
    ForbiddenError,
  );
  assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
});

serviceTest("a rollback to a version that is not a non-negative integer is a 400", async (w) => {
  const err = await assertRejects(() =>
    rollbackManifest(w.services, w.superadmin, web, { version: -1 }, ctx)
  );
  assertEquals((err as { status?: number }).status, 400);
});

serviceTest(
  "reading a manifest needs manifest.read: a namespace-read token may, another tenant's may not",
  async (w) => {
    const reader = await w.asWeb("namespace-read");
    assertEquals((await manifestTarget(w.services, reader, web, "manifest.read")).version, 0);
    await assertRejects(
      () =>
        manifestTarget(w.services, reader, { tenant: "other", namespace: "app" }, "manifest.read"),
      ForbiddenError,
    );
  },
);

// Reading a manifest, committing files, and the console's quick change.

const NAMESPACE =
  "schema_version = 1\n[namespace.environments.prod]\n[namespace.environments.qa]\n";
const DARK = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\n' +
  "off = false\n";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Files as bytes. */
function fileMap(files: Record<string, string>): Map<string, Uint8Array> {
  return new Map(Object.entries(files).map(([p, t]) => [p, encoder.encode(t)]));
}

/** Pushes `namespace.toml` and `flags/dark.toml` (and `extra`) to acme/web; the new version. */
async function pushDark(w: ServiceWorld, extra: Record<string, string> = {}): Promise<number> {
  const files = { "namespace.toml": NAMESPACE, "flags/dark.toml": DARK, ...extra };
  const bytes = encoder.encode(JSON.stringify({ files, message: "dark" }));
  const pushed = await pushManifest(w.services, w.superadmin, web, {
    upload: { format: "json", bytes },
  }, ctx);
  if ("proposed" in pushed) throw new Error("a push without propose commits");
  return pushed.version.version;
}

/** A person signed in to acme; a namespace admin of acme/web when `admin`. */
async function person(w: ServiceWorld, email: string, admin: boolean): Promise<SessionPrincipal> {
  const user = await createUser(w.kv, { email });
  if (admin) await addNamespaceAdmin(w.kv, { ...web, user_id: user.id, added_by: "test" });
  return {
    kind: "session",
    user_id: user.id,
    session_id: `ssn_${email}`,
    tenants: ["acme"],
    groups: [],
    since: new Date().toISOString(),
  };
}

/** A quick change of dark as the console asks for it. */
function darkChange(base: number, change: QuickChange, message = "change dark"): FlagChangeRequest {
  return {
    base,
    flag: "dark",
    read: () => ({ environment: change.environment, message, change: () => change }),
  };
}

const turnOff: QuickChange = { kind: "toggle", environment: "prod", enabled: false };

serviceTest("a manifest is read as a version: the head's, or one asked for", async (w) => {
  await pushDark(w);
  const reader = await w.asWeb("namespace-read");
  const head = await readManifest(w.services, reader, web, {});
  assertEquals(head.version, 1);
  assertEquals(
    decoder.decode((await head.files()).get("flags/dark.toml")),
    DARK,
  );
  assert((await head.archive()).length > 0);
  assert((await head.archive()) === (await head.archive()), "the archive is built once");
  const empty = await readManifest(w.services, reader, web, () => ({ version: 0 }));
  assertEquals([empty.version, (await empty.files()).size], [0, 0]);
  await assertRejects(
    () => readManifest(w.services, reader, web, { version: 5 }),
    NotFoundError,
  );
  const outsider = await w.as({
    type: "namespace-read",
    name: "o",
    tenant_slug: "other",
    namespace_slug: "app",
  });
  let read = false;
  await assertRejects(
    () =>
      readManifest(w.services, outsider, web, () => {
        read = true;
        return {};
      }),
    ForbiddenError,
  );
  assert(!read, "the request was read before authorisation");
});

serviceTest(
  "committed files become the next version with a push's audit entry; the runtime is told",
  async (w) => {
    const writer = await w.asWeb("namespace-write");
    const files = fileMap({ "namespace.toml": NAMESPACE });
    const made = await commitFiles(w.services, writer, web, {
      files,
      message: "from a map",
      ifMatch: 0,
    }, ctx);
    assertEquals([made.version.version, made.changed], [1, true]);
    assertEquals(made.version.message, "from a map");
    assertEquals(w.changes, ["ns:acme/web"]);
    const [entry] = (await listAudit(w.kv, { tenant: "acme", namespace: "web" })).items;
    assertEquals(entry!.type, "manifest.pushed");
    assertEquals(entry!.request_id, ctx.requestId);
    assertEquals(entry!.details?.message, "from a map");
    const again = await commitFiles(w.services, writer, web, { files }, ctx);
    assertEquals([again.version.version, again.changed], [1, false]);
    assertEquals(w.changes, ["ns:acme/web"]);
  },
);

serviceTest(
  "committed files are refused: 403 before the request is read, 412 on another head, 422 invalid",
  async (w) => {
    const reader = await w.asWeb("namespace-read");
    let read = false;
    await assertRejects(
      () =>
        commitFiles(w.services, reader, web, () => {
          read = true;
          return { files: new Map() };
        }, ctx),
      ForbiddenError,
    );
    assert(!read, "the request was read before authorisation");
    const stale = await assertRejects(() =>
      commitFiles(w.services, w.superadmin, web, {
        files: fileMap({ "namespace.toml": NAMESPACE }),
        ifMatch: 3,
      }, ctx)
    );
    assertEquals((stale as { status?: number }).status, 412);
    const invalid = await assertRejects(
      () =>
        commitFiles(w.services, w.superadmin, web, {
          files: fileMap({ "namespace.toml": "schema_version = 99\n" }),
        }, ctx),
      ProblemsError,
    );
    assert(invalid.problems.length > 0);
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 0);
    assertEquals(w.changes, []);
  },
);

serviceTest(
  "a quick change's preview authorises once, reads the head once and writes nothing",
  async (w) => {
    await pushDark(w);
    const counted = countingKv(w.kv);
    const deps = { ...w.services, kv: counted.kv, views: new ManifestViews() };
    const writer = await person(w, "nia@acme.test", true);
    counted.reset();
    const shown = await previewFlagChange(deps, writer, web, darkChange(1, turnOff));
    assert(shown.kind === "preview", shown.kind);
    assertEquals(shown.before, DARK);
    assertEquals(shown.after, `${DARK}\n[environments.prod]\nenabled = false\n`);
    assertEquals(shown.problems, []);
    assertEquals(counted.reads("ns_admin"), 1, "one authorisation");
    assertEquals(counted.reads("ns_head"), 1, "one head read");
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
    assertEquals(w.changes, ["ns:acme/web"]); // the push only
  },
);

serviceTest(
  "a quick change's commit authorises once and reads the head once before the store commits it",
  async (w) => {
    await pushDark(w);
    const counted = countingKv(w.kv);
    const deps = { ...w.services, kv: counted.kv, views: new ManifestViews() };
    const writer = await person(w, "nia@acme.test", true);
    counted.reset();
    const done = await commitFlagChange(deps, writer, web, darkChange(1, turnOff, "off"), ctx);
    assert(done.kind === "committed", done.kind);
    assertEquals(done.version.version, 2);
    assertEquals(done.version.message, "off");
    assertEquals(done.version.created_by, writer.user_id);
    assertEquals(counted.reads("ns_admin"), 1, "one authorisation");
    // the service's read, and the store's own under its atomic check
    assertEquals(counted.reads("ns_head"), 2);
    assertEquals(w.changes, ["ns:acme/web", "ns:acme/web"]);
    const [entry] = (await listAudit(w.kv, { tenant: "acme", namespace: "web" })).items;
    assertEquals(entry!.type, "manifest.pushed");
    assertEquals(entry!.actor_id, writer.user_id);
    assertEquals(entry!.details?.previous_version, 1);
    const file = (await readManifest(w.services, w.superadmin, web, {})).files();
    assertStringIncludes(decoder.decode((await file).get("flags/dark.toml")), "enabled = false");
  },
);

serviceTest(
  "a quick change is refused before its request is read for who may not change the namespace",
  async (w) => {
    await pushDark(w);
    const deps = { ...w.services, views: new ManifestViews() };
    const reader = await w.asWeb("namespace-read");
    let read = false;
    const request = () => {
      read = true;
      return darkChange(1, turnOff);
    };
    await assertRejects(() => previewFlagChange(deps, reader, web, request), ForbiddenError);
    await assertRejects(() => commitFlagChange(deps, reader, web, request, ctx), ForbiddenError);
    assert(!read, "the request was read before authorisation");
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
  },
);

serviceTest(
  "the form again, a refused message or change, and a change that changes nothing",
  async (w) => {
    await pushDark(w);
    const deps = { ...w.services, views: new ManifestViews() };
    const formOnly = await previewFlagChange(deps, w.superadmin, web, {
      base: 1,
      flag: "dark",
      read: () => null,
    });
    assertEquals([formOnly.kind, formOnly.view.meta.version, formOnly.flag.key], [
      "form",
      1,
      "dark",
    ]);
    const silent = await commitFlagChange(
      deps,
      w.superadmin,
      web,
      darkChange(1, turnOff, " "),
      ctx,
    );
    assert(silent.kind === "refused", silent.kind);
    assertEquals(silent.error.details?.field, "message");
    const unknown: QuickChange = { kind: "default", environment: "prod", variation: "grey" };
    const refused = await previewFlagChange(deps, w.superadmin, web, darkChange(1, unknown));
    assert(refused.kind === "refused", refused.kind);
    assertStringIncludes(refused.error.message, 'Unknown variation "grey"');
    const same: QuickChange = { kind: "default", variation: "off" };
    assertEquals(
      (await commitFlagChange(deps, w.superadmin, web, darkChange(1, same), ctx)).kind,
      "unchanged",
    );
    await assertRejects(
      () => previewFlagChange(deps, w.superadmin, web, { ...darkChange(1, same), flag: "nope" }),
      NotFoundError,
    );
    await assertRejects(
      () => previewFlagChange(deps, w.superadmin, web, darkChange(7, same)),
      NotFoundError,
    );
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
  },
);

serviceTest(
  "a change made on an older version is a conflict: what changed since, and the change made again",
  async (w) => {
    await pushDark(w);
    await pushDark(w, { "flags/other.toml": DARK }); // version 2, by someone else
    const deps = { ...w.services, views: new ManifestViews() };
    for (
      const outcome of [
        await previewFlagChange(deps, w.superadmin, web, darkChange(1, turnOff)),
        await commitFlagChange(deps, w.superadmin, web, darkChange(1, turnOff), ctx),
      ]
    ) {
      assert(outcome.kind === "conflict", outcome.kind);
      assertEquals([outcome.view.meta.version, outcome.head.meta.version], [1, 2]);
      assertEquals(outcome.theirs.map((v) => v.version), [2]);
      assert(outcome.again.kind === "preview", outcome.again.kind);
      assertStringIncludes(outcome.again.after, "enabled = false");
    }
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 2, "nothing was committed");

    await pushDark(w, { "flags/other.toml": DARK, "namespace.toml": NAMESPACE + "# v3\n" });
    const gone = await previewFlagChange(deps, w.superadmin, web, {
      ...darkChange(2, turnOff),
      flag: "other",
    });
    assert(gone.kind === "conflict" && gone.again.kind === "preview", gone.kind);
    await pushDark(w, { "namespace.toml": "schema_version = 1\n[namespace.environments.qa]\n" });
    const noProd = await previewFlagChange(deps, w.superadmin, web, darkChange(3, turnOff));
    assert(noProd.kind === "conflict", noProd.kind);
    assertEquals(noProd.again.kind, "environment_gone");
    const noFlag = await previewFlagChange(deps, w.superadmin, web, {
      ...darkChange(3, turnOff),
      flag: "other",
    });
    assert(noFlag.kind === "conflict", noFlag.kind);
    assertEquals(noFlag.again.kind, "flag_gone");
  },
);

serviceTest(
  "a commit whose manifest would not be valid is refused with the problems, nothing written",
  async (w) => {
    await pushDark(w);
    // a version stored under looser rules: a pattern the linear-time engine refuses
    const files = fileMap({
      "namespace.toml": NAMESPACE,
      "flags/dark.toml": DARK,
      "segments/lookahead.toml":
        'schema_version = 1\n[[predicate]]\nattribute = "email"\nop = "matches"\nvalue = "(?=a)"\n',
    });
    await commitVersion(w.kv, {
      ...web,
      files,
      hashed: await hashFileSet(files),
      environments: { prod: { public_evaluate: false }, qa: { public_evaluate: false } },
      created_by: "usr_old_release",
    });
    const deps = { ...w.services, views: new ManifestViews() };
    const shown = await previewFlagChange(deps, w.superadmin, web, darkChange(2, turnOff));
    assert(shown.kind === "preview", shown.kind);
    assertEquals(shown.problems.map((p) => p.path), ["segments/lookahead.toml"]);
    const refused = await commitFlagChange(deps, w.superadmin, web, darkChange(2, turnOff), ctx);
    assert(refused.kind === "invalid", refused.kind);
    assertEquals(refused.problems, shown.problems);
    assertEquals((await listVersions(w.kv, "acme", "web")).items[0]!.version, 2);
  },
);

serviceTest(
  "the change form is for who may change the namespace; a reader is told they may only read it",
  async (w) => {
    await pushDark(w);
    const deps = { ...w.services, views: new ManifestViews() };
    const writer = await w.asWeb("namespace-write");
    assertEquals((await flagChangeForm(deps, writer, web)).meta.version, 1);
    const reader = await w.asWeb("namespace-read");
    const refused = await assertRejects(() => flagChangeForm(deps, reader, web), ForbiddenError);
    assertEquals(
      refused.message,
      "You can read web but not change it: a namespace admin of acme/web can",
    );
    const outsider = await w.as({
      type: "namespace-read",
      name: "o",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    const other = await assertRejects(() => flagChangeForm(deps, outsider, web), ForbiddenError);
    assert(!other.message.startsWith("You can read"), other.message);
    const missing = await assertRejects(
      () => flagChangeForm(deps, w.superadmin, { tenant: "acme", namespace: "nope" }),
      NotFoundError,
    );
    assertEquals(missing.code, "namespace_not_found");
  },
);
