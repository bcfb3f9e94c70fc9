import "../projects/graphql.js"; // the Project type this file extends
import type { Drawing } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType, refuseTakenId } from "../../platform/graphql/mutation.js";
import { itemAddress } from "../projects/address.js";
import { projectIdArg } from "../projects/graphql.js";
import { createDrawing, deleteDrawing, getDrawing, updateDrawing } from "./operations.js";
import type { DrawingChanges } from "./schema.js";
import { drawingShape, SVG_MAX_LENGTH, type DrawingShape } from "./svg.js";

const SHAPES: readonly DrawingShape[] = ["note", "rectangle", "ellipse", "line", "image"];
const SHAPE_DOCS: Record<DrawingShape, string> = {
  note: "Text on the canvas (an SVG <text>)",
  rectangle: "A rectangle (an SVG <rect>)",
  ellipse: "An ellipse or circle (an SVG <ellipse>)",
  line: "A line (an SVG <line>)",
  image: "A picture: any other SVG",
};
const DrawingShapeEnum = builder.enumType("DrawingShape", {
  description: "How the GNS3 GUI draws an SVG: by its first element, anything else is an image",
  values: Object.fromEntries(SHAPES.map((s) => [s.toUpperCase(), { value: s, description: SHAPE_DOCS[s] }])) as Record<Uppercase<DrawingShape>, { value: DrawingShape; description: string }>,
});

// "Drawing" is GNS3's own word for the notes, shapes and pictures of a canvas; it clashes with nothing here.
/** The drawing fields whose GraphQL name carries the unit: GraphQL name → the domain's. */
export const DRAWING_NAMES = { rotationDegrees: "rotation" } as const;

export const DrawingRef = builder.prismaNode("Drawing", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A note, shape or picture on a project's canvas, stored as SVG",
  id: { field: "id", description: "The drawing's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    drawingId: t.exposeID("id", { description: "The drawing's GNS3 id (a UUID): the `drawing_id` of the REST API and the GNS3 GUI" }),
    project: t.relation("project", { description: "The project whose canvas the drawing is on" }),
    x: t.exposeInt("x", { description: "Horizontal position on the canvas, in pixels" }),
    y: t.exposeInt("y", { description: "Vertical position on the canvas, in pixels" }),
    z: t.exposeInt("z", { description: "Stacking order (nodes are at 1)" }),
    locked: t.exposeBoolean("locked", { description: "A locked drawing cannot be deleted (nor moved in the GUI)" }),
    rotationDegrees: t.exposeInt(DRAWING_NAMES.rotationDegrees, { description: "Rotation, in degrees (-359 to 360)" }),
    svg: t.exposeString("svg", { description: "The drawing itself, an SVG document" }),
    shape: t.field({ type: DrawingShapeEnum, description: "What the SVG draws, as the GUI tells it", resolve: (d) => drawingShape(d.svg) }),
  }),
});

builder.prismaObjectField("Project", "drawings", (t) =>
  t.relatedConnection("drawings", {
    cursor: "id",
    description: "The project's drawings in creation order",
    query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
    totalCount: true,
  }),
);

const svgRules = `At most ${SVG_MAX_LENGTH} characters, one <svg> root; no scripts, event handlers nor external references`;
const drawingFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  x: t.int({ description: "Horizontal position on the canvas, in pixels" }),
  y: t.int({ description: "Vertical position on the canvas, in pixels" }),
  z: t.int({ description: "Stacking order (nodes are at 1)" }),
  locked: t.boolean({ description: "A locked drawing cannot be deleted (nor moved in the GUI)" }),
  rotationDegrees: t.int({ description: "Rotation, in degrees (-359 to 360)" }),
  svg: t.string({ description: svgRules }),
});

const CreateDrawingInput = builder.inputType("CreateDrawingInput", {
  description: "A new note, shape or picture on a project's canvas",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project)" }),
    id: t.id({ description: "Chosen GNS3 drawing id (a UUID); a taken one is refused (ALREADY_EXISTS); a new one when absent" }),
    ...drawingFields(t),
  }),
});
const UpdateDrawingInput = builder.inputType("UpdateDrawingInput", {
  description: "A drawing and changes to it: only the fields given change",
  fields: (t) => ({ id: t.id({ required: true, description: "The drawing (its global id, or its GNS3 drawing_id)" }), ...drawingFields(t) }),
});
const drawingInput = (name: string) => idInput(name, `The drawing \`${name}\` acts on`, "The drawing's id (its global id, or its GNS3 drawing_id)");

