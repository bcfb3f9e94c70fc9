import { builder, DOMAIN_ERRORS, usableQuery } from "../../platform/graphql/builder.js";
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
  values: { OPENED: { value: "opened" }, CLOSED: { value: "closed" } } as const,
});

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
  fields: (t) => ({ logo: t.exposeString("logo"), url: t.exposeString("url") }),
});
const VariableType = builder.objectRef<Variable>("ProjectVariable").implement({
  description: "A name/value pair passed to the nodes of the project",
  fields: (t) => ({ name: t.exposeString("name"), value: t.string({ nullable: true, resolve: (v) => v.value ?? null }) }),
});

/** Where a project read by `project`/`projects` (or carried by an event) keeps its event cursor. */
export const EVENT_CURSOR = Symbol("eventCursor");
const withCursor = <T extends object>(row: T, cursor: string): T => Object.assign(row, { [EVENT_CURSOR]: cursor });

export const ProjectRef = builder.prismaObject("Project", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    path: t.string({ description: "The project directory", resolve: (p, _a, ctx) => projectDir(ctx, p) }),
    filename: t.exposeString("filename", { description: "The topology file name (set at creation, kept on rename)" }),
    status: t.field({ type: ProjectStatus, resolve: (p) => p.status as "opened" | "closed" }),
    runnerId: t.exposeString("runnerId", {
      nullable: true,
      description: "The instance of this deployment that runs the project's nodes, switches and links while it is open (PATCHBAY_INSTANCE_ID); null when none does yet",
    }),
    autoStart: t.exposeBoolean("autoStart"),
    autoOpen: t.exposeBoolean("autoOpen"),
    autoClose: t.exposeBoolean("autoClose"),
    sceneHeight: t.exposeInt("sceneHeight"),
    sceneWidth: t.exposeInt("sceneWidth"),
    zoom: t.exposeInt("zoom"),
    showLayers: t.exposeBoolean("showLayers"),
    snapToGrid: t.exposeBoolean("snapToGrid"),
    showGrid: t.exposeBoolean("showGrid"),
    gridSize: t.exposeInt("gridSize"),
    drawingGridSize: t.exposeInt("drawingGridSize"),
    showInterfaceLabels: t.exposeBoolean("showInterfaceLabels"),
    supplier: t.field({
      type: SupplierType,
      nullable: true,
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
      resolve: (p) => (p.variablesJson ? (JSON.parse(p.variablesJson) as Variable[]) : null),
    }),
  }),
});

const SupplierInput = builder.inputType("ProjectSupplierInput", {
  fields: (t) => ({ logo: t.string({ required: true }), url: t.string({ required: true }) }),
});
const VariableInput = builder.inputType("ProjectVariableInput", {
  fields: (t) => ({ name: t.string({ required: true }), value: t.string() }),
});

/** The settings fields shared by create and update inputs. */
const settingsFields = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) => ({
  autoStart: t.boolean(),
  autoOpen: t.boolean(),
  autoClose: t.boolean(),
  sceneHeight: t.int(),
  sceneWidth: t.int(),
  zoom: t.int(),
  showLayers: t.boolean(),
  snapToGrid: t.boolean(),
  showGrid: t.boolean(),
  gridSize: t.int(),
  drawingGridSize: t.int(),
  showInterfaceLabels: t.boolean(),
  supplier: t.field({ type: SupplierInput, description: "null clears it" }),
  variables: t.field({ type: [VariableInput], description: "null clears them" }),
});

/** The project directory a client chooses: local servers only, inside the allowed roots (as on REST). */
const pathField = (t: Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0]) =>
  t.string({ description: "The project directory (local servers only, inside the allowed roots); on update only the current one is accepted" });

const CreateProjectInput = builder.inputType("CreateProjectInput", {
  fields: (t) => ({ name: t.string({ required: true }), id: t.id({ description: "Chosen project id (UUID)" }), path: pathField(t), ...settingsFields(t) }),
});
const UpdateProjectInput = builder.inputType("UpdateProjectInput", {
  fields: (t) => ({ name: t.string(), path: pathField(t), ...settingsFields(t) }),
});
const DuplicateProjectInput = builder.inputType("DuplicateProjectInput", {
  fields: (t) => ({
    name: t.string({ required: true, description: "Taken as <name>-1, <name>-2, … when in use" }),
    resetMacAddresses: t.boolean(),
    path: pathField(t),
  }),
});

