/**
 * The console's pages that take a token id, an email or a user id tell a
 * tenant admin nothing about other tenants: another tenant's token reads
 * as a token that does not exist, adding another tenant's person by email
 * reads as adding an unknown address (and adds no one), and the notice
 * after a change names no one who is not one of the tenant's people.
 */
import { assert, assertEquals } from "../assert.ts";
import { mint, publicNamespace, UNKNOWN_TOKEN } from "../http/oracles.ts";
import { consoleTest, type LoadedPage } from "./world.ts";

/** The first paragraph of a page's error notice: the message the person reads. */
function refusal(page: LoadedPage): string {
  return page.doc.querySelector(".notice p")?.textContent.trim() ?? "";
}

consoleTest(
  "another tenant's token page reads exactly as a token that does not exist",
  async (w) => {
    await publicNamespace(w, "other", "app");
    const theirs = await mint(w, {
      type: "namespace-read",
      name: "runtime",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    const pages = [
      ["page", (id: string) => w.page(`/ui/t/acme/tokens/${id}`, w.tenantAdmin)],
      [
        "revoke",
        (id: string) => w.post(`/ui/t/acme/tokens/${id}/revoke`, w.tenantAdmin, { confirm: "yes" }),
      ],
      [
        "rotate",
        (id: string) => w.post(`/ui/t/acme/tokens/${id}/rotate`, w.tenantAdmin, { confirm: "yes" }),
      ],
    ] as const;
    for (const [what, load] of pages) {
      const real = await load(theirs.id);
      const none = await load(UNKNOWN_TOKEN);
      assertEquals(real.status, 404, `${what}: ${real.text}`);
      assertEquals(none.status, 404, what);
      assertEquals(
        refusal(real).replace(theirs.id, "<id>"),
        refusal(none).replace(UNKNOWN_TOKEN, "<id>"),
        what,
      );
    }
    const still = await w.json("GET", `/api/v1/tokens/${theirs.id}`, { bearer: w.admin });
    const record = still.body.token as { status: string; rotated_to_token_id: string | null };
    assertEquals([record.status, record.rotated_to_token_id], ["active", null]);
  },
);

consoleTest(
  "adding another tenant's person by email reads as adding an unknown address",
  async (w) => {
    const eve = await w.person("eve@other.test", "other");
    const admins = async () =>
      ((await w.json("GET", "/api/v1/tenants/acme/admins", { bearer: w.admin })).body
        .admins as { user_id: string }[]).map((a) => a.user_id).sort();
    const before = await admins();
    for (const namespace of [undefined, "web"]) {
      const form = (email: string) => namespace === undefined ? { email } : { email, namespace };
      const real = await w.post("/ui/t/acme/people/add", w.tenantAdmin, form("eve@other.test"));
      const none = await w.post("/ui/t/acme/people/add", w.tenantAdmin, form("zed@other.test"));
      assertEquals([real.status, none.status], [404, 404], real.text);
      assertEquals(
        refusal(real).replaceAll("eve@other.test", "<email>"),
        refusal(none).replaceAll("zed@other.test", "<email>"),
      );
    }
    assertEquals(await admins(), before, "no one added");
    const web = await w.json("GET", "/api/v1/tenants/acme/namespaces/web/admins", {
      bearer: w.admin,
    });
    assertEquals(
      (web.body.admins as { user_id: string }[]).map((a) => a.user_id),
      [w.writer.user_id],
    );
    assert(!(await admins()).includes(eve.user_id));
  },
);

consoleTest("the notice after a change names no one outside the tenant", async (w) => {
  const eve = await w.person("eve@other.test", "other");
  for (const done of ["added", "removed"]) {
    const page = await w.page(`/ui/t/acme/people?done=${done}&user=${eve.user_id}`, w.tenantAdmin);
    assertEquals(page.status, 200);
    assert(!page.text.includes("eve@other.test"), `${done}: the page names eve`);
  }
  // the tenant's own people are still named
  const page = await w.page(
    `/ui/t/acme/people?done=added&user=${w.tenantAdmin.user_id}`,
    w.tenantAdmin,
  );
  assert(page.text.includes("ada@acme.test is a tenant admin of acme"), page.text);
});
