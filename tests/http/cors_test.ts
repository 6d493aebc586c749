import { assertEquals } from "../assert.ts";
import { applyCors, corsOrigin, preflightResponse } from "../../lib/http/cors.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { tokenRecord } from "../store/token_record.ts";

Deno.test("corsOrigin() allows only a namespace-client token's listed Origins", () => {
  const client: Principal = { kind: "token", token: tokenRecord({}) };
  assertEquals(corsOrigin(client, "https://a.example"), "https://a.example");
  assertEquals(corsOrigin(client, "https://b.example"), null);
  assertEquals(corsOrigin(client, undefined), null);
  assertEquals(corsOrigin(undefined, "https://a.example"), null);
  const read: Principal = {
    kind: "token",
    token: tokenRecord({ type: "namespace-read", allowed_origins: ["https://a.example"] }),
  };
  assertEquals(corsOrigin(read, "https://a.example"), null);
  const human: Principal = {
    kind: "session",
    user_id: "usr_1",
    session_id: "ssn_1",
    tenants: [],
    groups: [],
    since: "",
  };
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