/** GraphQL null means "clear" where the project's input contract accepts null (supplier, variables), else "leave it". */
const NULLABLE = new Set(Object.entries(projectSettingsFields).flatMap(([field, rule]) => (rule.safeParse(null).success ? [field] : [])));
function toSettings(input: Record<string, unknown>): ProjectSettings {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
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
      args: { filter: t.arg({ type: ProjectFilter }) },
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
    args: { id: t.arg.id({ required: true }) },
    // Passing plugin-prisma's query loads the selected relations (nodes, links, endpoints) with the project in a
    // fixed number of statements, instead of per-object loaders (which also overflowed SQLite's bind-parameter
    // limit at 1,000 nodes).
    // The event cursor is read first, so that every change published after it is delivered from it.
    resolve: async (query, _r, args, ctx) => {
      const cursor = await ctx.bus.lastId();
      const project = await ctx.db.project.findUnique({ ...query, where: { id: String(args.id) } });
      return project && withCursor(project, cursor);
    },
  }),
}));

builder.mutationFields((t) => ({
  createProject: t.prismaField({
    type: "Project",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateProjectInput, required: true }) },
    resolve: (_q, _r, { input }, ctx) => {
      const { name, id, path, ...settings } = input;
      return createProject(ctx, { ...toSettings(settings), name, projectId: id == null ? undefined : String(id), path });
    },
  }),
  updateProject: t.prismaField({
    type: "Project",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateProjectInput, required: true }) },
    resolve: (_q, _r, { id, input }, ctx) => {
      const { name, path, ...settings } = input;
      return updateProject(ctx, String(id), { ...toSettings(settings), name, path });
    },
  }),
  deleteProject: t.boolean({
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await deleteProject(ctx, String(id));
      return true;
    },
  }),
  openProject: t.prismaField({
    type: "Project",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_q, _r, { id }, ctx) => openProject(ctx, String(id)),
  }),
  closeProject: t.prismaField({
    type: "Project",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_q, _r, { id }, ctx) => closeProject(ctx, String(id)),
  }),
  duplicateProject: t.prismaField({
    type: "Project",
    description: "A closed copy with new node, link and drawing ids",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: DuplicateProjectInput, required: true }) },
    resolve: (_q, _r, { id, input }, ctx) =>
      duplicateProject(ctx, String(id), { name: input.name, resetMacAddresses: input.resetMacAddresses ?? false, path: input.path }),
  }),
}));

const ProjectStats = builder.objectRef<{ nodes: number; links: number; drawings: number; snapshots: number }>("ProjectStats").implement({
  description: "Object counts (GET /v2/projects/{id}/stats); nodes, links and drawings count 0 while the project is closed",
  fields: (t) => ({
    nodes: t.exposeInt("nodes"),
    links: t.exposeInt("links"),
    drawings: t.exposeInt("drawings"),
    snapshots: t.exposeInt("snapshots"),
  }),
});

// Counted with the project (planned: one statement for a list of projects). GNS3 counts what is loaded in memory:
// a closed project reports 0 nodes, links and drawings, but its snapshots.
builder.prismaObjectField("Project", "stats", (t) =>
  t.field({
    type: ProjectStats,
    select: { status: true, _count: { select: { nodes: true, links: true, drawings: true, snapshots: true } } },
    resolve: ({ status, _count: c }) => {
      const opened = status === "opened";
      return { nodes: opened ? c.nodes : 0, links: opened ? c.links : 0, drawings: opened ? c.drawings : 0, snapshots: c.snapshots };
    },
  }),
);

builder.mutationField("loadProject", (t) =>
  t.prismaField({
    type: "Project",
    description: "Opens the project of a .gns3 file in the projects directory; ForbiddenError unless the server is local",
    errors: { types: DOMAIN_ERRORS },
    args: { path: t.arg.string({ required: true }) },
    resolve: (_q, _r, args, ctx) => loadProject(ctx, args.path),
  }),
);
