import type { Drawing } from "../../generated/prisma-sqlite/client.js";
import { drawingToEntry } from "../topology-file/document.js";

/** The GNS3 v2 REST drawing object (responses, drawing.created/deleted). */
export const drawingToRest = (d: Omit<Drawing, "createdAt">) => ({ ...drawingToEntry(d), project_id: d.projectId });

/** drawing.updated: GNS3 leaves the svg out unless the update changed it. */
export function drawingUpdatedEvent(d: Omit<Drawing, "createdAt">, svgChanged: boolean) {
  const { svg, ...rest } = drawingToRest(d);
  return svgChanged ? { ...rest, svg } : rest;
}
