/**
 * Mounts one editor (lib/console/edit_flow.tsx) at a path: `GET` draws its
 * form on the head (for a person who may change the namespace; a reader
 * is told who can), `POST` runs the flow (preview, commit, propose, the
 * form again). Editors whose form depends on the path (a flag's key, an
 * environment) are made per request.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { flagChangeForm } from "../../services/manifests.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { AppDeps } from "../../http/deps.ts";
import { type Editor, editorForm, editorPost } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { namespaceRef } from "../route_refs.ts";

/**
 * Registers an editor's `GET` and `POST` at `path`.
 *
 * @param app the routes, mounted at `/ui/t/:tenant/ns/:ns`
 * @param path the editor's path under it
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @param editorOf the editor for a request
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/_new", deps, views, () => newFlagEditor);
 * ```
 */
export function mountEditor<I>(
  app: Hono<ConsoleEnv>,
  path: string,
  deps: AppDeps,
  views: ManifestViews,
  // deno-lint-ignore no-explicit-any
  editorOf: (c: Context<ConsoleEnv, any>) => Editor<I>,
): void {
  const viewDeps = { ...deps, views };
  app.get(path, async (c) => {
    const view = await flagChangeForm(viewDeps, c.get("person"), namespaceRef(c));
    return await editorForm(c, editorOf(c), view);
  });
  app.post(path, (c) => editorPost(c, deps, views, editorOf(c)));
}
