import type { AppContext } from "../../platform/context.js";
import { createSchema, toSettings, updateSchema } from "../projects/rest.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import {
  closeComputeProject,
  computeProjectToRest,
  createComputeProject,
  deleteComputeProject,
  getComputeProject,
  listComputeProjects,
  updateComputeProject,
} from "./projects.js";

/** REST adapter of the compute-level project API (compat §15); the body schemas are the controller's. */
export function computeProjectRoutes(routes: Gns3Routes, ctx: AppContext): void {
  const P = "/v2/compute/projects/{project_id}";
  const rest = computeProjectToRest;

  routes.add("GET", "/v2/compute/projects", async ({ res }) => sendJson(res, 200, (await listComputeProjects(ctx)).map(rest)));
  routes.add(
    "POST",
    "/v2/compute/projects",
    async ({ res, body }) => {
      const input = { ...toSettings(body), name: body.name, projectId: body.project_id, path: body.path };
      sendJson(res, 201, rest(await createComputeProject(ctx, input)));
    },
    { schema: createSchema },
  );
  routes.add("GET", P, async ({ res, params }) => sendJson(res, 200, rest(await getComputeProject(ctx, params.project_id))));
  routes.add(
    "PUT",
    P,
    async ({ res, params, body }) => sendJson(res, 200, rest(await updateComputeProject(ctx, params.project_id, body.variables))),
    { schema: updateSchema },
  );
  routes.add("DELETE", P, async ({ res, params }) => {
    await deleteComputeProject(ctx, params.project_id);
    res.status(204).end();
  });
  routes.add("POST", `${P}/close`, async ({ res, params }) => {
    await closeComputeProject(ctx, params.project_id);
    res.status(204).end();
  });
}
