import { assert, assertEquals } from "../assert.ts";
import { rfc3339MsOf } from "../../lib/protocol/time_text.ts";

const NEW_YEAR = Date.UTC(2026, 0, 1);

Deno.test("rfc3339MsOf() reads date-times with their offset as instants", () => {
  const cases: [string, number][] = [
    ["2026-01-01T00:00:00Z", NEW_YEAR],
    ["2026-01-01t00:00:00z", NEW_YEAR],
    ["2026-01-01T01:00:00+01:00", NEW_YEAR],
    ["2025-12-31T18:30:00-05:30", NEW_YEAR],
    ["2026-01-01T00:00:00-00:00", NEW_YEAR],
    ["2026-01-01T23:59:00+23:59", NEW_YEAR],
    ["2026-01-01T00:00:00.5Z", NEW_YEAR + 500],
    ["2026-01-01T00:00:00.123Z", NEW_YEAR + 123],
    ["2026-01-01T00:00:00.1239999Z", NEW_YEAR + 123], // dropped, not rounded
    ["1969-12-31T23:59:59.999Z", -1],
    ["0000-01-01T00:00:00Z", -62_167_219_200_000], // year 0 of the proleptic Gregorian calendar
    ["9999-12-31T23:59:59.999Z", Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
  ];
  for (const [text, ms] of cases) assertEquals(rfc3339MsOf(text), ms, text);
});

Deno.test("rfc3339MsOf() reads a date as midnight UTC", () => {
  assertEquals(rfc3339MsOf("2026-01-01"), NEW_YEAR);
  assertEquals(rfc3339MsOf("2024-02-29"), Date.UTC(2024, 1, 29));
  assertEquals(rfc3339MsOf("2000-02-29"), Date.UTC(2000, 1, 29));
  assertEquals(rfc3339MsOf("1970-01-01"), 0);
});

Deno.test("rfc3339MsOf() reads a leap second at the end of a UTC day as its last millisecond", () => {
  const last = Date.UTC(2016, 11, 31, 23, 59, 59, 999);
  assertEquals(rfc3339MsOf("2016-12-31T23:59:60Z"), last);
  assertEquals(rfc3339MsOf("2016-12-31T23:59:60.999Z"), last);
  assertEquals(rfc3339MsOf("2017-01-01T00:59:60+01:00"), last);
  assertEquals(rfc3339MsOf("2016-12-31T18:29:60-05:30"), last);
  assertEquals(rfc3339MsOf("1969-12-31T23:59:60Z"), -1);
  for (const t of ["2016-12-31T23:58:60Z", "2016-12-31T23:59:60+01:00", "2016-12-31T12:00:60Z"]) {
    assert(Number.isNaN(rfc3339MsOf(t)), t);
  }
});

Deno.test("rfc3339MsOf() gives NaN for what RFC 3339 does not write, or a day that does not exist", () => {
  for (
    const text of [
      "",
      "2026",
      "2026-01",
      "20260101",
      "2026-1-1",
      "26-01-01",
      "+002026-01-01T00:00:00Z",
      "2026-00-01",
      "2026-13-01",
      "2026-01-00",
      "2026-01-32",
      "2026-02-29",
      "1900-02-29",
      "2026-04-31",
      "2026-06-31",
      "2026-09-31",
      "2026-11-31T00:00:00Z",
      "2026-01-01T00:00:00",
      "2026-01-01T00:00",
      "2026-01-01T00:00Z",
      "2026-01-01 00:00:00Z",
      "2026-01-01_00:00:00Z",
      "2026-01-01T24:00:00Z",
      "2026-01-01T00:60:00Z",
      "2026-01-01T00:00:61Z",
      "2026-01-01T00:00:00.Z",
      "2026-01-01T00:00:00,5Z",
      "2026-01-01T00:00:00+01",
      "2026-01-01T00:00:00+0100",
      "2026-01-01T00:00:00+24:00",
      "2026-01-01T00:00:00+01:60",
      "2026-01-01T00:00:00UTC",
      "2026-01-01T00:00:00Z ",
      " 2026-01-01",
      "2026-01-01\n",
      "Thu, 01 Jan 2026 00:00:00 GMT",
      "٢٠٢٦-01-01",
    ]
  ) {
    assert(Number.isNaN(rfc3339MsOf(text)), JSON.stringify(text));
  }
});

Deno.test("rfc3339MsOf() answers a long hostile value in linear time", () => {
  const long = "2026-01-01T00:00:00." + "9".repeat(200_000);
  const start = performance.now();
  assert(Number.isNaN(rfc3339MsOf(long + "x")));
  assertEquals(rfc3339MsOf(long + "Z"), NEW_YEAR + 999);
  assert(performance.now() - start < 1000);
});
