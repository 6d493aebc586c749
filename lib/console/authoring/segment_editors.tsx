/**
 * The segments of a namespace in the console: their list (for readers
 * too), and the editors, each a form → preview → commit flow
 * (lib/console/edit_flow.tsx):
 *
 * - `GET /segments`: the list (segment_list.tsx);
 * - `/edit/segments/_new`: a new segment (segment_form.tsx);
 * - `/edit/segments/:segment`: its description, `match` and predicates;
 * - `/edit/segments/:segment/delete`: its deletion, refused while a flag
 *   or another segment names it (segment_delete.tsx).
 *
 * The form of a segment the head does not have is a 404.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps } from "../../http/deps.ts";
import { type ManifestViews, mayChangeManifest, segmentIn } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { consolePage, namespaceCrumbs } from "../layout.tsx";
import { namespaceRef } from "../route_refs.ts";
import { ui } from "../urls.ts";
import { mountEditor } from "./mount.ts";
import { deleteSegmentEditor } from "./segment_delete.tsx";
import { editSegmentEditor, newSegmentEditor } from "./segment_form.tsx";
import { SegmentList } from "./segment_list.tsx";

/**
 * The routes of these editors, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/", segmentEditorRoutes(deps, views));
 * ```
 */
export function segmentEditorRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/segments", async (c) => {
    const person = c.get("person");
    const view = await views.load(deps, person, namespaceRef(c));
    const writer = await mayChangeManifest(deps, person, namespaceRef(c));
    const { tenant, namespace } = view;
    return consolePage(
      c,
      {
        title: `Segments of ${namespace}`,
        tenant,
        section: "namespaces",
        live: ui.live(tenant, namespace, view.head.version),
        crumbs: namespaceCrumbs(tenant, namespace, { label: "segments" }),
      },
      <SegmentList view={view} writer={writer} />,
    );
  });

  mountEditor(app, "/edit/segments/_new", deps, views, () => newSegmentEditor);
  // The form of a segment the head does not have: 404 (its posts are refused by the library).
  for (const path of ["/edit/segments/:segment", "/edit/segments/:segment/delete"]) {
    app.get(path, async (c, next) => {
      const view = await views.load(deps, c.get("person"), namespaceRef(c));
      segmentIn(view, c.req.param("segment") ?? "");
      await next();
    });
  }
  mountEditor(app, "/edit/segments/:segment", deps, views, editSegmentEditor);
  mountEditor(app, "/edit/segments/:segment/delete", deps, views, deleteSegmentEditor);
  return app;
}
