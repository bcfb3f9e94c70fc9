import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, uploadedFile, validForArg, WrittenFileRef } from "../files/graphql.js";
import { existingNodeFile, writeNodeFile } from "./files.js";

/** Node files over GraphQL: a signed URL of GET …/nodes/{id}/files/{path}, and a multipart upload for the write. */
builder.prismaObjectField("Node", "fileUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download a file of the node's directory (its configs, disks, logs) with a plain GET",
    errors: { types: DOMAIN_ERRORS },
    args: { path: t.arg.string({ required: true, description: "The file's path inside the node directory" }), validFor: validForArg(t.arg) },
    resolve: async (n, args, ctx) => {
      await existingNodeFile(ctx, n.projectId, n.id, args.path); // the route's checks now: a typed error instead of a URL that fails
      return downloadUrl(ctx, `/v2/projects/${n.projectId}/nodes/${n.id}/files/${encodeFilePath(args.path)}`, args.validFor);
    },
  }),
);

builder.mutationField("writeNodeFile", (t) =>
  t.field({
    type: WrittenFileRef,
    description: "Creates or replaces a file of the node's directory (a startup config, a disk…), making its directories",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true, description: "The id of the node's project" }),
      nodeId: t.arg.id({ required: true, description: "The node's id" }),
      path: t.arg.string({ required: true, description: "The file's path inside the node directory" }),
      file: t.arg({ type: "File", required: true, description: "The file's content, sent as a multipart upload" }),
    },
    resolve: async (_r, args, ctx) => {
      const data = await uploadedFile(ctx, args.file);
      await writeNodeFile(ctx, String(args.projectId), String(args.nodeId), args.path, data);
      return { path: args.path, size: data.length };
    },
  }),
);
