import { assertEquals } from "../assert.ts";
import { encodeErrorEnvelope, parseErrorEnvelope } from "../../lib/protocol/error_envelope.ts";

Deno.test("an envelope is written code, message, details, request_id and parses back", () => {
  const env = {
    request_id: "r1",
    details: { field: "slug" },
    message: "bad slug",
    code: "invalid_request",
  };
  const text = encodeErrorEnvelope(env);
  assertEquals(Object.keys(JSON.parse(text)), ["code", "message", "details", "request_id"]);
  assertEquals(parseErrorEnvelope(text), env);
});

Deno.test("an envelope without details has no details key", () => {
  const text = encodeErrorEnvelope({ code: "internal", message: "x", request_id: "r" });
  assertEquals(text, '{"code":"internal","message":"x","request_id":"r"}');
});

Deno.test("parseErrorEnvelope() keeps only well-typed fields of a JSON object", () => {
  assertEquals(parseErrorEnvelope("not json"), {});
  assertEquals(parseErrorEnvelope("[1]"), {});
  assertEquals(parseErrorEnvelope("null"), {});
  assertEquals(parseErrorEnvelope('{"code":1,"message":"m","details":"d","request_id":null}'), {
    message: "m",
  });
  assertEquals(parseErrorEnvelope('{"code":"c","details":null,"extra":true}'), { code: "c" });
});
