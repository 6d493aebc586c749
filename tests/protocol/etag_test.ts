import { assert, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/errors.ts";
import {
  etagMatches,
  ifMatchHeader,
  parseIfMatch,
  parseVersionEtag,
  versionEtag,
} from "../../lib/protocol/etag.ts";

const HASH = `sha256:${"0".repeat(64)}`;

Deno.test("a version ETag is the quoted v<version>-<closure hash> and parses back, weak or strong", () => {
  const etag = versionEtag(12, HASH);
  assertEquals(etag, `"v12-${HASH}"`);
  assertEquals(parseVersionEtag(etag), { version: 12, closure_hash: HASH });
  assertEquals(parseVersionEtag(`W/${etag}`), { version: 12, closure_hash: HASH });
});

Deno.test("parseVersionEtag() gives null for no header and for ETags that name no version", () => {
  for (const other of [null, undefined, "", '"abc"', "v1-x", '"v-x"', '"vx-1"', '"v1-"']) {
    assertEquals(parseVersionEtag(other), null, String(other));
  }
});

Deno.test("If-None-Match compares weakly: W/ on either side is ignored", () => {
  assert(etagMatches('"ab"', '"ab"'));
  assert(etagMatches('W/"ab"', '"ab"'));
  assert(etagMatches('"ab"', 'W/"ab"'));
  assert(etagMatches('W/"ab"', 'W/"ab"'));
  assert(!etagMatches('"abc"', '"ab"'));
  assert(!etagMatches("ab", '"ab"')); // an unquoted value is not the ETag
});

Deno.test("If-None-Match understands lists, spaces and *", () => {
  assert(etagMatches('"x", "ab"', '"ab"'));
  assert(etagMatches('"x",W/"ab"', '"ab"'));
  assert(etagMatches('  "ab"  ', '"ab"'));
  assert(etagMatches("*", '"ab"'));
  assert(etagMatches('"x", *', '"ab"'));
  assert(!etagMatches('"x", "y"', '"ab"'));
});

Deno.test("no If-None-Match header never matches", () => {
  assert(!etagMatches(undefined, '"ab"'));
  assert(!etagMatches(null, '"ab"'));
  assert(!etagMatches("", '"ab"'));
});

Deno.test('If-Match takes "v<version>" or a whole version ETag, weak or strong', () => {
  assertEquals(ifMatchHeader(7), '"v7"');
  assertEquals(parseIfMatch(ifMatchHeader(7)), 7);
  assertEquals(parseIfMatch(versionEtag(3, HASH)), 3);
  assertEquals(parseIfMatch(`W/"v3"`), 3);
  assertEquals(parseIfMatch(` "v0" `), 0);
  assertEquals(parseIfMatch(undefined), undefined);
});

Deno.test("any other If-Match is a 400 naming the expected form", () => {
  for (const bad of ["3", '"3"', "v3", '"v"', '"v-1"', "*", `"v${"9".repeat(16)}"`, '"v1", "v2"']) {
    const err = assertThrows(() => parseIfMatch(bad), UsageError, 'If-Match must be "v<version>"');
    assertEquals(err.status, 400);
  }
});
