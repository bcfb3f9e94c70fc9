import type { Project } from "../../generated/prisma-sqlite/client.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { RUNNER_ERRORS } from "../core/runner-errors.js";
import { withDomainNames } from "../../platform/graphql/domain-names.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType, refuseTakenId } from "../../platform/graphql/mutation.js";
import {
  closeProject,
  createProject,
  deleteProject,
  loadProject,
  openProject,
  updateProject,
} from "./operations.js";
import { projectSettingsFields, type ProjectSettings } from "./schema.js";
import { projectDir } from "./serialize.js";
import { duplicateProject } from "./transfer.js";

export const ProjectStatus = builder.enumType("ProjectStatus", {
  description: "Opened projects run and accept topology changes; closed ones are kept on disk only",
  values: {
    OPENED: { value: "opened", description: "Loaded: its nodes can run and its topology can change" },
    CLOSED: { value: "closed", description: "On disk only: its nodes are stopped and its topology cannot change until it is opened" },
  } as const,
});

/**
 * What each project setting means, for the Project field and the create/update input field of that name. The
 * canvas's lengths are in pixels and its zoom in percent, and their GraphQL names say so; the domain's (and
 * REST's) names do not: PROJECT_NAMES pairs them.
 */
const SETTING_DOCS = {
  autoStart: "Start every node when the project opens",
  autoOpen: "Open the project when the server starts",
  autoClose: "Close the project when its last client disconnects",
  sceneHeightPixels: "Height of the canvas, in pixels",
  sceneWidthPixels: "Width of the canvas, in pixels",
  zoomPercent: "The canvas zoom, in percent",
  showLayers: "Show each item's stacking layer (z) on the canvas",
  snapToGrid: "Snap moved items to the grid",
  showGrid: "Draw the grid on the canvas",
  gridSizePixels: "Spacing of the node grid, in pixels",
  drawingGridSizePixels: "Spacing of the drawing grid, in pixels",
  showInterfaceLabels: "Draw port names at link ends",
} as const;
const BOOLEAN_SETTINGS = ["autoStart", "autoOpen", "autoClose", "showLayers", "snapToGrid", "showGrid", "showInterfaceLabels"] as const;
/** The number settings: GraphQL name → the domain's. */
export const PROJECT_NAMES = {
  sceneHeightPixels: "sceneHeight",
  sceneWidthPixels: "sceneWidth",
  zoomPercent: "zoom",
  gridSizePixels: "gridSize",
  drawingGridSizePixels: "drawingGridSize",
} as const;
const INT_SETTINGS = Object.keys(PROJECT_NAMES) as (keyof typeof PROJECT_NAMES)[];
/** One field per setting, made by `make` with the setting's description. */
const perSetting = <K extends string, R>(keys: readonly K[], make: (key: K, options: { description: string }) => R) =>
  Object.fromEntries(keys.map((k) => [k, make(k, { description: SETTING_DOCS[k as keyof typeof SETTING_DOCS] })])) as Record<K, R>;

interface Supplier {
  logo: string;
  url: string;
}
interface Variable {
  name: string;
  value?: string;
}
const SupplierType = builder.objectRef<Supplier>("ProjectSupplier").implement({
  description: "Branding shown by the GUI",
  fields: (t) => ({
    logo: t.exposeString("logo", { description: "The supplier's logo (an image file of the project)" }),
    url: t.exposeString("url", { description: "The supplier's web address" }),
  }),
});
const VariableType = builder.objectRef<Variable>("ProjectVariable").implement({
  description: "A name/value pair passed to the nodes of the project",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The variable's name" }),
    value: t.string({ nullable: true, description: "The variable's value (null: set without one)", resolve: (v) => v.value ?? null }),
  }),
});

/** Where a project read by `project`/`projects` (or carried by an event) keeps its event cursor. */
export const EVENT_CURSOR = Symbol("eventCursor");
const withCursor = <T extends object>(row: T, cursor: string): T => Object.assign(row, { [EVENT_CURSOR]: cursor });

