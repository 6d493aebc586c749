/**
 * The authoring routes, mounted at `/ui/t/:tenant/ns/:ns`: every editor
 * under `/edit/` (so that no flag or segment key can shadow one), each a
 * form → preview → commit (or propose) flow of lib/console/edit_flow.tsx.
 *
 * - flag_new.tsx: a new flag;
 * - flag_editors.tsx: a flag's description, default and variations, its deletion;
 * - rule_editors.tsx: a scope's rules (add, edit, remove, move), overrides, promotion;
 * - segment_editors.tsx: segments (new, edit, delete) and their list;
 * - environment_editors.tsx: environments (add, `public_evaluate`, remove).
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../../http/deps.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { newFlagEditor } from "./flag_new.tsx";
import { mountEditor } from "./mount.ts";
import { flagEditorRoutes } from "./flag_editors.tsx";
import { ruleEditorRoutes } from "./rule_editors.tsx";
import { segmentEditorRoutes } from "./segment_editors.tsx";
import { environmentEditorRoutes } from "./environment_editors.tsx";

/**
 * The authoring routes.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", authoringRoutes(deps, views));
 * ```
 */
export function authoringRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  mountEditor(app, "/edit/flags/_new", deps, views, newFlagEditor);
  app.route("/", flagEditorRoutes(deps, views));
  app.route("/", ruleEditorRoutes(deps, views));
  app.route("/", segmentEditorRoutes(deps, views));
  app.route("/", environmentEditorRoutes(deps, views));
  return app;
}
