import { z } from "zod";
import { uuidSchema } from "../../platform/input.js";

/**
 * The drawing's input contract (a note, shape or picture on a project's canvas), declared once. The operations
 * parse what they are given with it; the REST adapter builds GNS3's wire schema from these field schemas. The
 * SVG itself is checked by the operation (svg.ts), which words what it refuses.
 */
export const drawingFields = {
  /** Clients (the GNS3 GUI) choose the id and keep using it; null or absent → a new one. */
  drawingId: uuidSchema.nullable(),
  x: z.int(),
  y: z.int(),
  z: z.int(),
  locked: z.boolean(),
  rotation: z.int().min(-359).max(360),
  svg: z.string(),
};

const { drawingId, ...settable } = drawingFields;
export const drawingChangesSchema = z.strictObject(settable).partial();
export const newDrawingSchema = drawingChangesSchema.extend({ drawingId: drawingId.optional() });

export type DrawingChanges = z.input<typeof drawingChangesSchema>;
export type NewDrawing = z.input<typeof newDrawingSchema>;
