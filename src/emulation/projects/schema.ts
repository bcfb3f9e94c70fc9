import { z } from "zod";
import { uuidSchema } from "../../platform/input.js";

/**
 * The project's input contract (create and update; compat §3.2, §3.6), declared once. The operations parse what
 * they are given with it; the REST adapter builds GNS3's wire schema from these field schemas. Names and paths
 * have further rules the operations check (a safe file name, a directory inside the allowed roots).
 */
export const projectSettingsFields = {
  autoClose: z.boolean(),
  autoOpen: z.boolean(),
  autoStart: z.boolean(),
  sceneHeight: z.int(),
  sceneWidth: z.int(),
  zoom: z.int(),
  gridSize: z.int(),
  drawingGridSize: z.int(),
  showLayers: z.boolean(),
  snapToGrid: z.boolean(),
  showGrid: z.boolean(),
  showInterfaceLabels: z.boolean(),
  supplier: z.object({ logo: z.string(), url: z.string() }).nullable(),
  variables: z.array(z.object({ name: z.string().min(1), value: z.string().optional() })).nullable(),
};
export const projectFields = { ...projectSettingsFields, name: z.string().min(1), projectId: uuidSchema, path: z.string() };

const settings = z.strictObject(projectSettingsFields).partial();
export const createProjectSchema = settings.extend({
  name: projectFields.name,
  projectId: projectFields.projectId.nullable().optional(),
  path: projectFields.path.nullable().optional(),
});
export const updateProjectSchema = settings.extend({
  name: projectFields.name.nullable().optional(),
  path: projectFields.path.nullable().optional(),
});

export type ProjectSettings = z.input<typeof settings>;
export type CreateProjectInput = z.input<typeof createProjectSchema>;
export type UpdateProjectInput = z.input<typeof updateProjectSchema>;