export const ProjectRef = builder.prismaNode("Project", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A network lab: its nodes, the links between them, drawings and snapshots, and how its canvas is shown",
  id: { field: "id", description: "The project's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    projectId: t.exposeID("id", { description: "The project's GNS3 id (a UUID): the `project_id` of the REST API and the GNS3 GUI" }),
    name: t.exposeString("name", { description: "The project's name, unique on this server" }),
    path: t.string({ description: "The project directory", resolve: (p, _a, ctx) => projectDir(ctx, p) }),
    filename: t.exposeString("filename", { description: "The topology file name (set at creation, kept on rename)" }),
    status: t.field({ type: ProjectStatus, description: "Whether the project is opened (can run) or closed", resolve: (p) => p.status as "opened" | "closed" }),
    runnerId: t.exposeString("runnerId", {
      nullable: true,
      description: "The instance of this deployment that runs the project's nodes, switches and links while it is open (PATCHBAY_INSTANCE_ID); null when none does yet",
    }),
    ...perSetting(BOOLEAN_SETTINGS, (k, o) => t.exposeBoolean(k, o)),
    ...perSetting(INT_SETTINGS, (k, o) => t.exposeInt(PROJECT_NAMES[k], o)),
    supplier: t.field({
      type: SupplierType,
      nullable: true,
      description: "Who supplied the lab (logo and address shown by the GUI), if anyone",
      resolve: (p) => (p.supplierJson ? (JSON.parse(p.supplierJson) as Supplier) : null),
    }),
    eventCursor: t.string({
      nullable: true,
      description:
        "Where to follow this project's changes from: projectEvents(projectId, after: eventCursor) delivers every change made after this answer was read (some may already show in it: apply events by id). Read before the project by `project` and `projects`; in a ProjectEvent, that event's cursor; null elsewhere (a mutation's answer)",
      resolve: (p) => (p as { [EVENT_CURSOR]?: string })[EVENT_CURSOR] ?? null,
    }),
    variables: t.field({
      type: [VariableType],
      nullable: true,
      description: "Name/value pairs passed to the project's nodes (null: none set)",
      resolve: (p) => (p.variablesJson ? (JSON.parse(p.variablesJson) as Variable[]) : null),
    }),
  }),
});

const SupplierInput = builder.inputType("ProjectSupplierInput", {
  description: "Who supplied the lab, as the GUI shows it",
  fields: (t) => ({
    logo: t.string({ required: true, description: "The supplier's logo (an image file of the project)" }),
    url: t.string({ required: true, description: "The supplier's web address" }),
  }),
});
const VariableInput = builder.inputType("ProjectVariableInput", {
  description: "A name/value pair passed to the project's nodes",
  fields: (t) => ({ name: t.string({ required: true, description: "The variable's name" }), value: t.string({ description: "The variable's value" }) }),
});

/** The settings fields shared by create and update inputs. */
const settingsFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  ...perSetting(BOOLEAN_SETTINGS, (_k, o) => t.boolean(o)),
  ...perSetting(INT_SETTINGS, (_k, o) => t.int(o)),
  supplier: t.field({ type: SupplierInput, description: "null clears it" }),
  variables: t.field({ type: [VariableInput], description: "null clears them" }),
});

/** The project directory a client chooses: local servers only, inside the allowed roots (as on REST). */
const pathField = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) =>
  t.string({ description: "The project directory (local servers only, inside the allowed roots); on update only the current one is accepted" });

const CreateProjectInput = builder.inputType("CreateProjectInput", {
  description: "A new, empty lab: its name, and settings that otherwise take their defaults",
  fields: (t) => ({
    name: t.string({ required: true, description: "The project's name (a taken one is refused)" }),
    id: t.id({ description: "Chosen GNS3 project id (a UUID); a taken one is refused (ALREADY_EXISTS)" }),
    path: pathField(t),
    ...settingsFields(t),
  }),
});
const UpdateProjectInput = builder.inputType("UpdateProjectInput", {
  description: "A project and changes to it: only the fields given change",
  fields: (t) => ({
    id: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id)" }),
    name: t.string({ description: "A new name (a taken one is refused)" }),
    path: pathField(t),
    ...settingsFields(t),
  }),
});
const DuplicateProjectInput = builder.inputType("DuplicateProjectInput", {
  description: "The project to copy, the copy's name and where it goes",
  fields: (t) => ({
    id: t.id({ required: true, description: "The project to copy (its global id, or its GNS3 project_id)" }),
    name: t.string({ required: true, description: "Taken as <name>-1, <name>-2, … when in use" }),
    resetMacAddresses: t.boolean({ description: "Give the copy's nodes new MAC addresses, so the copy and the original can share a network" }),
    path: pathField(t),
  }),
});

/** GraphQL null means "clear" where the project's input contract accepts null (supplier, variables), else "leave it". */
const NULLABLE = new Set(Object.entries(projectSettingsFields).flatMap(([field, rule]) => (rule.safeParse(null).success ? [field] : [])));
function toSettings(input: Record<string, unknown>): ProjectSettings {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(withDomainNames(input, PROJECT_NAMES))) {
    if (v !== null || NULLABLE.has(k)) out[k] = v ?? null;
  }
  if (out.variables) out.variables = (out.variables as Variable[]).map((v) => ({ name: v.name, ...(v.value != null ? { value: v.value } : {}) }));
  return out as ProjectSettings;
}

