/**
 * The editors of a flag's description, default and variations
 * (flag_edit.tsx), and its deletion (flag_delete.tsx).
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../../http/deps.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { flagDeleteEditor } from "./flag_delete.tsx";
import { flagEditor } from "./flag_edit.tsx";
import { mountEditor } from "./mount.ts";

/**
 * The routes of these editors, mounted at `/ui/t/:tenant/ns/:ns`:
 * `/edit/flags/:flag` and `/edit/flags/:flag/delete`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/", flagEditorRoutes(deps, views));
 * ```
 */
export function flagEditorRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  mountEditor(app, "/edit/flags/:flag", deps, views, flagEditor);
  mountEditor(app, "/edit/flags/:flag/delete", deps, views, flagDeleteEditor);
  return app;
}
