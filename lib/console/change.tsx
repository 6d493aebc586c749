/**
 * Quick changes that become versions: turn a flag on or off in an
 * environment, change the variation it serves by default, or set the
 * weights of a rollout, from a form, without editing files. Each change
 * goes form → preview → commit. The form carries the head version it was
 * built from (`base`); the preview shows the line diff of the flag file
 * and every problem the whole manifest would have; the commit makes the
 * files of `base` with the edited flag file the next version through the
 * same validation, commit and audit as a push (`If-Match: base`), so
 * permissions, validation and history are the API's. When someone pushed
 * in between, the page says what they changed and re-applies the person's
 * change on the new head as a new preview, message kept.
 *
 * These routes read the form (lib/console/change_input.ts), make one
 * service call (lib/services/manifests.ts: `flagChangeForm`,
 * `previewFlagChange`, `commitFlagChange`: one authorisation, one head
 * read each) and draw what it returns: the form
 * (lib/console/change_form.tsx), the preview
 * (lib/console/change_preview.tsx) or the conflict
 * (lib/console/change_conflict.tsx). The edit itself is
 * lib/flags/quick_change.ts.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { InvalidRequestError } from "../errors.ts";
import {
  commitFlagChange,
  flagChangeForm,
  type FlagChangeOutcome,
  type FlagChangeRequest,
  previewFlagChange,
} from "../services/manifests.ts";
import { authDeps } from "../http/authn.ts";
import type { AppDeps } from "../http/deps.ts";
import { conflictPage, type TheirVersion } from "./change_conflict.tsx";
import { choicePage, formPage } from "./change_form.tsx";
import {
  baseOf,
  type ChangeInput,
  changeOf,
  envIn,
  inputOf,
  kindOf,
  refusalOf,
} from "./change_input.ts";
import { previewPage } from "./change_preview.tsx";
import type { ConsoleEnv } from "./env.ts";
import { flagIn, type ManifestViews } from "../services/versions.ts";
import { peopleNames } from "../services/people.ts";
import { consoleRequest, namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";

/**
 * The quick-change routes, mounted at `/ui/t/:tenant/ns/:ns`:
 * `GET /flags/:flag/change?env=&kind=` (the form, or a choice of changes
 * without `kind`) and `POST` to the same address with `step=preview`,
 * `step=commit`, `step=propose` (a change request instead of a version,
 * offered when the change affects a protected environment) or `step=edit`
 * (back to the form, inputs kept).
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", changeRoutes(deps, views));
 * ```
 */
export function changeRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const viewDeps = { ...deps, views };

  app.get("/flags/:flag/change", async (c) => {
    const view = await flagChangeForm(viewDeps, c.get("person"), namespaceRef(c));
    const flag = flagIn(view, c.req.param("flag"));
    const env = envIn(view, c.req.query("env"));
    const raw = c.req.query("kind");
    if (raw === undefined || raw === "" || (raw === "toggle" && env === undefined)) {
      return choicePage(c, view, flag, env); // a toggle needs an environment
    }
    const input: ChangeInput = {
      kind: kindOf(raw),
      env,
      base: view.head.version,
      message: "",
      rule: c.req.query("rule"),
      weights: [],
    };
    return formPage(c, view, flag, input);
  });

  app.post("/flags/:flag/change", async (c) => {
    const form = c.get("form");
    const step = form.get("step") ?? "preview";
    // The service reads the form only once the person may change the namespace (a forged
    // post stops there), and the inputs against the version the form was built from.
    let input: ChangeInput | undefined;
    const request = (): FlagChangeRequest => {
      const base = baseOf(form);
      return {
        base,
        flag: c.req.param("flag"),
        read: (view) => {
          const asked = input = inputOf(c, view, base);
          if (step === "edit") return null;
          if (step !== "preview" && step !== "commit" && step !== "propose") {
            throw new InvalidRequestError("step must be preview, commit, propose or edit");
          }
          return {
            environment: asked.env,
            message: asked.message,
            propose: step === "propose",
            change: () => changeOf(asked),
          };
        },
      };
    };
    const person = c.get("person");
    const outcome = step === "commit" || step === "propose"
      ? await commitFlagChange(viewDeps, person, namespaceRef(c), request, consoleRequest(c))
      : await previewFlagChange(viewDeps, person, namespaceRef(c), request);
    return await outcomePage(c, outcome, input!);
  });

  /** The page of what became of a change. */
  async function outcomePage(
    c: Context<ConsoleEnv>,
    outcome: FlagChangeOutcome,
    input: ChangeInput,
  ): Promise<Response> {
    const { view, flag } = outcome;
    switch (outcome.kind) {
      case "form":
        return await formPage(c, view, flag, input);
      case "refused":
        return await formPage(c, view, flag, input, refusalOf(outcome.error), 400);
      case "unchanged":
        return await formPage(c, view, flag, input, undefined, 200, true);
      case "preview":
      case "invalid": // the commit's validation refused it: the preview again, 422
        return await previewPage(
          c,
          view,
          flag,
          input,
          outcome.before,
          outcome.after,
          outcome.problems,
          outcome.kind === "invalid" ? 422 : 200,
        );
      case "approval_required": // a protected environment: the preview again, to propose it
        return await previewPage(
          c,
          view,
          flag,
          input,
          outcome.before,
          outcome.after,
          [],
          409,
          { environments: outcome.environments, required: outcome.required },
        );
      case "conflict":
        return await conflictPage(c, outcome, await withAuthors(c, outcome.theirs), input);
      case "proposed":
        return c.redirect(
          ui.changeRequest(view.tenant, view.namespace, outcome.change_request.id, {
            done: "opened",
          }),
          303,
        );
      case "committed":
        return c.redirect(ui.version(view.tenant, view.namespace, outcome.version.version), 303);
    }
  }

  /** The versions committed since the form's, each with its author's email (or id). */
  async function withAuthors(
    c: Context<ConsoleEnv>,
    versions: readonly Omit<TheirVersion, "author">[],
  ): Promise<TheirVersion[]> {
    const names = peopleNames(authDeps(deps), c.get("person"));
    return await Promise.all(
      versions.map(async (v) => ({
        ...v,
        author: (await names.email(v.created_by)) ?? v.created_by,
      })),
    );
  }

  return app;
}
