/**
 * The small pieces every console page uses (lib/console/widgets.tsx):
 * tables say which column is which, secondary columns hide on a phone,
 * facts pair a label with a value, a pager shows only the pages there are,
 * and the environment switcher marks the current one in words.
 */
import { DOMParser } from "npm:linkedom@^0.18.15";
import type { Child } from "hono/jsx";
import { assertEquals } from "../assert.ts";
import {
  DataTable,
  EnvironmentNav,
  Fact,
  Facts,
  Pager,
  ProblemNotice,
} from "../../lib/console/widgets.tsx";

// deno-lint-ignore no-explicit-any
async function parse(node: Child): Promise<any> {
  const html = String(await <>{node}</>);
  return new DOMParser().parseFromString(`<!doctype html><body>${html}</body>`, "text/html");
}

// deno-lint-ignore no-explicit-any
const texts = (nodes: any): string[] => [...nodes].map((n: any) => n.textContent);

Deno.test("a table's columns are headed by scope=col, secondary ones hidden when narrow", async () => {
  const doc = await parse(
    <DataTable
      id="t"
      class="keyed"
      columns={["Flag", { label: "Type", secondary: true }]}
      caption="Flags of web"
      captionHidden
    >
      <tr>
        <td>a</td>
        <td>boolean</td>
      </tr>
    </DataTable>,
  );
  assertEquals(doc.querySelector("div.table-wrap > table#t.keyed") !== null, true);
  assertEquals(texts(doc.querySelectorAll('th[scope="col"]')), ["Flag", "Type"]);
  assertEquals(texts(doc.querySelectorAll("th.hide-narrow")), ["Type"]);
  assertEquals(doc.querySelector("caption.sr-only").textContent, "Flags of web");
  assertEquals(doc.querySelectorAll("tbody tr").length, 1);
});

Deno.test("facts pair each label with its value", async () => {
  const doc = await parse(
    <Facts class="meta">
      <Fact label="Files">7</Fact>
      <Fact label="Message" class="message">first flags</Fact>
    </Facts>,
  );
  assertEquals(doc.querySelector("dl").getAttribute("class"), "facts meta");
  assertEquals(texts(doc.querySelectorAll("dt")), ["Files", "Message"]);
  assertEquals(texts(doc.querySelectorAll("dd")), ["7", "first flags"]);
  assertEquals(doc.querySelector("dd.message").textContent, "first flags");
});

Deno.test("a pager links the pages there are, and is absent without any", async () => {
  const both = await parse(<Pager label="Pages of x" first="/x" next="/x?after=3" />);
  assertEquals(texts(both.querySelectorAll("nav.pager a")), ["Newest", "Older"]);
  assertEquals(both.querySelector('a[rel="next"]').getAttribute("href"), "/x?after=3");
  const named = await parse(<Pager label="p" next="/n" nextText="Next page" />);
  assertEquals(texts(named.querySelectorAll("a")), ["Next page"]);
  assertEquals((await parse(<Pager label="p" />)).querySelector("nav"), null);
});

Deno.test("the environment switcher marks the current environment for screen readers", async () => {
  const doc = await parse(
    <EnvironmentNav
      choices={[
        { label: "production", href: "/p", current: true },
        { label: "staging", href: "/s", current: false },
      ]}
      links={[<a href="/v">Versions</a>]}
    />,
  );
  assertEquals(doc.querySelector('[aria-current="page"]').textContent, "production");
  assertEquals(texts(doc.querySelectorAll("a")), ["production", "staging", "Versions"]);
  assertEquals(
    doc.querySelector("nav").textContent.replace(/\s+/g, " ").trim(),
    "Environment: production staging · Versions",
  );
  const none = await parse(<EnvironmentNav choices={[]} />);
  assertEquals(none.querySelector("nav").textContent.includes("none declared"), true);
});

Deno.test("a refused form's notice is an alert its fields can point at", async () => {
  const doc = await parse(<ProblemNotice id="token-error" message="Name taken" />);
  assertEquals(doc.querySelector('[role="alert"] p#token-error').textContent, "Name taken");
  assertEquals(String(await <ProblemNotice message={undefined} />), "");
});
