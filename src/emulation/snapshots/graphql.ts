import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { createSnapshot, deleteSnapshot, restoreSnapshot } from "./operations.js";

export const SnapshotRef = builder.prismaObject("Snapshot", {
  description: "A saved copy of a project's topology and files that the project can be restored to",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    filename: t.exposeString("filename"),
    description: t.exposeString("description"),
    createdAt: t.field({ type: "DateTime", resolve: (s) => new Date(s.createdAt * 1000) }),
    project: t.relation("project"),
  }),
});

builder.prismaObjectField("Project", "snapshots", (t) =>
  t.relatedConnection("snapshots", {
    cursor: "id",
    description: "The project's snapshots, oldest first",
    query: { orderBy: [{ createdAt: "asc" }, { name: "asc" }, { id: "asc" }] },
    totalCount: true,
  }),
);

builder.mutationFields((t) => ({
  createSnapshot: t.prismaField({
    type: "Snapshot",
    description: "Snapshot an opened project whose nodes are stopped",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), name: t.arg.string({ required: true }), description: t.arg.string() },
    resolve: (_q, _r, args, ctx) => createSnapshot(ctx, String(args.projectId), { name: args.name, description: args.description }),
  }),
  deleteSnapshot: t.boolean({
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => {
      await deleteSnapshot(ctx, String(args.projectId), String(args.id));
      return true;
    },
  }),
  restoreSnapshot: t.prismaField({
    type: "Project",
    description: "Replace the project's topology and files with the snapshot's (the project keeps its name)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: (_q, _r, args, ctx) => restoreSnapshot(ctx, String(args.projectId), String(args.id)),
  }),
}));
