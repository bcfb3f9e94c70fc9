import fs from "node:fs";
import path from "node:path";
import type { Response } from "express";
import { z } from "zod";
import { parseBytes } from "../../platform/bytes.js";
import type { AppContext } from "../../platform/context.js";
import { readRawBody, sendJson, type Gns3Routes } from "../rest/kit.js";
import { withArchiveFile } from "./archive-upload.js";
import { projectFile, writeProjectFile } from "./files.js";
import { getProject } from "./lookup.js";
import {
  closeProject,
  createProject,
  deleteProject,
  listProjects,
  loadProject,
  LocalOnlyError,
  openProject,
  projectStats,
  updateProject,
} from "./operations.js";
import { projectFields, type ProjectSettings } from "./schema.js";
import { projectToRest } from "./serialize.js";
import { duplicateProject, exportProject, importProject } from "./transfer.js";

const f = projectFields;
/** GNS3's settings keys shared by create, update and duplicate (compat §3.2), over the contract's field rules. */
const settingsShape = {
  auto_close: f.autoClose,
  auto_open: f.autoOpen,
  auto_start: f.autoStart,
  scene_height: f.sceneHeight,
  scene_width: f.sceneWidth,
  zoom: f.zoom,
  grid_size: f.gridSize,
  drawing_grid_size: f.drawingGridSize,
  show_layers: f.showLayers,
  snap_to_grid: f.snapToGrid,
  show_grid: f.showGrid,
  show_interface_labels: f.showInterfaceLabels,
  supplier: f.supplier,
  variables: f.variables,
  path: f.path.nullable(),
};
const settings = z.object(settingsShape).partial();
export const createSchema = settings.extend({ name: f.name, project_id: f.projectId.nullable().optional() }).strict();
export const updateSchema = settings.extend({ name: f.name.nullable().optional() }).strict();
const duplicateSchema = createSchema.extend({ reset_mac_addresses: z.boolean().optional() }).strict();

type SettingsBody = z.infer<typeof settings>;

/** The wire body renamed onto the contract (the operation parses it). */
export function toSettings(b: SettingsBody): ProjectSettings {
  return {
    autoClose: b.auto_close,
    autoOpen: b.auto_open,
    autoStart: b.auto_start,
    sceneHeight: b.scene_height,
    sceneWidth: b.scene_width,
    zoom: b.zoom,
    gridSize: b.grid_size,
    drawingGridSize: b.drawing_grid_size,
    showLayers: b.show_layers,
    snapToGrid: b.snap_to_grid,
    showGrid: b.show_grid,
    showInterfaceLabels: b.show_interface_labels,
    supplier: b.supplier,
    variables: b.variables,
  };
}

/** GNS3 answers local-only refusals with a bare 403 and no body (compat §16.7). */
async function localOnly<T>(res: Response, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (e) {
    if (!(e instanceof LocalOnlyError)) throw e;
    res.status(403).end();
    return undefined;
  }
}

/**
 * What Python's mimetypes tells GNS3 for the files it serves; anything else is a byte stream. Not .json: the GUI
 * decodes a streamed application/json body as JSON documents, so a file is never served with that type.
 */
const CONTENT_TYPES: Record<string, string> = {
  ".txt": "text/plain",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".pcap": "application/vnd.tcpdump.pcap",
};

