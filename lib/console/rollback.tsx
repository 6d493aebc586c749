/**
 * The rollback of the console: a plain form post from a version's page,
 * confirmed with a required checkbox and a message, that makes a new
 * version whose files equal the chosen one (`rollbackManifest` of
 * lib/services/manifests.ts, as `POST …/rollback` of the API does), then
 * shows it. The service refuses who may not change the manifest before the
 * form is looked at; a form with problems shows the version's page again
 * with them (400, the inputs kept). A rollback that affects a protected
 * environment is refused (409): the page says so and offers to propose it
 * for review (`step=propose`), which opens a change request with the
 * version's files instead, and shows it.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../http/deps.ts";
import { InvalidRequestError } from "../errors.ts";
import { rollbackManifest } from "../services/manifests.ts";
import { ApprovalRequiredError } from "../services/protection.ts";
import type { ConsoleEnv } from "./env.ts";
import { type RollbackInput, rollbackInput } from "./rollback_form.tsx";
import { consoleRequest, namespaceRef, versionParam } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { versionPage } from "./version_page.tsx";

/** A rollback form with problems: the version's page shows them. */
class RollbackRefused extends InvalidRequestError {
  constructor(readonly input: RollbackInput) {
    super(input.problems.join(" "));
  }
}

/**
 * The rollback route, mounted at `/ui/t/:tenant/ns/:ns`:
 * `POST /versions/:v/rollback`.
 *
 * @param deps the app dependencies
 * @returns the route
 *
 * @example
 * ```ts ignore
 * versions.route("/", rollbackRoutes(deps));
 * ```
 */
export function rollbackRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.post("/versions/:v/rollback", async (c) => {
    const ref = namespaceRef(c);
    const v = versionParam(c.req.param("v"));
    let result;
    let input: RollbackInput | undefined;
    // the button says whether the post commits or proposes; the rest of the form is read only
    // once the person may do that: a forged post learns nothing
    const intent = c.get("form").get("step") === "propose" ? "propose" : "commit";
    try {
      result = await rollbackManifest(
        deps,
        c.get("person"),
        ref,
        () => {
          input = rollbackInput(c.get("form"), v);
          if (input.problems.length > 0) throw new RollbackRefused(input);
          return { version: v, message: input.message.trim() };
        },
        consoleRequest(c),
        intent,
      );
    } catch (err) {
      if (err instanceof RollbackRefused) return await versionPage(c, deps, v, err.input);
      if (!(err instanceof ApprovalRequiredError) || input === undefined) throw err;
      const required = (err.details as { required_approvals: number }).required_approvals;
      return await versionPage(c, deps, v, {
        ...input,
        approval: { environments: err.environments, required },
      });
    }
    if ("proposed" in result) {
      return c.redirect(
        ui.changeRequest(ref.tenant, ref.namespace, result.proposed.id, { done: "opened" }),
        303,
      );
    }
    if (!result.changed) {
      return c.redirect(ui.version(ref.tenant, ref.namespace, v, { done: "unchanged" }), 303);
    }
    return c.redirect(
      ui.version(ref.tenant, ref.namespace, result.version.version, { done: "rollback", from: v }),
      303,
    );
  });

  return app;
}
