/**
 * Quick changes that become versions (lib/console/change.tsx): the
 * form, the preview with its diff and problems, the commit through the
 * push service, a push in between (412, what changed, the change made
 * again), and the door: only people who may push see the forms, and a
 * forged commit is refused.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { hashFileSet } from "../../lib/closure/hash.ts";
import { commitVersion } from "../../lib/store/versions.ts";
import { formFields } from "./forms.ts";
import { consoleTest, type ConsoleWorld, FIXTURE, type LoadedPage, type Person } from "./world.ts";

const FORM = "/ui/t/acme/ns/web/flags/new-checkout/change";
const VERSIONS = "/api/v1/tenants/acme/namespaces/web/versions";

/** The lines a diff on the page adds. */
function added(page: LoadedPage): string[] {
  // deno-lint-ignore no-explicit-any
  return [...page.doc.querySelectorAll(".diff .add")].map((e: any) =>
    e.textContent.replace(/^added: ?/, "")
  );
}

async function versions(w: ConsoleWorld) {
  const res = await w.json("GET", VERSIONS, { bearer: w.admin });
  assertEquals(res.status, 200);
  return res.body.versions as { version: number; message: string; created_by: string }[];
}

async function flagFile(w: ConsoleWorld, key: string): Promise<string> {
  const res = await w.json("GET", "/api/v1/tenants/acme/namespaces/web/manifest", {
    bearer: w.admin,
    headers: { accept: "application/json" },
  });
  return (res.body.files as Record<string, string>)[`flags/${key}.toml`]!;
}

/** Opens a form as `who`, fills `fields` in, previews it. */
async function preview(
  w: ConsoleWorld,
  who: Person,
  url: string,
  fields: Record<string, string>,
): Promise<LoadedPage> {
  const form = await w.page(url, who);
  assertEquals(form.status, 200, form.text);
  return await w.post(url, who, { ...formFields(form, "preview"), ...fields });
}

consoleTest(
  "turning a flag off in production previews its diff and commits version 2",
  async (w) => {
    const url = `${FORM}?env=production&kind=toggle`;
    const form = await w.page(url, w.writer);
    assertEquals(form.status, 200, form.text);
    assertStringIncludes(form.doc.querySelector("main").textContent, "is on in production");
    const button = form.doc.querySelector('button[name="step"][value="preview"]');
    assertEquals(button.textContent, "Turn off in production");
    assertEquals(form.doc.querySelector('input[name="base"]').getAttribute("value"), "1");
    assertEquals(form.doc.querySelector('label[for="change-message"]').textContent, "Message");
    assert(form.doc.querySelector("#change-message").hasAttribute("required"));

    const shown = await w.post(url, w.writer, {
      ...formFields(form, "preview"),
      message: "stop the new checkout",
    });
    assertEquals(shown.status, 200, shown.text);
    assertEquals(added(shown), ["+enabled = false"]);
    assertStringIncludes(shown.text, "flags/new-checkout.toml");
    assertEquals(await versions(w).then((v) => v.length), 2, "a preview commits nothing"); // 0 and 1

    const done = await w.post(url, w.writer, formFields(shown, "commit"));
    assertEquals(done.status, 303, done.text);
    assertEquals(done.headers.get("location"), "/ui/t/acme/ns/web/versions/2");
    const [v2] = await versions(w);
    assertEquals(v2!.version, 2);
    assertEquals(v2!.message, "stop the new checkout");
    assertEquals(v2!.created_by, w.writer.user_id);

    const evaluated = await w.json(
      "POST",
      "/api/v1/tenants/acme/namespaces/web/environments/production/evaluate",
      { bearer: w.admin, json: { flag: "new-checkout", context: { targeting_key: "u1" } } },
    );
    assertEquals(evaluated.body.reason, "DISABLED");
    assertEquals(evaluated.body.variation, "off");
    const flags = await w.page("/ui/t/acme/ns/web/env/production?state=off", w.member);
    assertStringIncludes(flags.doc.querySelector("#flag-table tbody").textContent, "new-checkout");
  },
);

consoleTest("a flag disabled in an environment offers to turn it on there", async (w) => {
  const form = await w.page(
    "/ui/t/acme/ns/web/flags/banner-text/change?env=staging&kind=toggle",
    w.writer,
  );
  assertEquals(
    form.doc.querySelector('button[name="step"][value="preview"]').textContent,
    "Turn on in staging",
  );
});

consoleTest(
  "a member sees no change form, and a forged commit is refused and commits nothing",
  async (w) => {
    const url = `${FORM}?env=production&kind=toggle`;
    const form = await w.page(url, w.member);
    assertEquals(form.status, 403);
    assertEquals(form.doc.querySelector("form[action*='/change']"), null);
    for (const step of ["preview", "commit"]) {
      const forged = await w.post(url, w.member, {
        base: "1",
        kind: "toggle",
        env: "production",
        enabled: "false",
        message: "sneaky",
        step,
      });
      assertEquals(forged.status, 403, forged.text);
    }
    assertEquals((await versions(w)).map((v) => v.version), [1, 0]);
  },
);

