import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, uploadedFile, validForArg, WrittenFileRef } from "../files/graphql.js";
import { withArchiveFile } from "./archive-upload.js";
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
    errors: { types: DOMAIN_ERRORS },
    args: {
      includeSnapshots: t.arg.boolean({ required: true, defaultValue: false, description: "Put the project's snapshots in the archive too" }),
      resetMacAddresses: t.arg.boolean({ required: true, defaultValue: false, description: "Give the exported nodes new MAC addresses" }),
      keepComputeIds: t.arg.boolean({ required: true, defaultValue: false, description: "Keep which compute runs each node (else every node runs on the importing server)" }),
      compress: t.arg.boolean({ required: true, defaultValue: true, description: "Compress the archive (false: entries are stored as they are, faster for disk images)" }),
      validFor: validForArg(t.arg),
    },
    resolve: async (p, args, ctx) => {
      await assertProjectStopped(ctx, p.id);
      const query = new URLSearchParams();
      if (args.includeSnapshots) query.set("include_snapshots", "yes");
      if (args.resetMacAddresses) query.set("reset_mac_addresses", "yes");
      if (args.keepComputeIds) query.set("keep_compute_ids", "yes");
      if (!args.compress) query.set("compression", "none");
      const q = query.toString();
      return downloadUrl(ctx, `/v2/projects/${p.id}/export${q ? `?${q}` : ""}`, args.validFor);
    },
  }),
  fileUrl: t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download a file of the project directory",
    errors: { types: DOMAIN_ERRORS },
    args: { path: t.arg.string({ required: true, description: "The file's path inside the project directory" }), validFor: validForArg(t.arg) },
    resolve: async (p, args, ctx) => {
      await projectFile(ctx, p.id, args.path); // the route's checks now: a typed error instead of a URL that fails
      return downloadUrl(ctx, `/v2/projects/${p.id}/files/${encodeFilePath(args.path)}`, args.validFor);
    },
  }),
}));

/** The bytes of an uploaded File, chunk by chunk (Yoga's File is a ponyfill that Readable.fromWeb refuses). */
async function* fileChunks(file: File): AsyncGenerator<Uint8Array> {
  const reader = file.stream().getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
}

builder.mutationFields((t) => ({
  importProject: t.prismaField({
    type: "Project",
    description: "Creates a closed project from a .gns3project archive (one exported by exportUrl or by GNS3)",
    errors: { types: DOMAIN_ERRORS },
    args: {
      id: t.arg.id({ description: "The new project's id (UUID); a new one when omitted" }),
      file: t.arg({ type: "File", required: true, description: "The archive, sent as a multipart upload" }),
      name: t.arg.string({ description: "Replaces the archive's project name" }),
      path: t.arg.string({ description: "Project directory (local mode only, inside the allowed roots)" }),
    },
    resolve: async (_q, _r, args, ctx) =>
      // Yoga has held the file to the upload limit as it arrived.
      withArchiveFile(ctx, Readable.from(fileChunks(args.file)), Infinity, (file) =>
        importProject(ctx, args.id == null ? randomUUID() : String(args.id), file, {
          name: args.name ?? undefined,
          path: args.path ?? undefined,
          autoClose: true,
        }),
      ),
  }),
  writeProjectFile: t.field({
    type: WrittenFileRef,
    description: "Creates or replaces a file of the project directory; its directory must exist",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true, description: "The project's id" }),
      path: t.arg.string({ required: true, description: "The file's path inside the project directory" }),
      file: t.arg({ type: "File", required: true, description: "The file's content, sent as a multipart upload" }),
    },
    resolve: async (_r, args, ctx) => {
      const data = await uploadedFile(ctx, args.file);
      await writeProjectFile(ctx, String(args.projectId), args.path, data);
      return { path: args.path, size: data.length };
    },
  }),
}));
