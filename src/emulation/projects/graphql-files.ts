import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import type { Project } from "../../generated/prisma-sqlite/client.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, uploadedFile, validForArg, WrittenFileRef } from "../files/graphql.js";
import { withArchiveFile } from "./archive-upload.js";
import { ProjectRef, projectIdArg } from "./graphql.js";
import { projectFile, writeProjectFile } from "./files.js";
import { assertProjectStopped, importProject } from "./transfer.js";

/**
 * Project archives and files over GraphQL, with the operations of the REST routes: downloads are signed URLs of
 * GET /v2/projects/{id}/export and …/files/{path}; import and file writes take a multipart upload.
 */
builder.prismaObjectFields("Project", (t) => ({
  exportUrl: t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download the whole lab as a .gns3project archive (to share or import elsewhere); its nodes must be stopped",
    errors: { types: [InvalidInputError, ConflictError] },
    args: {
      includeSnapshots: t.arg.boolean({ required: true, defaultValue: false, description: "Put the project's snapshots in the archive too" }),
      resetMacAddresses: t.arg.boolean({ required: true, defaultValue: false, description: "Give the exported nodes new MAC addresses" }),
      keepComputeIds: t.arg.boolean({ required: true, defaultValue: false, description: "Keep which compute runs each node (else every node runs on the importing server)" }),
      compress: t.arg.boolean({ required: true, defaultValue: true, description: "Compress the archive (false: entries are stored as they are, faster for disk images)" }),
      validForSeconds: validForArg(t.arg),
    },
    resolve: async (p, args, ctx) => {
      await assertProjectStopped(ctx, p.id);
      const query = new URLSearchParams();
      if (args.includeSnapshots) query.set("include_snapshots", "yes");
      if (args.resetMacAddresses) query.set("reset_mac_addresses", "yes");
      if (args.keepComputeIds) query.set("keep_compute_ids", "yes");
      if (!args.compress) query.set("compression", "none");
      const q = query.toString();
      return downloadUrl(ctx, `/v2/projects/${p.id}/export${q ? `?${q}` : ""}`, args.validForSeconds);
    },
  }),
  fileUrl: t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download a file of the project directory",
    errors: { types: [InvalidInputError, NotFoundError, ForbiddenError] },
    args: { path: t.arg.string({ required: true, description: "The file's path inside the project directory" }), validForSeconds: validForArg(t.arg) },
    resolve: async (p, args, ctx) => {
      await projectFile(ctx, p.id, args.path); // the route's checks now: a typed error instead of a URL that fails
      return downloadUrl(ctx, `/v2/projects/${p.id}/files/${encodeFilePath(args.path)}`, args.validForSeconds);
    },
  }),
}));

/** The bytes of an uploaded File, chunk by chunk (Yoga's File is a ponyfill that Readable.fromWeb refuses). */
async function* fileChunks(file: File): AsyncGenerator<Uint8Array> {
  const reader = file.stream().getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
}

const ImportProjectInput = builder.inputType("ImportProjectInput", {
  description: "A .gns3project archive to make a project of, and what to change on the way",
  fields: (t) => ({
    id: t.id({ description: "Chosen GNS3 project id (a UUID); a taken one is refused (ALREADY_EXISTS); a new one when omitted" }),
    file: t.field({ type: "File", required: true, description: "The archive, sent as a multipart upload (its variable mapped to `input.file`)" }),
    name: t.string({ description: "Replaces the archive's project name (a taken one is refused)" }),
    path: t.string({ description: "The project directory (local servers only, inside the allowed roots)" }),
  }),
});
const WriteProjectFileInput = builder.inputType("WriteProjectFileInput", {
  description: "A file to create or replace in a project's directory",
  fields: (t) => ({
    projectId: t.id({ required: true, description: "The project (its global id, or its GNS3 project_id)" }),
    path: t.string({ required: true, description: "The file's path inside the project directory (its directory must exist)" }),
    file: t.field({ type: "File", required: true, description: "The file's content, sent as a multipart upload (its variable mapped to `input.file`)" }),
  }),
});

builder.mutationFields((t) => ({
  importProject: t.field({
    type: payloadType<{ project: Project }>("importProject", "What `importProject` made: the project", (f) => ({
      project: f.field({ type: ProjectRef, description: "The new project (closed)", resolve: (p) => p.project }),
    })),
    description: "Creates a closed project from a .gns3project archive (one exported by exportUrl or by GNS3)",
    errors: mutationErrors("importProject", [InvalidInputError, ConflictError, ForbiddenError]),
    args: { input: t.arg({ type: ImportProjectInput, required: true, description: "The archive and the new project's id, name and place" }) },
    resolve: async (_r, { input }, ctx) => ({
      // Yoga has held the file to the upload limit as it arrived.
      project: await withArchiveFile(ctx, Readable.from(fileChunks(input.file)), Infinity, (file) =>
        importProject(ctx, input.id == null ? randomUUID() : projectIdArg(input.id, "id"), file, {
          name: input.name ?? undefined,
          path: input.path ?? undefined,
          autoClose: true,
        }),
      ),
    }),
  }),
  writeProjectFile: t.field({
    type: payloadType<{ file: { path: string; size: number } }>("writeProjectFile", "What `writeProjectFile` wrote: the file", (f) => ({
      file: f.field({ type: WrittenFileRef, description: "The file written: its path and size", resolve: (p) => p.file }),
    })),
    description: "Creates or replaces a file of the project directory; its directory must exist",
    errors: mutationErrors("writeProjectFile", [InvalidInputError, NotFoundError, ConflictError, ForbiddenError]),
    args: { input: t.arg({ type: WriteProjectFileInput, required: true, description: "The project, the file's path and its content" }) },
    resolve: async (_r, { input }, ctx) => {
      const data = await uploadedFile(ctx, input.file);
      await writeProjectFile(ctx, projectIdArg(input.projectId), input.path, data);
      return { file: { path: input.path, size: data.length } };
    },
  }),
}));
