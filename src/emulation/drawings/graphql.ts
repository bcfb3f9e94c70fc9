import "../projects/graphql.js"; // the Project type this file extends
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
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
export const DrawingRef = builder.prismaObject("Drawing", {
  description: "A note, shape or picture on a project's canvas, stored as SVG",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The drawing's id (a UUID)" }),
    projectId: t.exposeID("projectId", { description: "The id of the drawing's project" }),
    x: t.exposeInt("x", { description: "Horizontal position on the canvas, in pixels" }),
    y: t.exposeInt("y", { description: "Vertical position on the canvas, in pixels" }),
    z: t.exposeInt("z", { description: "Stacking order (nodes are at 1)" }),
    locked: t.exposeBoolean("locked", { description: "A locked drawing cannot be deleted (nor moved in the GUI)" }),
    rotation: t.exposeInt("rotation", { description: "Degrees, -359..360" }),
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
  rotation: t.int({ description: "Degrees, -359..360" }),
  svg: t.string({ description: svgRules }),
});

const CreateDrawingInput = builder.inputType("CreateDrawingInput", {
  description: "A new note, shape or picture on a project's canvas",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project's id (an opened project)" }),
    id: t.id({ description: "A UUID chosen by the client (kept); a new one when absent" }),
    ...drawingFields(t),
  }),
});
const UpdateDrawingInput = builder.inputType("UpdateDrawingInput", {
  description: "Changes to a drawing: only the fields given change",
  fields: (t) => drawingFields(t),
});

type Fields = { x?: number | null; y?: number | null; z?: number | null; locked?: boolean | null; rotation?: number | null; svg?: string | null };
const toChanges = (i: Fields): DrawingChanges => ({
  x: i.x ?? undefined,
  y: i.y ?? undefined,
  z: i.z ?? undefined,
  locked: i.locked ?? undefined,
  rotation: i.rotation ?? undefined,
  svg: i.svg ?? undefined,
});

builder.queryField("drawing", (t) =>
  t.prismaField({
    type: "Drawing",
    description: "One drawing of an opened project",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the drawing's project (an opened project)" }), id: t.arg.id({ required: true, description: "The drawing's id" }) },
    resolve: (_q, _r, args, ctx) => getDrawing(ctx, String(args.projectId), String(args.id)),
  }),
);

builder.mutationFields((t) => ({
  createDrawing: t.prismaField({
    type: "Drawing",
    description: "Adds a note, shape or picture (drawing.created); an id the project already has returns that drawing",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateDrawingInput, required: true, description: "The new drawing" }) },
    resolve: (_q, _r, { input }, ctx) =>
      createDrawing(ctx, String(input.projectId), { ...toChanges(input), drawingId: input.id == null ? undefined : String(input.id) }),
  }),
  updateDrawing: t.prismaField({
    type: "Drawing",
    description: "Moves, turns, locks or redraws a drawing (drawing.updated)",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true, description: "The id of the drawing's project (an opened project)" }),
      id: t.arg.id({ required: true, description: "The drawing's id" }),
      input: t.arg({ type: UpdateDrawingInput, required: true, description: "The changes" }),
    },
    resolve: (_q, _r, { projectId, id, input }, ctx) => updateDrawing(ctx, String(projectId), String(id), toChanges(input)),
  }),
  deleteDrawing: t.field({
    type: "ID",
    description: "Removes an unlocked drawing (drawing.deleted)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the drawing's project (an opened project)" }), id: t.arg.id({ required: true, description: "The drawing's id" }) },
    resolve: async (_r, { projectId, id }, ctx) => {
      await deleteDrawing(ctx, String(projectId), String(id));
      return String(id);
    },
  }),
}));
