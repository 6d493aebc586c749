/**
 * Test helper: tiny manifests for the reachability tests (which segments
 * a flag reaches, which flags use a segment): boolean flags whose rules
 * name segments, segments that refer to other segments, one environment
 * (`production`).
 *
 * @module
 */
import { parseManifest } from "../../lib/flags/validate.ts";
import type { Manifest } from "../../lib/flags/model.ts";

const enc = new TextEncoder();

/** A boolean flag whose rules (and `production` rules) name these segments. */
export function flag(rules: string[], envRules: Record<string, string[]> = {}): string {
  let s =
    'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n';
  for (const seg of rules) s += `[[rule]]\nsegment = "${seg}"\nvariation = "on"\n`;
  for (const [env, segs] of Object.entries(envRules)) {
    for (const seg of segs) {
      s += `[[environments.${env}.rule]]\nsegment = "${seg}"\nvariation = "on"\n`;
    }
  }
  return s;
}

/** A segment that refers to these segments. */
export function segment(...refs: string[]): string {
  let s =
    'schema_version = 1\nmatch = "any"\n[[predicate]]\nattribute = "a"\nop = "eq"\nvalue = 1\n';
  for (const r of refs) s += `[[predicate]]\nattribute = "segment.${r}"\nop = "eq"\nvalue = true\n`;
  return s;
}

/** The validated manifest of these files (with `namespace.toml`). */
export function model(files: Record<string, string>): Manifest {
  const m = new Map<string, Uint8Array>([
    ["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.production]\n")],
  ]);
  for (const [p, c] of Object.entries(files)) m.set(p, enc.encode(c));
  return parseManifest(m);
}
