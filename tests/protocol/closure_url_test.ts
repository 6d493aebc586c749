import { assertEquals } from "../assert.ts";
import { closureTarget, closureUrl } from "../../lib/protocol/closure_url.ts";

Deno.test("a closure URL names tenant, namespace, version and subscription, and the token when signed", () => {
  assertEquals(
    closureUrl("http://h:8080", "acme", "web", 3, "Kg"),
    "http://h:8080/api/v1/tenants/acme/namespaces/web/closure?version=3&subscription=Kg",
  );
  assertEquals(
    closureUrl("https://h/prefix", "acme", "web", 3, "YSxi", "p.m"),
    "https://h/prefix/api/v1/tenants/acme/namespaces/web/closure?version=3&subscription=YSxi&token=p.m",
  );
});

Deno.test("closure URL path segments are percent-encoded and read back decoded", () => {
  const url = closureUrl("http://h", "a/b", "w eb", 1, "Kg");
  assertEquals(new URL(url).pathname, "/api/v1/tenants/a%2Fb/namespaces/w%20eb/closure");
  assertEquals(closureTarget(url), { tenant: "a/b", namespace: "w eb" });
});

Deno.test("closureTarget() gives null for URLs of other endpoints and for non-URLs", () => {
  for (
    const other of [
      "http://h/api/v1/tenants/acme/namespaces/web/manifest",
      "http://h/prefix/api/v1/tenants/acme/namespaces/web/closure",
      "http://h/api/v1/tenants/acme/namespaces/web/closure/x",
      "/api/v1/tenants/acme/namespaces/web/closure",
      "http://h/api/v1/tenants/%E0%A4%A/namespaces/web/closure",
    ]
  ) {
    assertEquals(closureTarget(other), null, other);
  }
});
