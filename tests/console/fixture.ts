/**
 * The namespace every console test starts with: three flags (boolean with
 * a rule and a rollout, string disabled in staging, number without rules),
 * two environments, and segments that nest (`eu-customers` reaches
 * `paying`); and the flag files tests add to it.
 *
 * @module
 */

/** The manifest of `acme/web`. */
export const FIXTURE: Record<string, string> = {
  "namespace.toml": `schema_version = 1
[namespace]
description = "Web shop"
[namespace.environments.production]
public_evaluate = false
[namespace.environments.staging]
public_evaluate = true
`,
  "flags/new-checkout.toml": `schema_version = 1
description = "New checkout flow"
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
segment = "beta-testers"
variation = "on"
[[rule]]
segment = "eu-customers"
rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]
[environments.production]
enabled = true
default = "off"
`,
  "flags/banner-text.toml": `schema_version = 1
description = "Banner on the home page"
type = "string"
default = "plain"
[variations]
plain = "Welcome"
sale = "Winter sale"
[environments.staging]
enabled = false
`,
  "flags/max-items.toml": `schema_version = 1
type = "number"
default = "ten"
[variations]
ten = 10
fifty = 50
`,
  "segments/beta-testers.toml": `schema_version = 1
description = "People in the beta"
match = "any"
[[predicate]]
attribute = "user.beta"
op = "eq"
value = true
`,
  "segments/eu-customers.toml": `schema_version = 1
description = "Customers in the EU"
match = "all"
[[predicate]]
attribute = "account.country"
op = "in"
value = ["DE", "FR", "NL"]
[[predicate]]
attribute = "segment.paying"
op = "eq"
value = true
`,
  "segments/paying.toml": `schema_version = 1
description = "Paying customers"
match = "all"
[[predicate]]
attribute = "account.plan"
op = "in"
value = ["pro", "team"]
`,
};

/** A boolean flag file without rules (variations `a` and `b`, default `a`): a flag a test adds. */
export const PLAIN_FLAG =
  'schema_version = 1\ntype = "boolean"\ndefault = "a"\n[variations]\na = true\nb = false\n';

/**
 * A boolean flag file like `new-checkout` (`on`/`off`, default `off`) with
 * one rule: a rollout over `eu-customers` that serves `on` to `weight` of
 * every 100.
 */
export function rolloutFlag(description: string, weight: number): string {
  return `schema_version = 1
description = "${description}"
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
segment = "eu-customers"
rollout = [ { variation = "on", weight = ${weight} }, { variation = "off", weight = ${
    100 - weight
  } } ]
`;
}
