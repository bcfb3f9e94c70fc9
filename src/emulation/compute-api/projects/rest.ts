import type { Response } from "express";
import { parseBytes } from "../../../platform/bytes.js";
import type { AppContext } from "../../../platform/context.js";
import { serveNotificationStream } from "../../notifications/rest.js";
import { withArchiveFile } from "../../projects/archive-upload.js";
import { assertProjectId } from "../../projects/serialize.js";
import { createSchema, sendArchiveHeaders, sendProjectFile, toSettings, updateSchema } from "../../projects/rest.js";
import { readRawBody, sendJson, type Gns3Routes } from "../../rest/kit.js";
import {
  closeComputeProject,
  computeProjectToRest,
  createComputeProject,
  deleteComputeProject,
  getComputeProject,
  listComputeProjects,
  updateComputeProject,
} from "./operations.js";
import {
  computeProjectFile,
  computeProjectStreamFile,
  followFile,
  listComputeProjectFiles,
  writeComputeProjectFile,
} from "./files.js";
import { exportComputeProject, importComputeProject, parseIncludeImages } from "./transfer.js";

/** Resolves once `res` can take more data (or the client is gone). */
function writeWithBackpressure(res: Response, chunk: Buffer): Promise<void> {
  if (res.destroyed || res.write(chunk) || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

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

  routes.add("GET", `${P}/files`, async ({ res, params }) => sendJson(res, 200, await listComputeProjectFiles(ctx, params.project_id)));
  routes.add(
    "GET",
    `${P}/files/{path:.+}`,
    async ({ res, params, tail }) => sendProjectFile(res, await computeProjectFile(ctx, params.project_id, tail!)),
    { raw: true },
  );
  routes.add(
    "POST",
    `${P}/files/{path:.+}`,
    async ({ req, res, params, tail }) => {
      await getComputeProject(ctx, params.project_id);
      await writeComputeProjectFile(ctx, params.project_id, tail!, await readRawBody(req, res, ctx.config.uploadLimit));
      res.status(201).type("application/octet-stream").end();
    },
    { raw: true },
  );
  routes.add(
    "GET",
    `${P}/stream/{path:.+}`,
    async ({ res, params, tail }) => {
      const file = await computeProjectStreamFile(ctx, params.project_id, tail!);
      res.status(200).setHeader("Content-Type", "application/octet-stream");
      res.flushHeaders();
      // The response closes when the client leaves (the request's own "close" only means its body was read).
      const left = new AbortController();
      res.on("close", () => left.abort());
      await followFile(file, (chunk) => writeWithBackpressure(res, chunk), left.signal);
      res.end();
    },
    { raw: true },
  );

  routes.add("GET", `${P}/notifications`, async ({ req, res, params }) => {
    await getComputeProject(ctx, params.project_id);
    // Not an auto_close listener: a compute stream leaving must not close the controller's project.
    await serveNotificationStream(ctx, { kind: "project", projectId: params.project_id }, req, res, false);
  });

  routes.add("GET", `${P}/export`, async ({ res, params, query }) => {
    const { filename, archive } = await exportComputeProject(ctx, params.project_id, parseIncludeImages(query.include_images));
    sendArchiveHeaders(res, filename);
    archive.outputStream.on("error", () => res.destroy()).pipe(res);
  });
  routes.add(
    "POST",
    `${P}/import`,
    async ({ req, res, params }) => {
      assertProjectId(params.project_id); // before the upload; an unknown project is what import creates
      const project = await withArchiveFile(ctx, req, parseBytes(ctx.config.uploadLimit), (file) => importComputeProject(ctx, params.project_id, file));
      sendJson(res, 200, rest(project));
    },
    { raw: true },
  );
}
