/**
 * The editors of a flag's rules (the flag's own, or an environment's own),
 * of an environment's override, and promotion, under `/edit/flags/:flag/`:
 *
 * - `rules?env=`: the scope's rules page (rule_list.tsx);
 * - `rules/add`, `rules/replace?index=`: one rule (rule_edit.tsx);
 * - `rules/move`, `rules/remove`: order and removal (rule_order.tsx);
 * - `override?env=`: enabled, default, own rules (override_editor.tsx);
 * - `promote?from=&to=`: copy one environment's configuration to another
 *   (promotion_editor.tsx).
 *
 * Every write is an editor of lib/console/edit_flow.tsx: form, preview,
 * commit or propose.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../../http/deps.ts";
import { flagChangeForm } from "../../services/manifests.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { namespaceRef } from "../route_refs.ts";
import { mountEditor } from "./mount.ts";
import { overrideEditor } from "./override_editor.tsx";
import { promotionEditor } from "./promotion_editor.tsx";
import { addRuleEditor, replaceRuleEditor } from "./rule_edit.tsx";
import { rulesPage } from "./rule_list.tsx";
import { moveRuleEditor, removeRuleEditor } from "./rule_order.tsx";

/**
 * The routes of these editors, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/", ruleEditorRoutes(deps, views));
 * ```
 */
export function ruleEditorRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const flag = "/edit/flags/:flag";
  app.get(`${flag}/rules`, async (c) => {
    const view = await flagChangeForm({ ...deps, views }, c.get("person"), namespaceRef(c));
    return await rulesPage(c, view);
  });
  mountEditor(app, `${flag}/rules/add`, deps, views, addRuleEditor);
  mountEditor(app, `${flag}/rules/replace`, deps, views, replaceRuleEditor);
  mountEditor(app, `${flag}/rules/move`, deps, views, moveRuleEditor);
  mountEditor(app, `${flag}/rules/remove`, deps, views, removeRuleEditor);
  mountEditor(app, `${flag}/override`, deps, views, overrideEditor);
  mountEditor(app, `${flag}/promote`, deps, views, promotionEditor);
  return app;
}