consoleTest(
  "the default variation of an environment changes through a labelled select",
  async (w) => {
    const url = "/ui/t/acme/ns/web/flags/banner-text/change?env=staging&kind=default";
    const form = await w.page(url, w.writer);
    assertEquals(
      form.doc.querySelector('label[for="change-variation"]').textContent,
      "Default variation in staging",
    );
    assertEquals(
      form.doc.querySelector("#change-variation option[selected]").getAttribute("value"),
      "plain",
    );
    const shown = await w.post(url, w.writer, {
      ...formFields(form, "preview"),
      variation: "sale",
      message: "winter sale in staging",
    });
    assertEquals(added(shown), ['+default = "sale"']);
    const done = await w.post(url, w.writer, formFields(shown, "commit"));
    assertEquals(done.status, 303, done.text);
    assertStringIncludes(
      await flagFile(w, "banner-text"),
      '[environments.staging]\nenabled = false\ndefault = "sale"\n',
    );
  },
);

consoleTest("rollout weights 25/75 become 50/50", async (w) => {
  const url = `${FORM}?env=production&kind=weights`;
  const form = await w.page(url, w.writer);
  const on = form.doc.querySelector('input[name="weight.on"]');
  assertEquals(on.getAttribute("value"), "25");
  assertEquals(
    form.doc.querySelector(`label[for="${on.getAttribute("id")}"]`).textContent,
    "Weight of on",
  );
  assertEquals(form.doc.querySelector('input[name="weight.off"]').getAttribute("value"), "75");
  assertEquals(form.doc.querySelector('input[name="rule"]').getAttribute("value"), "1");
  const shown = await w.post(url, w.writer, {
    ...formFields(form, "preview"),
    "weight.on": "50",
    "weight.off": "50",
    message: "half and half",
  });
  assertEquals(added(shown), [
    '+rollout = [ { variation = "on", weight = 50 }, { variation = "off", weight = 50 } ]',
  ]);
  const done = await w.post(url, w.writer, formFields(shown, "commit"));
  assertEquals(done.status, 303, done.text);
  assertStringIncludes(await flagFile(w, "new-checkout"), '{ variation = "on", weight = 50 }');
});

consoleTest("invalid weights are refused with the error, and the inputs are kept", async (w) => {
  const url = `${FORM}?env=production&kind=weights`;
  const refused = await preview(w, w.writer, url, {
    "weight.on": "60",
    "weight.off": "60",
    message: "too much",
  });
  assertEquals(refused.status, 400, refused.text);
  assertStringIncludes(
    refused.doc.querySelector('[role="alert"]').textContent,
    "The weights sum to 120",
  );
  assertEquals(refused.doc.querySelector('input[name="weight.on"]').getAttribute("value"), "60");
  assertEquals(refused.doc.querySelector('input[name="weight.off"]').getAttribute("value"), "60");
  assertEquals(refused.doc.querySelector("#change-message").getAttribute("value"), "too much");
  assertEquals(refused.doc.querySelector('button[value="commit"]'), null);

  const word = await preview(w, w.writer, url, { "weight.on": "half", message: "x" });
  assertEquals(word.status, 400);
  assertStringIncludes(word.text, "must be a whole number of 0 or more, not &quot;half&quot;");
  assertEquals(
    word.doc.querySelector('input[name="weight.on"]').getAttribute("aria-invalid"),
    "true",
  );
  assertEquals((await versions(w)).length, 2);
});

consoleTest("a change without a message is refused and the form is kept", async (w) => {
  const url = `${FORM}?env=production&kind=default`;
  const refused = await preview(w, w.writer, url, { variation: "on", message: "  " });
  assertEquals(refused.status, 400);
  assertStringIncludes(refused.text, "Write a message");
  assertEquals(
    refused.doc.querySelector("#change-variation option[selected]").getAttribute("value"),
    "on",
  );
  // a commit without one is refused the same way
  const commit = await w.post(url, w.writer, {
    base: "1",
    kind: "default",
    env: "production",
    variation: "on",
    message: "",
    step: "commit",
  });
  assertEquals(commit.status, 400);
  assertEquals((await versions(w)).length, 2);
});

consoleTest("a change that changes nothing says so and commits nothing", async (w) => {
  const url = "/ui/t/acme/ns/web/flags/max-items/change?kind=default";
  const same = await preview(w, w.writer, url, { variation: "ten", message: "same" });
  assertEquals(same.status, 200);
  assertStringIncludes(same.text, "Nothing changed");
  assertEquals(same.doc.querySelector('button[value="commit"]'), null);
});

