import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { uuidSchema } from "../../platform/input.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { createDrawing, deleteDrawing, getDrawing, listDrawings, updateDrawing } from "./operations.js";
import { drawingFields, type NewDrawing } from "./schema.js";
import { drawingToEntry, drawingToRest } from "./serialize.js";

/**
 * GNS3's drawing object schema. `drawing_id: null` (what the GUI re-posts after a "doesn't exist" error) asks for
 * a new id, where GNS3 answers 400; project_id is read-only.
 */
const f = drawingFields;
const drawingSchema = z.strictObject({
  drawing_id: f.drawingId.optional(),
  project_id: uuidSchema.optional(),
  x: f.x.optional(),
  y: f.y.optional(),
  z: f.z.optional(),
  locked: f.locked.optional(),
  rotation: f.rotation.optional(),
  svg: f.svg.optional(),
});
type DrawingBody = z.infer<typeof drawingSchema>;

const toInput = (b: DrawingBody): NewDrawing => ({
  drawingId: b.drawing_id,
  x: b.x,
  y: b.y,
  z: b.z,
  locked: b.locked,
  rotation: b.rotation,
  svg: b.svg,
});

const P = "/v2/projects/{project_id}/drawings";
const D = `${P}/{drawing_id}`;

export function drawingRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("GET", P, async ({ res, params }) => {
    const { project, drawings } = await listDrawings(ctx, params.project_id);
    sendJson(res, 200, drawings.map(project.status === "opened" ? drawingToRest : drawingToEntry));
  });
  routes.add("POST", P, async ({ res, params, body }) => sendJson(res, 201, drawingToRest(await createDrawing(ctx, params.project_id, toInput(body)))), {
    schema: drawingSchema,
  });
  routes.add("GET", D, async ({ res, params }) => sendJson(res, 200, drawingToRest(await getDrawing(ctx, params.project_id, params.drawing_id))));
  // GNS3 answers a drawing update with 201; the id in the body (the GUI sends it) is ignored.
  routes.add(
    "PUT",
    D,
    async ({ res, params, body }) => {
      const { drawingId: _ignored, ...changes } = toInput(body);
      sendJson(res, 201, drawingToRest(await updateDrawing(ctx, params.project_id, params.drawing_id, changes)));
    },
    { schema: drawingSchema },
  );
  routes.add("DELETE", D, async ({ res, params }) => {
    await deleteDrawing(ctx, params.project_id, params.drawing_id);
    res.status(204).end();
  });
}
