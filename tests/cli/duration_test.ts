import { assertEquals, assertThrows } from "../assert.ts";
import { formatDuration, parseDuration, parseTimestamp } from "../../lib/cli/duration.ts";
import { UsageError } from "../../lib/errors.ts";

Deno.test("parseDuration() reads each unit", () => {
  assertEquals(parseDuration("45s"), 45_000);
  assertEquals(parseDuration("90m"), 90 * 60_000);
  assertEquals(parseDuration("12h"), 12 * 3_600_000);
  assertEquals(parseDuration("30d"), 30 * 86_400_000);
  assertEquals(parseDuration("2w"), 14 * 86_400_000);
  assertEquals(parseDuration(" 1d "), 86_400_000);
});

Deno.test("parseDuration() refuses malformed values with the option name", () => {
  for (const bad of ["", "30", "d", "0d", "-1d", "1.5h", "1h30m", "30 d", "30D", "10x", "01d"]) {
    assertThrows(() => parseDuration(bad, "--expires-in"), UsageError, "--expires-in must be");
  }
});

Deno.test("formatDuration() picks the largest exact unit", () => {
  assertEquals(formatDuration(30 * 86_400_000), "30d");
  assertEquals(formatDuration(36 * 3_600_000), "36h");
  assertEquals(formatDuration(90 * 60_000), "90m");
  assertEquals(formatDuration(1500), "2s");
});

Deno.test("parseTimestamp() accepts RFC 3339 with a zone and refuses the rest", () => {
  assertEquals(parseTimestamp("2030-01-31T00:00:00Z").toISOString(), "2030-01-31T00:00:00.000Z");
  assertEquals(
    parseTimestamp("2030-01-31T09:00:00.5+02:00").toISOString(),
    "2030-01-31T07:00:00.500Z",
  );
  for (const bad of ["2030-01-31", "2030-01-31T00:00:00", "tomorrow", "2030-13-45T00:00:00Z"]) {
    assertThrows(() => parseTimestamp(bad, "--expires-at"), UsageError, "--expires-at must be");
  }
});
