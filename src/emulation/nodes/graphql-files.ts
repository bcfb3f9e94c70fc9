import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, uploadedFile, validForArg, WrittenFileRef } from "../files/graphql.js";
import { existingNodeFile, writeNodeFile } from "./files.js";

/** Node files over GraphQL: a signed URL of GET …/nodes/{id}/files/{path}, and a multipart upload for the write. */
builder.prismaObjectField("Node", "fileUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description: "Downloads a file of the node directory (GET /v2/projects/{project_id}/nodes/{id}/files/{path})",
    errors: { types: DOMAIN_ERRORS },
    args: { path: t.arg.string({ required: true }), validFor: validForArg(t.arg) },
    resolve: async (n, args, ctx) => {
      await existingNodeFile(ctx, n.projectId, n.id, args.path); // the route's checks now: a typed error instead of a URL that fails
      return downloadUrl(ctx, `/v2/projects/${n.projectId}/nodes/${n.id}/files/${encodeFilePath(args.path)}`, args.validFor);
    },
  }),
);

builder.mutationField("writeNodeFile", (t) =>
  t.field({
    type: WrittenFileRef,
    description: "Creates or replaces a file of the node directory, with its directories (POST /v2/projects/{project_id}/nodes/{id}/files/{path})",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.id({ required: true }),
      nodeId: t.arg.id({ required: true }),
      path: t.arg.string({ required: true }),
      file: t.arg({ type: "File", required: true }),
    },
    resolve: async (_r, args, ctx) => {
      const data = await uploadedFile(ctx, args.file);
      await writeNodeFile(ctx, String(args.projectId), String(args.nodeId), args.path, data);
      return { path: args.path, size: data.length };
    },
  }),
);
