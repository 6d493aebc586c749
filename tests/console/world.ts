/**
 * Test helper: the console in-process, on the sign-in world of
 * tests/http/auth/world.ts. Tenant `acme` has namespace `web` holding
 * {@linkcode FIXTURE} (three flags, two environments, nested segments),
 * pushed by the superadmin; three people signed in with browser sessions:
 * a member (reads), a namespace admin of `web` (writes it) and a tenant
 * admin. `page` loads a console page as a person and parses it; `post`
 * submits a form the way the page's own form would (its CSRF field, this
 * origin).
 *
 * @module
 */
import { DOMParser } from "npm:linkedom@^0.18.15";
import { assertEquals } from "../assert.ts";
import { ORIGIN, type Person, signInTest, type SignInWorld } from "../http/auth/world.ts";
import { FIXTURE } from "./fixture.ts";

export { FIXTURE, ORIGIN };
export type { Person };

/** A loaded console page. */
export interface LoadedPage {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed document (linkedom). */
  // deno-lint-ignore no-explicit-any
  doc: any;
}

/** The console world. */
export interface ConsoleWorld extends SignInWorld {
  /** Reads acme/web and nothing more. */
  member: Person;
  /** Namespace admin of acme/web: pushes, rolls back, quick changes. */
  writer: Person;
  /** Tenant admin of acme: tokens, people, audit. */
  tenantAdmin: Person;
  /** Loads a page as `who` (no redirect following). */
  page(path: string, who: Person, headers?: Record<string, string>): Promise<LoadedPage>;
  /** Posts a form as `who`, with the CSRF field and this origin. */
  post(
    path: string,
    who: Person,
    form: Record<string, string>,
    headers?: Record<string, string>,
  ): Promise<LoadedPage>;
  /** Pushes files to acme/web as the superadmin; returns the new version. */
  push(files: Record<string, string>, message?: string): Promise<number>;
}

/**
 * Runs a test on a fresh console world.
 *
 * @param name the test name
 * @param fn the test
 */
export function consoleTest(name: string, fn: (w: ConsoleWorld) => Promise<void>): void {
  signInTest(name, async (w) => {
    const admin = { bearer: w.admin };
    const ns = await w.call("POST", "/api/v1/tenants/acme/namespaces", {
      ...admin,
      json: { slug: "web", description: "Web shop" },
    });
    assertEquals(ns.status, 201, await ns.text());
    const push = async (files: Record<string, string>, message = "test push") => {
      const res = await w.json("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", {
        ...admin,
        json: { files, message },
      });
      assertEquals(res.status < 300, true, JSON.stringify(res.body));
      return res.body.version as number;
    };
    await push(FIXTURE, "first flags");
    const member = await w.person("ana@acme.test", "acme");
    const writer = await w.person("nia@acme.test", "acme");
    const tenantAdmin = await w.person("ada@acme.test", "acme");
    const nsAdmin = await w.call("POST", "/api/v1/tenants/acme/namespaces/web/admins", {
      ...admin,
      json: { user_id: writer.user_id },
    });
    assertEquals(nsAdmin.status < 300, true, await nsAdmin.text());
    const tAdmin = await w.call("POST", "/api/v1/tenants/acme/admins", {
      ...admin,
      json: { user_id: tenantAdmin.user_id },
    });
    assertEquals(tAdmin.status < 300, true, await tAdmin.text());
    const load = async (res: Response): Promise<LoadedPage> => {
      const text = await res.text();
      const doc = new DOMParser().parseFromString(
        text.startsWith("<!doctype") ? text : `<!doctype html><html><body>${text}</body></html>`,
        "text/html",
      );
      return { status: res.status, headers: res.headers, text, doc };
    };
    await fn({
      ...w,
      member,
      writer,
      tenantAdmin,
      push,
      page: async (path, who, headers = {}) =>
        load(await w.call("GET", path, { cookie: who.cookie, headers })),
      post: async (path, who, form, headers = {}) =>
        load(
          await w.call("POST", path, {
            cookie: who.cookie,
            form: { _csrf: who.csrf, ...form },
            headers: { origin: ORIGIN, ...headers },
          }),
        ),
    });
  });
}
