import { assertEquals, assertThrows } from "../assert.ts";
import { parseJsonObject } from "../../lib/http/body.ts";
import { InvalidRequestError } from "../../lib/errors.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

Deno.test("a body that is not valid UTF-8 is 400 invalid_request", () => {
  const bytes = new Uint8Array([...utf8('{"context":{"name":"'), 0xc3, 0x28, ...utf8('"}}')]);
  const err = assertThrows(() => parseJsonObject(bytes), InvalidRequestError);
  assertEquals(err.code, "invalid_request");
});

Deno.test("a body holding a real U+FFFD character is read as it is", () => {
  const body = parseJsonObject(utf8('{"context":{"name":"a\uFFFDb"}}'));
  assertEquals((body.context as Record<string, string>).name, "a\uFFFDb");
});

Deno.test("a body that is valid UTF-8 but not a JSON object is 400", () => {
  assertThrows(() => parseJsonObject(utf8("[1]")), InvalidRequestError);
  assertThrows(() => parseJsonObject(utf8("{")), InvalidRequestError);
});
