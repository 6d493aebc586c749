import { assert } from "../assert.ts";
import { ClientOriginIndex } from "../../lib/runtime/client_origins.ts";
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