consoleTest(
  "a preview whose manifest is not valid lists the problems and offers no commit",
  async (w) => {
    // Version 2 was stored under an older release's looser rules: a pattern the linear-time
    // engine refuses. It is served, but a new version must pass today's rules.
    const files = new Map(
      Object.entries({
        ...FIXTURE,
        "segments/lookahead.toml":
          'schema_version = 1\n[[predicate]]\nattribute = "email"\nop = "matches"\nvalue = "(?=a)"\n',
      }).map(([p, t]) => [p, new TextEncoder().encode(t)]),
    );
    await commitVersion(w.kv, {
      tenant: "acme",
      namespace: "web",
      files,
      hashed: await hashFileSet(files),
      environments: { production: { public_evaluate: false }, staging: { public_evaluate: true } },
      created_by: "usr_old_release",
    });
    const url = `${FORM}?env=production&kind=toggle`;
    const shown = await preview(w, w.writer, url, { message: "stop it" });
    assertEquals(shown.status, 200, shown.text);
    assertEquals(added(shown), ["+enabled = false"]);
    const problems = shown.doc.querySelector('[role="alert"]').textContent;
    assertStringIncludes(problems, "cannot be committed (1 problem)");
    assertStringIncludes(problems, "segments/lookahead.toml");
    assertEquals(shown.doc.querySelector('button[value="commit"]'), null);
    // and a forced commit is refused by the push service, with the problems again
    const forced = await w.post(url, w.writer, { ...formFields(shown, "edit"), step: "commit" });
    assertEquals(forced.status, 422, forced.text);
    assertStringIncludes(forced.text, "segments/lookahead.toml");
    assertEquals((await versions(w))[0]!.version, 2);
  },
);

consoleTest(
  "a push after the form was opened gives 412, the other change, and the change made again",
  async (w) => {
    const url = `${FORM}?env=production&kind=toggle`;
    const shown = await preview(w, w.writer, url, { message: "stop it now" });
    assertEquals(shown.status, 200, shown.text);
    const v2 = await w.push({
      ...FIXTURE,
      "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
        'description = "New checkout flow"',
        'description = "New checkout flow, v2"',
      ),
      "flags/banner-text.toml": FIXTURE["flags/banner-text.toml"]!.replace(
        "Winter sale",
        "Spring sale",
      ),
    }, "rename the checkout");
    assertEquals(v2, 2);

    const conflict = await w.post(url, w.writer, formFields(shown, "commit"));
    assertEquals(conflict.status, 412, conflict.text);
    const main = conflict.doc.querySelector("main").textContent;
    assertStringIncludes(
      conflict.doc.querySelector("h1").textContent,
      "Someone changed this since you opened it",
    );
    assertStringIncludes(main, "rename the checkout");
    assertEquals(added(conflict), [
      '+description = "New checkout flow, v2"', // their change
      "+enabled = false", // mine, made again on version 2
    ]);
    assertStringIncludes(main, "flags/banner-text.toml");
    const again = formFields(conflict, "commit");
    assertEquals(again.base, "2");
    assertEquals(again.message, "stop it now");
    assertEquals((await versions(w)).length, 3, "nothing of mine was committed");

    const done = await w.post(url, w.writer, again);
    assertEquals(done.status, 303, done.text);
    assertEquals(done.headers.get("location"), "/ui/t/acme/ns/web/versions/3");
    const file = await flagFile(w, "new-checkout");
    assertStringIncludes(file, "New checkout flow, v2");
    assertStringIncludes(file, "enabled = false");
  },
);

consoleTest(
  "a preview on a version that is no longer the head is already a conflict",
  async (w) => {
    const url = `${FORM}?env=production&kind=weights`;
    const form = await w.page(url, w.writer);
    await w.push({
      ...FIXTURE,
      "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
        /\[\[rule\]\]\nsegment = "eu-customers"\nrollout = .*\n/,
        "",
      ),
    }, "no more rollout");
    const conflict = await w.post(url, w.writer, {
      ...formFields(form, "preview"),
      "weight.on": "50",
      "weight.off": "50",
      message: "half and half",
    });
    assertEquals(conflict.status, 412, conflict.text);
    assertStringIncludes(conflict.text, "cannot be made on version 2");
    assertStringIncludes(conflict.text, "There is no rule 2");
    const kept = conflict.doc.querySelector("dl").textContent;
    assertStringIncludes(kept, "half and half");
    assertStringIncludes(kept, "Weight of on50");
    assertEquals(conflict.doc.querySelector('button[value="commit"]'), null);
  },
);

consoleTest(
  "a tenant admin may change the flag too; an unknown flag or environment is a 404",
  async (w) => {
    const ok = await w.page(`${FORM}?env=production&kind=default`, w.tenantAdmin);
    assertEquals(ok.status, 200);
    const flag = await w.page("/ui/t/acme/ns/web/flags/nope/change?kind=default", w.writer);
    assertEquals(flag.status, 404);
    const env = await w.page(`${FORM}?env=nowhere&kind=default`, w.writer);
    assertEquals(env.status, 404);
    const choice = await w.page(FORM, w.writer);
    assertEquals(choice.status, 200);
    assertStringIncludes(choice.text, "?env=production&amp;kind=toggle");
  },
);
