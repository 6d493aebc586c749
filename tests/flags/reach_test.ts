import { assertEquals } from "../assert.ts";
import {
  flagSegments,
  orphanSegments,
  reachableSegments,
  segmentRefs,
} from "../../lib/flags/reach.ts";
import type { Manifest } from "../../lib/flags/model.ts";
import { flag, model, segment } from "./reach_world.ts";

Deno.test("reachableSegments() follows segment references transitively", () => {
  const m = model({
    "flags/f.toml": flag(["a"]),
    "flags/g.toml": flag(["d"]),
    "segments/a.toml": segment("b"),
    "segments/b.toml": segment("c"),
    "segments/c.toml": segment(),
    "segments/d.toml": segment(),
  });
  assertEquals(reachableSegments(m, ["f"]), ["a", "b", "c"]);
  assertEquals(reachableSegments(m, ["g"]), ["d"]);
  assertEquals(reachableSegments(m, ["f", "g"]), ["a", "b", "c", "d"]);
  assertEquals(reachableSegments(m, []), []);
});

Deno.test("reachableSegments() visits a diamond once", () => {
  const m = model({
    "flags/f.toml": flag(["top"]),
    "segments/top.toml": segment("left", "right"),
    "segments/left.toml": segment("bottom"),
    "segments/right.toml": segment("bottom"),
    "segments/bottom.toml": segment(),
  });
  assertEquals(reachableSegments(m, ["f"]), ["bottom", "left", "right", "top"]);
  assertEquals(segmentRefs(m.segments.top!), ["left", "right"]);
});

Deno.test("reachableSegments() includes segments of environment override rules", () => {
  const m = model({
    "flags/f.toml": flag(["a"], { production: ["b", "a"] }),
    "segments/a.toml": segment(),
    "segments/b.toml": segment("c"),
    "segments/c.toml": segment(),
  });
  assertEquals(flagSegments(m.flags.f!), ["a", "b"]);
  assertEquals(reachableSegments(m, ["f"]), ["a", "b", "c"]);
});

Deno.test("reachableSegments() ignores unknown flag keys", () => {
  const m = model({ "flags/f.toml": flag(["a"]), "segments/a.toml": segment() });
  assertEquals(reachableSegments(m, ["nope", "f", "__proto__"]), ["a"]);
});

Deno.test("reachableSegments() terminates on a hand-built cyclic model", () => {
  const m: Manifest = {
    namespace: { description: "", environments: {} },
    flags: {
      f: {
        key: "f",
        description: "",
        type: "boolean",
        default: "on",
        variations: { on: true },
        rules: [{ segment: "x", variation: "on", bucket_by: "targeting_key" }],
        environments: {},
      },
    },
    segments: {
      x: {
        key: "x",
        description: "",
        match: "all",
        predicates: [{ attribute: "segment.y", op: "eq", value: true }],
      },
      y: {
        key: "y",
        description: "",
        match: "all",
        predicates: [
          { attribute: "segment.x", op: "eq", value: true },
          { attribute: "segment.missing", op: "eq", value: true },
        ],
      },
    },
  };
  assertEquals(reachableSegments(m, ["f"]), ["x", "y"]);
});

Deno.test("orphanSegments() lists segments no flag reaches", () => {
  const m = model({
    "flags/f.toml": flag(["a"]),
    "segments/a.toml": segment("b"),
    "segments/b.toml": segment(),
    "segments/orphan.toml": segment("b"),
    "segments/lonely.toml": segment(),
  });
  assertEquals(orphanSegments(m), ["lonely", "orphan"]);
  assertEquals(orphanSegments(model({ "segments/s.toml": segment() })), ["s"]);
  assertEquals(orphanSegments(model({})), []);
});
