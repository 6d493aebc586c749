import { assert, assertEquals } from "../assert.ts";
import {
  applyCors,
  ClientOriginIndex,
  corsOrigin,
  preflightResponse,
} from "../../lib/http/cors.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import type { TokenRecord } from "../../lib/store/tokens.ts";
import { tokenKey } from "../../lib/store/keys.ts";

function token(over: Partial<TokenRecord>): TokenRecord {
  return {
    id: "tok_1",
    type: "namespace-client",
    name: "n",
    description: null,
    tenant_slug: "acme",
    namespace_slug: "web",
    environment_slug: "staging",
    allowed_origins: ["https://a.example"],
    scopes: [],
    prefix: "svc_client_xyz",
    digest: "d",
    created_by: "usr_1",
    created_at: "2026-01-01T00:00:00.000Z",
    expires_at: null,
    last_used_at: null,
    last_used_ip_hash: null,
    status: "active",
    revoked_at: null,
    revoked_by: null,
    rotated_from_token_id: null,
    rotated_to_token_id: null,
    ...over,
  };
}

Deno.test("corsOrigin() allows only a namespace-client token's listed Origins", () => {
  const client: Principal = { kind: "token", token: token({}) };
  assertEquals(corsOrigin(client, "https://a.example"), "https://a.example");
  assertEquals(corsOrigin(client, "https://b.example"), null);
  assertEquals(corsOrigin(client, undefined), null);
  assertEquals(corsOrigin(undefined, "https://a.example"), null);
  const read: Principal = {
    kind: "token",
    token: token({ type: "namespace-read", allowed_origins: ["https://a.example"] }),
  };
  assertEquals(corsOrigin(read, "https://a.example"), null);
  const human: Principal = { kind: "session", user_id: "usr_1", session_id: "ssn_1" };
  assertEquals(corsOrigin(human, "https://a.example"), null);
});

Deno.test("applyCors() sets the headers for an allowed Origin and Vary in any case", () => {
  const h = new Headers({ vary: "Accept" });
  applyCors(h, "https://a.example");
  assertEquals(h.get("access-control-allow-origin"), "https://a.example");
  assertEquals(h.get("access-control-expose-headers"), "ETag, Retry-After, X-Request-Id");
  assertEquals(h.get("vary"), "Accept, Origin");
  applyCors(h, "https://a.example");
  assertEquals(h.get("vary"), "Accept, Origin");
  const none = new Headers();
  applyCors(none, null);
  assertEquals([none.get("access-control-allow-origin"), none.get("vary")], [null, "Origin"]);
});

Deno.test("preflightResponse() answers 204, with CORS headers only when allowed", () => {
  const ok = preflightResponse("https://a.example", true);
  assertEquals(ok.status, 204);
  assertEquals(ok.headers.get("access-control-allow-origin"), "https://a.example");
  assertEquals(ok.headers.get("access-control-allow-methods"), "POST");
  assertEquals(
    ok.headers.get("access-control-allow-headers"),
    "Authorization, Content-Type, If-None-Match",
  );
  assertEquals(ok.headers.get("access-control-max-age"), "600");
  const no = preflightResponse("https://a.example", false);
  assertEquals(no.status, 204);
  assertEquals(no.headers.get("access-control-allow-origin"), null);
  assertEquals(no.headers.get("access-control-allow-headers"), null);
});

Deno.test("ClientOriginIndex.allows() follows active namespace-client tokens", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let now = Date.parse("2026-06-01T00:00:00Z");
    const index = new ClientOriginIndex(kv, { now: () => now });
    const triple = { tenant: "acme", namespace: "web", environment: "staging" };
    await kv.set(tokenKey("tok_1"), token({}));
    await kv.set(
      tokenKey("tok_2"),
      token({ id: "tok_2", allowed_origins: ["https://r.example"], status: "revoked" }),
    );
    await kv.set(
      tokenKey("tok_3"),
      token({
        id: "tok_3",
        allowed_origins: ["https://e.example"],
        expires_at: "2026-01-02T00:00:00.000Z",
      }),
    );
    await kv.set(
      tokenKey("tok_4"),
      token({ id: "tok_4", type: "namespace-read", allowed_origins: ["https://n.example"] }),
    );
    assert(await index.allows("https://a.example"));
    assert(await index.allows("https://a.example", triple));
    assert(!(await index.allows("https://a.example", { ...triple, environment: "production" })));
    for (
      const o of [
        "https://r.example",
        "https://e.example",
        "https://n.example",
        "https://z.example",
      ]
    ) {
      assert(!(await index.allows(o)), o);
    }
    // a new token is seen on a miss once the index is a second old
    await kv.set(
      tokenKey("tok_5"),
      token({ id: "tok_5", allowed_origins: ["https://new.example"] }),
    );
    assert(!(await index.allows("https://new.example")), "within a second of the last build");
    now += 1_001;
    assert(await index.allows("https://new.example"), "rebuilt on the miss");
  } finally {
    kv.close();
  }
});