const ProjectFilter = builder.inputType("ProjectFilter", {
  description: "Projects matching every field given",
  fields: (t) => ({
    status: t.field({ type: ProjectStatus, description: "Only opened or only closed projects" }),
    name: t.string({ description: "The project of this exact name" }),
  }),
});

const projectWhere = (f: typeof ProjectFilter.$inferInput | null | undefined) => ({
  ...(f?.status ? { status: f.status } : {}),
  ...(f?.name != null ? { name: f.name } : {}),
});

builder.queryFields((t) => ({
  // Planned like `project`: the selected relations of every project of the page in a fixed number of statements.
  projects: t.prismaConnection(
    {
      type: "Project",
      cursor: "id",
      description: "The projects in creation order",
      args: { filter: t.arg({ type: ProjectFilter, description: "Only the projects that match" }) },
      resolve: async (query, _r, args, ctx) => {
        const cursor = await ctx.bus.lastId(); // before the read: nothing published after it is missed
        const rows = await ctx.db.project.findMany({ ...usableQuery(query), where: projectWhere(args.filter), orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
        return rows.map((p) => withCursor(p, cursor));
      },
      totalCount: (_r, args, ctx) => ctx.db.project.count({ where: projectWhere(args.filter) }),
    },
    {},
  ),
  project: t.prismaField({
    type: "Project",
    nullable: true,
    description: lookupDescription("One project, with the event cursor to follow its changes from"),
    args: { id: t.arg.id({ required: true, description: "The project's id (its global id, or its GNS3 project_id)" }) },
    // Passing plugin-prisma's query loads the selected relations (nodes, links, endpoints) with the project in a
    // fixed number of statements, instead of per-object loaders (which also overflowed SQLite's bind-parameter
    // limit at 1,000 nodes).
    // The event cursor is read first, so that every change published after it is delivered from it.
    resolve: (query, _r, args, ctx) =>
      orNull(async () => {
        const cursor = await ctx.bus.lastId();
        const project = await ctx.db.project.findUnique({ ...query, where: { id: projectIdArg(args.id, "id") } });
        return project && withCursor(project, cursor);
      }),
  }),
}));

/** The project an argument names: its global id or its GNS3 project_id. */
export const projectIdArg = (value: string | number, target = "projectId") => domainId(value, "Project", target);

const projectInput = (name: string) => idInput(name, `The project \`${name}\` acts on`, "The project's id (its global id, or its GNS3 project_id)");
const ProjectPayload = (name: string) =>
  payloadType<{ project: Project }>(name, `What \`${name}\` changed: the project`, (t) => ({
    project: t.field({ type: ProjectRef, description: "The project as it is now", resolve: (p) => p.project }),
  }));

/** What reading or changing a project can fail with, beyond bad input and a missing project. */
const PROJECT_ERRORS = [InvalidInputError, NotFoundError, ConflictError, ForbiddenError];
/** Closing or deleting a project: the instance that runs it lets it go (RUNNER_ERRORS); no compute is asked (placement's tear-down never fails it). */
const PROJECT_RELEASE_ERRORS = [InvalidInputError, NotFoundError, ...RUNNER_ERRORS];

builder.mutationFields((t) => ({
  createProject: t.field({
    type: ProjectPayload("createProject"),
    description: "Creates an empty lab, opened",
    errors: mutationErrors("createProject", [InvalidInputError, ConflictError, ForbiddenError]),
    args: { input: t.arg({ type: CreateProjectInput, required: true, description: "The new project" }) },
    resolve: async (_r, { input }, ctx) => {
      const { name, id, path, ...settings } = input;
      const projectId = id == null ? undefined : projectIdArg(id, "id");
      await refuseTakenId("Project", projectId, (id) => ctx.db.project.findUnique({ where: { id }, select: { id: true } }));
      return { project: await createProject(ctx, { ...toSettings(settings), name, projectId, path }) };
    },
  }),
  updateProject: t.field({
    type: ProjectPayload("updateProject"),
    description: "Renames a project or changes its settings",
    errors: mutationErrors("updateProject", PROJECT_ERRORS),
    args: { input: t.arg({ type: UpdateProjectInput, required: true, description: "The project and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, name, path, ...settings } = input;
      return { project: await updateProject(ctx, projectIdArg(id, "id"), { ...toSettings(settings), name, path }) };
    },
  }),
  deleteProject: t.field({
    type: deletedPayload("deleteProject", "the project and its nodes, links, drawings and snapshots"),
    description: "Deletes a project with its nodes, links, drawings, snapshots and directory",
    errors: mutationErrors("deleteProject", [...PROJECT_RELEASE_ERRORS, ConflictError]),
    args: { input: t.arg({ type: projectInput("deleteProject"), required: true, description: "The project" }) },
    resolve: async (_r, { input }, ctx) => {
      const projectId = projectIdArg(input.id, "id");
      const owned = { where: { projectId }, select: { id: true } } as const;
      const [nodes, links, drawings, snapshots] = await Promise.all([
        ctx.db.node.findMany(owned), ctx.db.link.findMany(owned), ctx.db.drawing.findMany(owned), ctx.db.snapshot.findMany(owned),
      ]);
      await deleteProject(ctx, projectId);
      const ids = (type: string, rows: { id: string }[]) => rows.map((r) => globalId(type, r.id));
      return {
        deletedIds: [globalId("Project", projectId), ...ids("EmulatedNode", nodes), ...ids("Link", links), ...ids("Drawing", drawings), ...ids("Snapshot", snapshots)],
      };
    },
  }),
  openProject: t.field({
    type: ProjectPayload("openProject"),
    description: "Opens a closed project so its nodes can run (starting them all if autoStart is set)",
    errors: mutationErrors("openProject", [InvalidInputError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: projectInput("openProject"), required: true, description: "The project" }) },
    resolve: async (_r, { input }, ctx) => ({ project: await openProject(ctx, projectIdArg(input.id, "id")) }),
  }),
  closeProject: t.field({
    type: ProjectPayload("closeProject"),
    description: "Closes a project: stops its nodes and keeps it on disk",
    errors: mutationErrors("closeProject", PROJECT_RELEASE_ERRORS),
    args: { input: t.arg({ type: projectInput("closeProject"), required: true, description: "The project" }) },
    resolve: async (_r, { input }, ctx) => ({ project: await closeProject(ctx, projectIdArg(input.id, "id")) }),
  }),
  duplicateProject: t.field({
    type: ProjectPayload("duplicateProject"),
    description: "A closed copy with new node, link and drawing ids; the payload's project is the copy",
    errors: mutationErrors("duplicateProject", PROJECT_ERRORS),
    args: { input: t.arg({ type: DuplicateProjectInput, required: true, description: "The project to copy, the copy's name and place" }) },
    resolve: async (_r, { input }, ctx) => ({
      project: await duplicateProject(ctx, projectIdArg(input.id, "id"), { name: input.name, resetMacAddresses: input.resetMacAddresses ?? false, path: input.path }),
    }),
  }),
}));

const ProjectStats = builder.objectRef<{ nodes: number; links: number; drawings: number; snapshots: number }>("ProjectStats").implement({
  description: "How much a project holds; nodes, links and drawings count 0 while the project is closed",
  fields: (t) => ({
    nodes: t.exposeInt("nodes", { description: "Nodes (devices) in the project" }),
    links: t.exposeInt("links", { description: "Links (wires) between the nodes" }),
    drawings: t.exposeInt("drawings", { description: "Drawings (shapes, notes, images) on the canvas" }),
    snapshots: t.exposeInt("snapshots", { description: "Saved snapshots of the project" }),
  }),
});

// Counted with the project (planned: one statement for a list of projects). GNS3 counts what is loaded in memory:
// a closed project reports 0 nodes, links and drawings, but its snapshots.
builder.prismaObjectField("Project", "stats", (t) =>
  t.field({
    type: ProjectStats,
    description: "How many nodes, links, drawings and snapshots the project holds",
    select: { status: true, _count: { select: { nodes: true, links: true, drawings: true, snapshots: true } } },
    resolve: ({ status, _count: c }) => {
      const opened = status === "opened";
      return { nodes: opened ? c.nodes : 0, links: opened ? c.links : 0, drawings: opened ? c.drawings : 0, snapshots: c.snapshots };
    },
  }),
);

const LoadProjectInput = builder.inputType("LoadProjectInput", {
  description: "A topology file on this server",
  fields: (t) => ({ path: t.string({ required: true, description: "The .gns3 file's path on this server" }) }),
});
builder.mutationField("loadProject", (t) =>
  t.field({
    type: ProjectPayload("loadProject"),
    description: "Opens the project of a .gns3 file in the projects directory; ForbiddenError unless the server is local",
    errors: mutationErrors("loadProject", PROJECT_ERRORS),
    args: { input: t.arg({ type: LoadProjectInput, required: true, description: "The file" }) },
    resolve: async (_r, { input }, ctx) => ({ project: await loadProject(ctx, input.path) }),
  }),
);
