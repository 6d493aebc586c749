import { assert } from "../assert.ts";
import { ClientOriginIndex } from "../../lib/runtime/client_origins.ts";
import { tokenRecord } from "../store/token_record.ts";
import { tokenKey } from "../../lib/store/keys.ts";

Deno.test("ClientOriginIndex.allows() follows active namespace-client tokens", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let now = Date.parse("2026-06-01T00:00:00Z");
    const index = new ClientOriginIndex(kv, { now: () => now });
    const triple = { tenant: "acme", namespace: "web", environment: "staging" };
    await kv.set(tokenKey("tok_1"), tokenRecord({}));
    await kv.set(
      tokenKey("tok_2"),
      tokenRecord({ id: "tok_2", allowed_origins: ["https://r.example"], status: "revoked" }),
    );
    await kv.set(
      tokenKey("tok_3"),
      tokenRecord({
        id: "tok_3",
        allowed_origins: ["https://e.example"],
        expires_at: "2026-01-02T00:00:00.000Z",
      }),
    );
    await kv.set(
      tokenKey("tok_4"),
      tokenRecord({ id: "tok_4", type: "namespace-read", allowed_origins: ["https://n.example"] }),
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
      tokenRecord({ id: "tok_5", allowed_origins: ["https://new.example"] }),
    );
    assert(!(await index.allows("https://new.example")), "within a second of the last build");
    now += 1_001;
    assert(await index.allows("https://new.example"), "rebuilt on the miss");
  } finally {
    kv.close();
  }
});
