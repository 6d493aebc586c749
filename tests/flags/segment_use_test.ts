import { assertEquals } from "../assert.ts";
import { segmentsIncluding, segmentUsers } from "../../lib/flags/segment_use.ts";
import type { Manifest } from "../../lib/flags/model.ts";
import { flag, model, segment } from "./reach_world.ts";

const CHAIN = model({
  "flags/direct.toml": flag(["c"]),
  "flags/deep.toml": flag(["a"]),
  "flags/both.toml": flag(["c", "b"]),
  "flags/prod-only.toml": flag([], { production: ["b"] }),
  "flags/unrelated.toml": flag(["other"]),
  "segments/a.toml": segment("b"),
  "segments/b.toml": segment("c"),
  "segments/c.toml": segment(),
  "segments/other.toml": segment(),
});

Deno.test("a flag naming the segment uses it directly", () => {
  const users = segmentUsers(CHAIN, "c");
  assertEquals(users.find((u) => u.flag === "direct"), {
    flag: "direct",
    direct: true,
    through: [],
  });
});

Deno.test("a flag reaching the segment through a chain names the segment its rule names", () => {
  const users = segmentUsers(CHAIN, "c");
  assertEquals(users.find((u) => u.flag === "deep"), {
    flag: "deep",
    direct: false,
    through: ["a"],
  });
  assertEquals(users.find((u) => u.flag === "both"), {
    flag: "both",
    direct: true,
    through: ["b"],
  });
});

Deno.test("an environment's own rules count, and flags that do not reach it are left out", () => {
  assertEquals(segmentUsers(CHAIN, "c").map((u) => u.flag), [
    "both",
    "deep",
    "direct",
    "prod-only",
  ]);
  assertEquals(segmentUsers(CHAIN, "b").map((u) => u.flag), ["both", "deep", "prod-only"]);
  assertEquals(segmentUsers(CHAIN, "a").map((u) => u.flag), ["deep"]);
});

Deno.test("a segment no flag reaches has no users", () => {
  const m = model({ "segments/lonely.toml": segment() });
  assertEquals(segmentUsers(m, "lonely"), []);
});

Deno.test("segmentUsers() ends on a hand-built cycle; a reference to a missing segment still counts", () => {
  const m: Manifest = {
    namespace: { description: "", environments: {} },
    flags: {
      f: {
        key: "f",
        description: "",
        type: "boolean",
        default: "off",
        variations: { on: true, off: false },
        rules: [{ segment: "x", variation: "on", bucket_by: "targeting_key" }],
        environments: {},
      },
    },
    segments: {
      x: {
        key: "x",
        description: "",
        match: "all",
        predicates: [
          { attribute: "segment.y", op: "eq", value: true },
          { attribute: "segment.ghost", op: "eq", value: true },
        ],
      },
      y: {
        key: "y",
        description: "",
        match: "all",
        predicates: [{ attribute: "segment.x", op: "eq", value: true }],
      },
    },
  };
  assertEquals(segmentUsers(m, "y"), [{ flag: "f", direct: false, through: ["x"] }]);
  assertEquals(segmentUsers(m, "ghost"), [{ flag: "f", direct: false, through: ["x"] }]);
  assertEquals(segmentUsers(m, "nope"), []);
});

Deno.test("segmentsIncluding() lists the segments that refer to it directly", () => {
  assertEquals(segmentsIncluding(CHAIN, "c"), ["b"]);
  assertEquals(segmentsIncluding(CHAIN, "b"), ["a"]);
  assertEquals(segmentsIncluding(CHAIN, "a"), []);
});
