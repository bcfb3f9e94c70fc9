import type { Drawing } from "../../generated/prisma-sqlite/client.js";

/** The drawing as stored in the .gns3 topology file (also what GET P/drawings lists for a closed project). */
export function drawingToEntry(d: Omit<Drawing, "createdAt">) {
  return { drawing_id: d.id, x: d.x, y: d.y, z: d.z, locked: d.locked, rotation: d.rotation, svg: d.svg };
}

/** The GNS3 v2 REST drawing object (responses, drawing.created/deleted). */
export const drawingToRest = (d: Omit<Drawing, "createdAt">) => ({ ...drawingToEntry(d), project_id: d.projectId });

/** drawing.updated: GNS3 leaves the svg out unless the update changed it. */
export function drawingUpdatedEvent(d: Omit<Drawing, "createdAt">, svgChanged: boolean) {
  const { svg, ...rest } = drawingToRest(d);
  return svgChanged ? { ...rest, svg } : rest;
}
