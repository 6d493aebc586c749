/**
 * Test helper for the "no oracles" tests: on the sign-in world of
 * tests/http/auth/world.ts, ids of the right shape that name nothing,
 * namespaces with a public environment, tokens and tenant admins made by
 * the superadmin, and {@linkcode assertSameAnswer}, which compares two
 * answers as a caller would see them (status and body; the request id and
 * the id the caller sent aside).
 *
 * @module
 */
import { assertEquals } from "../assert.ts";
import type { Person, SignInWorld } from "./auth/world.ts";

/** A user id of the right shape that names no user. */
export const UNKNOWN_USER = "usr_01JQ0000000000000000000000";
/** A token id of the right shape that names no token. */
export const UNKNOWN_TOKEN = "tok_01JQ0000000000000000000000";

/** An answer as the caller reads it. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Asserts that two answers are the same to the caller: the same status and
 * the same body, once the request id is dropped and each input the caller
 * typed is replaced by a placeholder (`[a, b]`: `a` in the first answer and
 * `b` in the second both become `<input>`).
 */
export function assertSameAnswer(
  first: Answer,
  second: Answer,
  inputs: [string, string][],
  what: string,
): void {
  const shown = (answer: Answer, pick: 0 | 1) => {
    const { request_id: _, ...body } = answer.body;
    let text = JSON.stringify(body);
    for (const pair of inputs) text = text.replaceAll(pair[pick], "<input>");
    return { status: answer.status, body: JSON.parse(text) };
  };
  assertEquals(shown(first, 0), shown(second, 1), what);
}

/** The manifest of the namespaces made here: one public environment, `live`. */
const PUBLIC_MANIFEST = {
  "namespace.toml": `schema_version = 1
[namespace]
description = "test"
[namespace.environments.live]
public_evaluate = true
`,
};

/** Makes a namespace with the public environment `live`, as the superadmin. */
export async function publicNamespace(w: SignInWorld, tenant: string, ns: string): Promise<void> {
  const made = await w.json("POST", `/api/v1/tenants/${tenant}/namespaces`, {
    bearer: w.admin,
    json: { slug: ns },
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  const pushed = await w.json("PUT", `/api/v1/tenants/${tenant}/namespaces/${ns}/manifest`, {
    bearer: w.admin,
    json: { files: PUBLIC_MANIFEST },
  });
  assertEquals(pushed.status, 201, JSON.stringify(pushed.body));
}

/** Issues a token as the superadmin; returns its id and secret. */
export async function mint(
  w: SignInWorld,
  input: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  const res = await w.json("POST", "/api/v1/tokens", { bearer: w.admin, json: input });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return { id: (res.body.token as { id: string }).id, secret: res.body.secret as string };
}

/** A person signed in to `tenant` whom the superadmin put on its admin list. */
export async function tenantAdmin(w: SignInWorld, email: string, tenant: string): Promise<Person> {
  const person = await w.person(email, tenant);
  const added = await w.json("POST", `/api/v1/tenants/${tenant}/admins`, {
    bearer: w.admin,
    json: { user_id: person.user_id },
  });
  assertEquals(added.status, 201, JSON.stringify(added.body));
  return person;
}

/** The user ids on a tenant's admin list, as the superadmin reads it. */
export async function adminIds(w: SignInWorld, tenant: string, ns?: string): Promise<string[]> {
  const path = ns === undefined
    ? `/api/v1/tenants/${tenant}/admins`
    : `/api/v1/tenants/${tenant}/namespaces/${ns}/admins`;
  const res = await w.json("GET", path, { bearer: w.admin });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return (res.body.admins as { user_id: string }[]).map((a) => a.user_id).sort();
}
