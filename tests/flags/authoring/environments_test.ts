/**
 * Authoring `namespace.toml` (lib/flags/authoring/environments.ts):
 * environments added (a description as the comment above the section,
 * `public_evaluate` written out), switched, removed (refused while flags
 * override them), the namespace's description; the first edit of an
 * empty manifest creates the file.
 */
import { assertEquals } from "../../assert.ts";
import {
  addEnvironment,
  removeEnvironment,
  setNamespaceDescription,
  setPublicEvaluate,
} from "../../../lib/flags/authoring/environments.ts";
import { environmentsAsWritten } from "../../../lib/flags/authoring/as_written.ts";
import { applied, changedLines, exampleTexts, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const NS = texts.get("namespace.toml")!;

Deno.test("addEnvironment() appends a section, its description as the comment above it", () => {
  const edits = addEnvironment(texts, {
    key: "qa",
    description: "Manual checks before release\nby the QA team",
    public_evaluate: true,
  });
  const [, text] = only(edits);
  assertEquals(
    text,
    `${NS}\n# Manual checks before release\n# by the QA team\n[namespace.environments.qa]\npublic_evaluate = true\n`,
  );
  const after = applied(texts, edits);
  assertEquals(valid(after).namespace.environments.qa, { public_evaluate: true });
  assertEquals(environmentsAsWritten(after).environments.at(-1), {
    key: "qa",
    public_evaluate: true,
    description: "Manual checks before release\nby the QA team",
  });
  const [, plain] = only(addEnvironment(texts, { key: "dev" }));
  assertEquals(plain, `${NS}\n[namespace.environments.dev]\npublic_evaluate = false\n`);
});

Deno.test("addEnvironment() in an empty manifest creates namespace.toml", () => {
  const edits = addEnvironment(new Map(), { key: "production" });
  assertEquals(
    [...edits],
    [[
      "namespace.toml",
      "schema_version = 1\n\n[namespace.environments.production]\npublic_evaluate = false\n",
    ]],
  );
  valid(applied(new Map(), edits));
});

Deno.test("addEnvironment() refuses a taken or invalid key and a control character", () => {
  refused(() => addEnvironment(texts, { key: "staging" }), {
    message: "There is already an environment staging",
    field: "key",
  });
  refused(() => addEnvironment(texts, { key: "QA" }), {
    message: "is not a valid environment key",
    field: "key",
  });
  refused(() => addEnvironment(texts, { key: "qa", description: "bell\u0007" }), {
    message: "control character",
    field: "description",
  });
});

Deno.test("setPublicEvaluate() switches one line", () => {
  const [, text] = only(
    setPublicEvaluate(texts, { environment: "production", public_evaluate: true }),
  );
  assertEquals(changedLines(NS, text), {
    added: ["public_evaluate = true"],
    removed: ["public_evaluate = false"],
  });
  assertEquals(setPublicEvaluate(texts, { environment: "staging", public_evaluate: true }).size, 0);
  refused(() => setPublicEvaluate(texts, { environment: "qa", public_evaluate: true }), {
    message: 'Unknown environment "qa"',
    field: "environment",
  });
});

Deno.test("removeEnvironment() is refused while flags override it, naming them", () => {
  const err = refused(() => removeEnvironment(texts, { environment: "staging" }), {
    message: "Environment staging is used by flags max-cart-items (the override of staging), " +
      "new-checkout (the override of staging): remove those first",
    field: "environment",
  });
  assertEquals(
    (err.details?.referenced_by as { key: string }[]).map((r) => r.key),
    ["max-cart-items", "new-checkout"],
  );
});

Deno.test("removeEnvironment() removes the section and the comment above it", () => {
  const start = applied(texts, addEnvironment(texts, { key: "qa", description: "Checks" }));
  const [, text] = only(removeEnvironment(start, { environment: "qa" }));
  assertEquals(text, NS);
});

Deno.test("setNamespaceDescription() sets, and an empty one removes, the description", () => {
  const [, text] = only(setNamespaceDescription(texts, { description: "Checkout and payments" }));
  assertEquals(changedLines(NS, text), {
    added: ['description = "Checkout and payments"'],
    removed: ['description = "Checkout service"'],
  });
  const [, none] = only(setNamespaceDescription(texts, { description: "" }));
  assertEquals(
    none,
    NS.replace('[namespace]\ndescription = "Checkout service"\n\n', ""),
  );
  valid(applied(texts, new Map([["namespace.toml", none]])));
});
