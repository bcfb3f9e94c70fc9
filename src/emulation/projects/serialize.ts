import path from "node:path";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { InvalidInputError } from "../../platform/core/errors.js";
import { UUID_PATTERN } from "../../platform/input.js";

/** Where projects live unless created or loaded elsewhere (GNS3's projects_path). */
export const projectsRoot = (ctx: AppContext) => path.join(ctx.config.dataDir, "projects");

/** A new project's id names its directory, so it must be a UUID (also for GraphQL and import URLs). */
export function assertProjectId(id: string): void {
  if (!UUID_PATTERN.test(id)) throw new InvalidInputError(`Project ID ${id} is not a valid UUID`);
}

/** The project directory: the stored path for projects created/loaded elsewhere, else <data>/projects/<id>. */
export const projectDir = (ctx: AppContext, p: Pick<Project, "id" | "path">) => p.path ?? path.join(projectsRoot(ctx), p.id);

/** The GNS3 v2 project object (compat §3.1): every key always present. */
export function projectToRest(ctx: AppContext, p: Omit<Project, "createdAt">) {
  return {
    project_id: p.id,
    name: p.name,
    path: projectDir(ctx, p),
    filename: p.filename,
    status: p.status,
    auto_start: p.autoStart,
    auto_open: p.autoOpen,
    auto_close: p.autoClose,
    scene_height: p.sceneHeight,
    scene_width: p.sceneWidth,
    zoom: p.zoom,
    show_layers: p.showLayers,
    snap_to_grid: p.snapToGrid,
    show_grid: p.showGrid,
    grid_size: p.gridSize,
    drawing_grid_size: p.drawingGridSize,
    show_interface_labels: p.showInterfaceLabels,
    supplier: p.supplierJson ? JSON.parse(p.supplierJson) : null,
    variables: p.variablesJson ? JSON.parse(p.variablesJson) : null,
  };
}
