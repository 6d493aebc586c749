/**
 * The operator's console (lib/http/auth/operator.ts, the tenants page of
 * lib/console/namespaces.tsx): a one-time link made on the server
 * host opens a browser session with superadmin rights, which sees every
 * tenant and creates tenants; a person signed in to a tenant sees none of
 * that and a forged create is refused.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { createOperatorLink } from "../../lib/login/operator_link.ts";
import { consoleTest, ORIGIN } from "./world.ts";

async function openLink(
  w: Parameters<Parameters<typeof consoleTest>[1]>[0],
  code: string,
  headers: Record<string, string> = { origin: ORIGIN },
) {
  return await w.call("POST", "/auth/operator", { form: { code }, headers });
}

function cookieOf(res: Response): string {
  const set = res.headers.get("set-cookie") ?? "";
  return set.split(";")[0]!;
}

consoleTest("an operator link opens the console with every tenant and a create form", async (w) => {
  const { code } = await createOperatorLink({ kv: w.kv, key: w.key }, "ops@example.com");
  const confirm = await w.call("GET", `/auth/operator?code=${code}`);
  assertEquals(confirm.status, 200);
  assertStringIncludes(await confirm.text(), "ops@example.com");
  const res = await openLink(w, code);
  assertEquals(res.status, 303);
  assertEquals(res.headers.get("location"), "/ui");
  const cookie = cookieOf(res);
  const home = await w.call("GET", "/ui", { cookie });
  const text = await home.text();
  assertEquals(home.status, 200, text);
  for (const t of ["acme", "other"]) assertStringIncludes(text, `href="/ui/t/${t}"`);
  assertStringIncludes(text, "Create a tenant");
  assertStringIncludes(text, "operator");

  const me = await w.json("GET", "/api/v1/me", { cookie });
  // deno-lint-ignore no-explicit-any
  const session = (me.body.principal as any).session;
  assertEquals([session.login_method, session.superadmin, session.client], [
    "operator",
    true,
    "browser",
  ]);
  const csrf = me.body.csrf_token as string;
  const made = await w.call("POST", "/ui/tenants", {
    cookie,
    form: { _csrf: csrf, slug: "globex", description: "Globex Corp" },
    headers: { origin: ORIGIN },
  });
  assertEquals(made.status, 303, await made.text());
  assertEquals(made.headers.get("location"), "/ui/t/globex");
  const listed = await w.json("GET", "/api/v1/tenants/globex", { bearer: w.admin });
  assertEquals(listed.status, 200);
  // the operator acts on every tenant's namespaces too
  const flags = await w.call("GET", "/ui/t/acme/ns/web/env/production", { cookie });
  assertEquals(flags.status, 200);
});

consoleTest("a taken slug shows the form again with the input kept", async (w) => {
  const { code } = await createOperatorLink({ kv: w.kv, key: w.key }, "ops@example.com");
  const cookie = cookieOf(await openLink(w, code));
  const csrf = (await w.json("GET", "/api/v1/me", { cookie })).body.csrf_token as string;
  const res = await w.call("POST", "/ui/tenants", {
    cookie,
    form: { _csrf: csrf, slug: "acme", description: "again" },
    headers: { origin: ORIGIN },
  });
  assertEquals(res.status, 400);
  const text = await res.text();
  assertStringIncludes(text, 'value="again"');
  assertStringIncludes(text, 'role="alert"');
});

consoleTest("a console link works once, and not from another site", async (w) => {
  const { code } = await createOperatorLink({ kv: w.kv, key: w.key }, "ops@example.com");
  const cross = await openLink(w, code, { origin: "https://evil.example" });
  assertEquals(cross.status, 403);
  assertEquals(cross.headers.get("set-cookie"), null);
  assertEquals((await openLink(w, code)).status, 303);
  const again = await openLink(w, code);
  assertEquals(again.status, 403);
  assertStringIncludes(await again.text(), "console link was used already");
  assertEquals((await w.call("GET", `/auth/operator?code=${code}`)).status, 403);
});

consoleTest("a console link expires after its time", async (w) => {
  const { code } = await createOperatorLink(
    { kv: w.kv, key: w.key, now: () => new Date() },
    "o@x.test",
    60_000,
  );
  w.advance(61_000);
  assertEquals((await openLink(w, code)).status, 403);
});

consoleTest(
  "a person signed in to a tenant sees no tenant list and cannot create one",
  async (w) => {
    const home = await w.call("GET", "/ui", { cookie: w.tenantAdmin.cookie });
    assertEquals(home.status, 303);
    assertEquals(home.headers.get("location"), "/ui/t/acme");
    assertEquals((await w.page("/ui/tenants", w.tenantAdmin)).status, 403);
    const forged = await w.post("/ui/tenants", w.tenantAdmin, { slug: "sneaky" });
    assertEquals(forged.status, 403);
    const gone = await w.json("GET", "/api/v1/tenants/sneaky", { bearer: w.admin });
    assertEquals(gone.status, 404);
    const page = await w.page("/ui/t/acme", w.tenantAdmin);
    assert(!page.text.includes("Create a tenant"));
  },
);
