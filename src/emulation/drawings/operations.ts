import { randomUUID } from "node:crypto";
import type { Drawing } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { changedFields, publishTopologyEvent } from "../core/events.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { drawingChangesSchema, newDrawingSchema, type DrawingChanges, type NewDrawing } from "./schema.js";
import { checkSvg, SvgRejected } from "./svg.js";

const byCreation = [{ createdAt: "asc" }, { id: "asc" }] as const;

/** The SVG rules (svg.ts) beyond the contract's shape. */
function checkSvgInput(c: DrawingChanges): void {
  if (c.svg !== undefined) {
    try {
      checkSvg(c.svg);
    } catch (e) {
      if (e instanceof SvgRejected) throw new InvalidInputError(`Invalid SVG: ${e.message}`);
      throw e;
    }
  }
}

/**
 * Creates a drawing with the client's id when given. As GNS3 does, a POST of an id the project already has
 * returns that drawing unchanged, without an event (the GUI may re-send a drawing it created).
 */
export async function createDrawing(ctx: AppContext, projectId: string, raw: NewDrawing): Promise<Drawing> {
  const input = parseInput(newDrawingSchema, raw);
  checkSvgInput(input);
  await getOpenedProject(ctx, projectId);
  const id = input.drawingId ?? randomUUID();
  const existing = async () => {
    const found = await ctx.db.drawing.findUnique({ where: { id } });
    if (found && found.projectId !== projectId) throw new ConflictError(`Drawing ID ${id} already exists`);
    return found;
  };
  const known = await existing();
  if (known) return known;
  let drawing: Drawing;
  try {
    drawing = await ctx.db.drawing.create({
      data: { id, projectId, x: input.x, y: input.y, z: input.z, locked: input.locked, rotation: input.rotation, svg: input.svg },
    });
  } catch (e) {
    const raced = (e as { code?: string }).code === "P2002" && (await existing());
    if (raced) return raced;
    throw e;
  }
  await publishTopologyEvent(ctx, projectId, { type: "drawing.created", drawing });
  return drawing;
}

/** One drawing of an opened project; GNS3's 404 otherwise. */
export async function getDrawing(ctx: AppContext, projectId: string, drawingId: string): Promise<Drawing> {
  await getOpenedProject(ctx, projectId);
  const drawing = await ctx.db.drawing.findFirst({ where: { id: drawingId, projectId } });
  if (!drawing) throw new NotFoundError(`Drawing ID ${drawingId} doesn't exist`);
  return drawing;
}

/** All drawings of a project, opened or closed (the adapter picks the shape), in creation order. */
export async function listDrawings(ctx: AppContext, projectId: string) {
  const project = await getProject(ctx, projectId);
  const drawings = await ctx.db.drawing.findMany({ where: { projectId }, orderBy: [...byCreation] });
  return { project, drawings };
}

/**
 * Moves, turns, locks or redraws a drawing (a locked drawing can still be changed: unlocking is an update).
 * Like GNS3, every update is announced; drawing.updated carries the svg only when it changed.
 */
export async function updateDrawing(ctx: AppContext, projectId: string, drawingId: string, raw: DrawingChanges): Promise<Drawing> {
  const changes = parseInput(drawingChangesSchema, raw);
  checkSvgInput(changes);
  const before = await getDrawing(ctx, projectId, drawingId);
  const { x, y, z, locked, rotation, svg } = changes;
  const after = await ctx.db.drawing.update({ where: { id: drawingId }, data: { x, y, z, locked, rotation, svg } }).catch((e) => {
    if ((e as { code?: string }).code === "P2025") throw new NotFoundError(`Drawing ID ${drawingId} doesn't exist`); // deleted meanwhile
    throw e;
  });
  await publishTopologyEvent(ctx, projectId, { type: "drawing.updated", drawing: after, changed: changedFields(before, after) });
  return after;
}

export async function deleteDrawing(ctx: AppContext, projectId: string, drawingId: string): Promise<void> {
  const drawing = await getDrawing(ctx, projectId, drawingId);
  if (drawing.locked) throw new ConflictError(`Drawing ID ${drawingId} cannot be deleted because it is locked`);
  const { count } = await ctx.db.drawing.deleteMany({ where: { id: drawingId, projectId, locked: false } });
  if (!count) throw new NotFoundError(`Drawing ID ${drawingId} doesn't exist`); // deleted (or locked) meanwhile
  await publishTopologyEvent(ctx, projectId, { type: "drawing.deleted", drawing });
}
