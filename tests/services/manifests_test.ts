import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ForbiddenError, NotFoundError, ProblemsError } from "../../lib/errors.ts";
import {
  lintManifest,
  manifestTarget,
  type ManifestUpload,
  pushManifest,
  rollbackManifest,
} from "../../lib/services/manifests.ts";
import { getHead } from "../../lib/store/versions.ts";
import { serviceTest } from "./world.ts";

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