type Fields = { x?: number | null; y?: number | null; z?: number | null; locked?: boolean | null; rotationDegrees?: number | null; svg?: string | null };
const toChanges = (i: Fields): DrawingChanges => ({
  x: i.x ?? undefined,
  y: i.y ?? undefined,
  z: i.z ?? undefined,
  locked: i.locked ?? undefined,
  rotation: i.rotationDegrees ?? undefined,
  svg: i.svg ?? undefined,
});

/** The drawing an argument names and its project, from the drawing's id alone. */
const drawingAddress = (ctx: AppContext, id: string | number) =>
  itemAddress(id, "Drawing", (drawingId) => ctx.db.drawing.findUnique({ where: { id: drawingId }, select: { projectId: true } }));

/** What reading or changing a drawing can fail with: bad input, a drawing or project missing, a closed project, a taken id or a locked drawing. */
const DRAWING_ERRORS = [InvalidInputError, NotFoundError, ConflictError, ForbiddenError];

builder.queryField("drawing", (t) =>
  t.prismaField({
    type: "Drawing",
    nullable: true,
    description: lookupDescription("One drawing of an opened project", "ForbiddenError when its project is closed"),
    errors: { types: [ForbiddenError] },
    args: { id: t.arg.id({ required: true, description: "The drawing's id (its global id, or its GNS3 drawing_id)" }) },
    resolve: (_q, _r, args, ctx) =>
      orNull(async () => {
        const at = await drawingAddress(ctx, args.id);
        return getDrawing(ctx, at.projectId, at.id);
      }),
  }),
);

const DrawingPayload = (name: string, what = "the drawing") =>
  payloadType<{ drawing: Drawing }>(name, `What \`${name}\` changed: ${what}`, (t) => ({
    drawing: t.field({ type: DrawingRef, description: "The drawing as it is now", resolve: (p) => p.drawing }),
  }));

builder.mutationFields((t) => ({
  createDrawing: t.field({
    type: DrawingPayload("createDrawing", "the new drawing"),
    description: "Adds a note, shape or picture to an opened project's canvas (drawing.created)",
    errors: mutationErrors("createDrawing", DRAWING_ERRORS),
    args: { input: t.arg({ type: CreateDrawingInput, required: true, description: "The new drawing" }) },
    resolve: async (_r, { input }, ctx) => {
      const drawingId = input.id == null ? undefined : domainId(input.id, "Drawing", "id");
      await refuseTakenId("Drawing", drawingId, (id) => ctx.db.drawing.findUnique({ where: { id }, select: { id: true } }));
      return { drawing: await createDrawing(ctx, projectIdArg(input.projectId), { ...toChanges(input), drawingId }) };
    },
  }),
  updateDrawing: t.field({
    type: DrawingPayload("updateDrawing"),
    description: "Moves, turns, locks or redraws a drawing (drawing.updated)",
    errors: mutationErrors("updateDrawing", DRAWING_ERRORS),
    args: { input: t.arg({ type: UpdateDrawingInput, required: true, description: "The drawing and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await drawingAddress(ctx, input.id);
      return { drawing: await updateDrawing(ctx, at.projectId, at.id, toChanges(input)) };
    },
  }),
  deleteDrawing: t.field({
    type: deletedPayload("deleteDrawing", "the drawing"),
    description: "Removes an unlocked drawing (drawing.deleted); a locked one is a ConflictError",
    errors: mutationErrors("deleteDrawing", DRAWING_ERRORS),
    args: { input: t.arg({ type: drawingInput("deleteDrawing"), required: true, description: "The drawing" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await drawingAddress(ctx, input.id);
      await deleteDrawing(ctx, at.projectId, at.id);
      return { deletedIds: [globalId("Drawing", at.id)] };
    },
  }),
}));
