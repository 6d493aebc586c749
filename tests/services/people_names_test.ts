/**
 * Names for the ids console pages show (lib/console/people_names.ts):
 * a user id becomes the email, a token id the token's name only for a
 * reader who may read the token, and anything else stays as it is.
 */
import { assertEquals } from "../assert.ts";
import { type SessionPrincipal, sessionPrincipal } from "../../lib/auth/principal.ts";
import { findSessionRecord } from "../../lib/store/sessions.ts";
import { peopleNames } from "../../lib/services/people.ts";
import { consoleTest, type ConsoleWorld, type Person } from "../console/world.ts";

/** The principal of a person's browser session. */
async function principal(w: ConsoleWorld, p: Person): Promise<SessionPrincipal> {
  const record = await findSessionRecord(w.kv, p.session_id);
  if (record === null) throw new Error(`no session ${p.session_id}`);
  return sessionPrincipal(record);
}

/** A namespace-read token of acme/web, made by the superadmin; its id. */
async function token(w: ConsoleWorld, name: string): Promise<string> {
  const res = await w.json("POST", "/api/v1/tokens", {
    bearer: w.admin,
    json: { type: "namespace-read", name, tenant_slug: "acme", namespace_slug: "web" },
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return (res.body.token as { id: string }).id;
}

consoleTest("a user id becomes the user's email; other ids stay as they are", async (w) => {
  const names = peopleNames({ kv: w.kv, key: w.key }, await principal(w, w.member));
  assertEquals(await names.email(w.writer.user_id), "nia@acme.test");
  assertEquals((await names.user(w.writer.user_id))?.email, "nia@acme.test");
  assertEquals(await names.label(w.writer.user_id), "nia@acme.test");
  assertEquals(await names.email("anonymous"), null);
  assertEquals(await names.label("anonymous"), "anonymous");
  assertEquals(await names.email("nia@acme.test"), null, "an email is not looked up as an id");
});

consoleTest("a token's name shows to who may read the token, its id to others", async (w) => {
  const id = await token(w, "runtime");
  const admin = peopleNames({ kv: w.kv, key: w.key }, await principal(w, w.tenantAdmin));
  assertEquals((await admin.token(id))?.name, "runtime");
  assertEquals(await admin.label(id), "runtime");
  const member = peopleNames({ kv: w.kv, key: w.key }, await principal(w, w.member));
  assertEquals(await member.token(id), null);
  assertEquals(await member.label(id), id);
});
