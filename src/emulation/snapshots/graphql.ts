import type { Project, Snapshot } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { itemAddress } from "../projects/address.js";
import { ProjectRef, projectIdArg } from "../projects/graphql.js";
import { createSnapshot, deleteSnapshot, restoreSnapshot } from "./operations.js";

export const SnapshotRef = builder.prismaNode("Snapshot", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A saved copy of a project's topology and files that the project can be restored to",
  id: { field: "id", description: "The snapshot's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    snapshotId: t.exposeID("id", { description: "The snapshot's GNS3 id (a UUID): the `snapshot_id` of the REST API and the GNS3 GUI" }),
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

const CreateSnapshotInput = builder.inputType("CreateSnapshotInput", {
  description: "The project to snapshot and the snapshot's name",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id; an opened project whose nodes are stopped)" }),
    name: t.string({ required: true, description: "The snapshot's name (a taken one is refused: ALREADY_EXISTS)" }),
    description: t.string({ description: "Free text saying what the snapshot holds" }),
  }),
});
const snapshotInput = (name: string) => idInput(name, `The snapshot \`${name}\` acts on`, "The snapshot's id (its global id, or its GNS3 snapshot_id)");

/** The snapshot an argument names and its project, from the snapshot's id alone. */
const snapshotAddress = (ctx: AppContext, id: string | number) =>
  itemAddress(id, "Snapshot", (snapshotId) => ctx.db.snapshot.findUnique({ where: { id: snapshotId }, select: { projectId: true } }));

/** What a snapshot operation can fail with: bad input, a snapshot or project missing, a closed project, running nodes or a taken name. */
const SNAPSHOT_ERRORS = [InvalidInputError, NotFoundError, ConflictError, ForbiddenError];

builder.mutationFields((t) => ({
  createSnapshot: t.field({
    type: payloadType<{ snapshot: Snapshot }>("createSnapshot", "What `createSnapshot` made: the snapshot", (f) => ({
      snapshot: f.field({ type: SnapshotRef, description: "The new snapshot", resolve: (p) => p.snapshot }),
    })),
    description: "Snapshots an opened project whose nodes are stopped",
    errors: mutationErrors("createSnapshot", SNAPSHOT_ERRORS),
    args: { input: t.arg({ type: CreateSnapshotInput, required: true, description: "The project and the snapshot's name" }) },
    resolve: async (_r, { input }, ctx) => ({
      snapshot: await createSnapshot(ctx, projectIdArg(input.projectId), { name: input.name, description: input.description }),
    }),
  }),
  deleteSnapshot: t.field({
    type: deletedPayload("deleteSnapshot", "the snapshot"),
    description: "Deletes a snapshot and its archive",
    errors: mutationErrors("deleteSnapshot", SNAPSHOT_ERRORS),
    args: { input: t.arg({ type: snapshotInput("deleteSnapshot"), required: true, description: "The snapshot" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await snapshotAddress(ctx, input.id);
      await deleteSnapshot(ctx, at.projectId, at.id);
      return { deletedIds: [globalId("Snapshot", at.id)] };
    },
  }),
  restoreSnapshot: t.field({
    type: payloadType<{ project: Project }>("restoreSnapshot", "What `restoreSnapshot` changed: the project, with the snapshot's topology", (f) => ({
      project: f.field({ type: ProjectRef, description: "The project as restored (select its nodes, links and drawings to replace the cached ones)", resolve: (p) => p.project }),
    })),
    description: "Replaces the project's topology and files with the snapshot's (the project keeps its name); its nodes must be stopped",
    // The runner re-wires the restored topology afterwards and only logs what it cannot carry: no compute fails it.
    errors: mutationErrors("restoreSnapshot", SNAPSHOT_ERRORS),
    args: { input: t.arg({ type: snapshotInput("restoreSnapshot"), required: true, description: "The snapshot to restore" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await snapshotAddress(ctx, input.id);
      return { project: await restoreSnapshot(ctx, at.projectId, at.id) };
    },
  }),
}));
