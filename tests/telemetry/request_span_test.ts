import { assertEquals } from "../assert.ts";
import { completeRequestSpan, recordingSpan } from "../../lib/telemetry/request_span.ts";
import { recordingSpan as fakeSpan, withActiveSpan } from "./recording_span.ts";

Deno.test("the request span is named <METHOD> <route> and gets http.route", () => {
  const rec = fakeSpan();
  completeRequestSpan(
    rec.span,
    "POST",
    "/ofrep/v1/evaluate/flags/:key",
    "http://x/ofrep/v1/evaluate/flags/a",
  );
  assertEquals(rec.name, "POST /ofrep/v1/evaluate/flags/:key");
  assertEquals(rec.attributes, { "http.route": "/ofrep/v1/evaluate/flags/:key" });
});

Deno.test("the query is dropped from url.full and url.query, whatever its parameters are called", () => {
  const cases = [
    "http://127.0.0.1:8080/ofrep/v1/event-stream?a=1&token=svc_client_secret",
    "http://127.0.0.1:8080/ofrep/v1/event-stream?tok%65n=svc_client_secret",
    "http://127.0.0.1:8080/auth/operator?code=one-time-code",
    "http://127.0.0.1:8080/auth/oidc/callback?code=idp-code&state=idp-state",
    "http://127.0.0.1:8080/auth/cli/device?user_code=BCDF-GHJK",
  ];
  for (const url of cases) {
    const rec = fakeSpan();
    completeRequestSpan(rec.span, "GET", "/r", url);
    assertEquals(rec.attributes["url.query"], "", url);
    assertEquals(rec.attributes["url.full"], url.slice(0, url.indexOf("?")), url);
  }
});

Deno.test("a URL without a query keeps what Deno recorded; a fragment is dropped too", () => {
  const plain = fakeSpan();
  completeRequestSpan(plain.span, "GET", "/x", "http://h/x");
  assertEquals(Object.keys(plain.attributes), ["http.route"]);
  const fragment = fakeSpan();
  completeRequestSpan(fragment.span, "GET", "/x", "http://h/x#code=1");
  assertEquals(fragment.attributes["url.full"], "http://h/x");
});

Deno.test("recordingSpan() is the active span only when it records", () => {
  assertEquals(recordingSpan(), undefined);
  const rec = fakeSpan();
  assertEquals(withActiveSpan(rec.span, () => recordingSpan()), rec.span);
});
