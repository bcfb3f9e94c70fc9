import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { createSnapshot, deleteSnapshot, restoreSnapshot } from "./operations.js";

export const SnapshotRef = builder.prismaObject("Snapshot", {
  description: "A saved copy of a project's topology and files that the project can be restored to",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The snapshot's id (a UUID)" }),
    name: t.exposeString("name", { description: "The snapshot's name, unique in its project" }),
    filename: t.exposeString("filename", { description: "The snapshot archive's file name in the project's snapshots directory" }),
    description: t.exposeString("description", { description: "Free text saying what the snapshot holds" }),
    createdAt: t.field({ type: "DateTime", description: "When the snapshot was taken", resolve: (s) => new Date(s.createdAt * 1000) }),
    project: t.relation("project", { description: "The project the snapshot belongs to" }),
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
    args: {
      projectId: t.arg.id({ required: true, description: "The project's id (an opened project)" }),
      name: t.arg.string({ required: true, description: "The snapshot's name (a taken one is refused)" }),
      description: t.arg.string({ description: "Free text saying what the snapshot holds" }),
    },
    resolve: (_q, _r, args, ctx) => createSnapshot(ctx, String(args.projectId), { name: args.name, description: args.description }),
  }),
  deleteSnapshot: t.boolean({
    description: "Deletes a snapshot and its archive; true once gone",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the snapshot's project" }), id: t.arg.id({ required: true, description: "The snapshot's id" }) },
    resolve: async (_r, args, ctx) => {
      await deleteSnapshot(ctx, String(args.projectId), String(args.id));
      return true;
    },
  }),
  restoreSnapshot: t.prismaField({
    type: "Project",
    description: "Replace the project's topology and files with the snapshot's (the project keeps its name)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the snapshot's project" }), id: t.arg.id({ required: true, description: "The snapshot's id" }) },
    resolve: (_q, _r, args, ctx) => restoreSnapshot(ctx, String(args.projectId), String(args.id)),
  }),
}));
