/**
 * The environments page (environment_list.tsx) and the editors of
 * environments: add one (environment_add.tsx), `public_evaluate`
 * (environment_public.tsx), remove one (environment_remove.tsx).
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../../http/deps.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { environmentAddEditor } from "./environment_add.tsx";
import { environmentsPage } from "./environment_list.tsx";
import { publicEvaluateEditor } from "./environment_public.tsx";
import { environmentRemoveEditor } from "./environment_remove.tsx";
import { mountEditor } from "./mount.ts";

/**
 * The routes of these editors, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/", environmentEditorRoutes(deps, views));
 * ```
 */
export function environmentEditorRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/edit/environments", (c) => environmentsPage(c, deps, views));
  mountEditor(app, "/edit/environments/add", deps, views, () => environmentAddEditor);
  mountEditor(app, "/edit/environments/public", deps, views, publicEvaluateEditor);
  mountEditor(app, "/edit/environments/remove", deps, views, environmentRemoveEditor);
  return app;
}
