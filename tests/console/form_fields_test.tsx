/**
 * The pieces console forms are made of (lib/console/form_fields.tsx):
 * every control has its label, problems and hints have ids a control can
 * point at, and a destructive action needs its box ticked.
 */
import { DOMParser } from "npm:linkedom@^0.18.15";
import type { Child } from "hono/jsx";
import { assert, assertEquals } from "../assert.ts";
import {
  ConfirmCheck,
  confirmed,
  Field,
  GetForm,
  InlineField,
  Options,
  problemAttributes,
} from "../../lib/console/form_fields.tsx";

// deno-lint-ignore no-explicit-any
async function parse(node: Child): Promise<any> {
  const html = String(await <>{node}</>);
  return new DOMParser().parseFromString(`<!doctype html><body>${html}</body>`, "text/html");
}

Deno.test("a field's label names its control and its hint has the control's id", async () => {
  const doc = await parse(
    <Field id="slug" label="Slug" hint="Lower-case">
      <input id="slug" aria-describedby="slug-hint" />
    </Field>,
  );
  assertEquals(doc.querySelector("label").getAttribute("for"), "slug");
  assertEquals(doc.querySelector("#slug-hint").textContent, "Lower-case");
  assertEquals(doc.querySelector(".field > p") !== null, true);
  const bare = await parse(
    <Field id="x" label="X">
      <input id="x" />
    </Field>,
  );
  assertEquals(bare.querySelector("p"), null, "no hint, no paragraph");
});

Deno.test("an inline field shows its problem where the control points", async () => {
  const attrs = problemAttributes("f-limit", "Show 1 to 100");
  const doc = await parse(
    <InlineField id="f-limit" label="Per page" problem="Show 1 to 100">
      <input id="f-limit" {...attrs} />
    </InlineField>,
  );
  const input = doc.querySelector("#f-limit");
  assertEquals(input.getAttribute("aria-invalid"), "true");
  assertEquals(
    doc.querySelector(`#${input.getAttribute("aria-describedby")}`).textContent,
    "Show 1 to 100",
  );
  const fine = await parse(
    <InlineField id="f-limit" label="Per page">
      <input />
    </InlineField>,
  );
  assertEquals(fine.querySelector(".error"), null);
});

Deno.test("a GET form submits its fields with a secondary button, then what follows", async () => {
  const doc = await parse(
    <GetForm action="/ui/t/acme/tokens" label="Filter tokens" button="Filter" after={<p>after</p>}>
      <InlineField id="s" label="Status">
        <select id="s" name="status">
          <Options choices={["active", "revoked"]} selected="revoked" any="any" />
        </select>
      </InlineField>
    </GetForm>,
  );
  const form = doc.querySelector("form");
  assertEquals(form.getAttribute("method"), "get");
  assertEquals(form.getAttribute("action"), "/ui/t/acme/tokens");
  assertEquals(form.getAttribute("aria-label"), "Filter tokens");
  assertEquals(form.getAttribute("class"), "inline");
  // deno-lint-ignore no-explicit-any
  const options = [...doc.querySelectorAll("option")].map((o: any) => o.getAttribute("value"));
  assertEquals(options, ["", "active", "revoked"]);
  assertEquals(doc.querySelector("option[selected]").getAttribute("value"), "revoked");
  assertEquals(form.lastElementChild.textContent, "after");
  assertEquals(doc.querySelector("button").textContent, "Filter");
});

Deno.test("a destructive action's box is required and only confirm=yes confirms it", async () => {
  const doc = await parse(<ConfirmCheck id="revoke-confirm">Revoke ci now</ConfirmCheck>);
  const box = doc.querySelector("#revoke-confirm");
  assert(box.hasAttribute("required"));
  assertEquals(box.hasAttribute("checked"), false);
  assertEquals(doc.querySelector('label[for="revoke-confirm"]').textContent, "Revoke ci now");
  const kept = await parse(<ConfirmCheck id="c" checked invalid>x</ConfirmCheck>);
  assert(kept.querySelector("#c").hasAttribute("checked"));
  assertEquals(kept.querySelector("#c").getAttribute("aria-invalid"), "true");
  assertEquals(confirmed(new Map([["confirm", "yes"]])), true);
  assertEquals(confirmed(new Map([["confirm", "on"]])), false);
  assertEquals(confirmed(new Map()), false);
});