/** A file found by projectFile, as GNS3 serves it (type from the extension, length, modification date). */
export function sendProjectFile(res: Response, { file, size, modified }: { file: string; size: number; modified: Date }): void {
  // setHeader, not res.type(): express would append "; charset=utf-8", which GNS3 does not send.
  res.status(200).setHeader("Content-Type", CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream");
  res.set({ "Content-Length": String(size), "Last-Modified": modified.toUTCString() });
  fs.createReadStream(file).on("error", () => res.destroy()).pipe(res);
}

const yes = (v: string | undefined) => v?.toLowerCase() === "yes";

/**
 * An archive download, as GNS3 sends it (`attachment; filename="<name>.gns3project"`). A name that is not plain
 * printable ASCII would be an invalid header: it gets an ASCII stand-in plus the exact name in RFC 6266's
 * `filename*`.
 */
export function sendArchiveHeaders(res: Response, filename: string): void {
  const plain = /^[\x20-\x7e]*$/.test(filename) && !/["\\]/.test(filename);
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const disposition = plain
    ? `attachment; filename="${filename}"`
    : `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
  res.status(200).set({ "Content-Type": "application/gns3project", "Content-Disposition": disposition });
}

export function projectRoutes(routes: Gns3Routes, ctx: AppContext): void {
  const rest = (p: Parameters<typeof projectToRest>[1]) => projectToRest(ctx, p);
  const P = "/v2/projects/{project_id}";

  routes.add("GET", "/v2/projects", async ({ res }) => sendJson(res, 200, (await listProjects(ctx)).map(rest)));
  routes.add(
    "POST",
    "/v2/projects",
    async ({ res, body }) => {
      const project = await createProject(ctx, { ...toSettings(body), name: body.name, projectId: body.project_id, path: body.path });
      sendJson(res, 201, rest(project));
    },
    { schema: createSchema },
  );
  routes.add(
    "POST",
    "/v2/projects/load",
    async ({ res, body }) => {
      const project = await localOnly(res, () => loadProject(ctx, body.path));
      if (project) sendJson(res, 201, rest(project));
    },
    { schema: z.strictObject({ path: z.string().min(1) }) },
  );
  routes.add("GET", P, async ({ res, params }) => sendJson(res, 200, rest(await getProject(ctx, params.project_id))));
  routes.add(
    "PUT",
    P,
    async ({ res, params, body }) => {
      const project = await updateProject(ctx, params.project_id, { ...toSettings(body), name: body.name, path: body.path });
      sendJson(res, 200, rest(project));
    },
    { schema: updateSchema },
  );
  routes.add("DELETE", P, async ({ res, params }) => {
    await deleteProject(ctx, params.project_id);
    res.status(204).end();
  });
  routes.add("POST", `${P}/open`, async ({ res, params }) => sendJson(res, 201, rest(await openProject(ctx, params.project_id))));
  routes.add("POST", `${P}/close`, async ({ res, params }) => {
    await closeProject(ctx, params.project_id);
    res.status(204).end();
  });
  routes.add("GET", `${P}/stats`, async ({ res, params }) => sendJson(res, 200, await projectStats(ctx, params.project_id)));
  routes.add(
    "POST",
    `${P}/duplicate`,
    async ({ res, params, body }) => {
      const input = { name: body.name, path: body.path, resetMacAddresses: body.reset_mac_addresses };
      const project = await localOnly(res, () => duplicateProject(ctx, params.project_id, input));
      if (project) sendJson(res, 201, rest(project));
    },
    { schema: duplicateSchema },
  );
  routes.add("GET", `${P}/export`, async ({ res, params, query }) => {
    const { filename, archive } = await exportProject(ctx, params.project_id, {
      includeSnapshots: yes(query.include_snapshots),
      resetMacAddresses: yes(query.reset_mac_addresses),
      keepComputeIds: yes(query.keep_compute_ids),
      compress: query.compression !== "none",
    });
    sendArchiveHeaders(res, filename);
    archive.outputStream.on("error", () => res.destroy()).pipe(res);
  });
  routes.add(
    "POST",
    `${P}/import`,
    async ({ req, res, params, query }) => {
      const project = await localOnly(res, () =>
        withArchiveFile(ctx, req, parseBytes(ctx.config.uploadLimit), (file) =>
          importProject(ctx, params.project_id, file, { name: query.name, path: query.path, autoClose: true }),
        ),
      );
      if (project) sendJson(res, 201, rest(project));
    },
    { raw: true },
  );
  routes.add(
    "GET",
    `${P}/files/{path:.+}`,
    async ({ res, params, tail }) => {
      sendProjectFile(res, await projectFile(ctx, params.project_id, tail!));
    },
    { raw: true },
  );
  routes.add(
    "POST",
    `${P}/files/{path:.+}`,
    async ({ req, res, params, tail }) => {
      await writeProjectFile(ctx, params.project_id, tail!, await readRawBody(req, res, ctx.config.uploadLimit));
      res.status(201).type("application/octet-stream").end();
    },
    { raw: true },
  );
}
