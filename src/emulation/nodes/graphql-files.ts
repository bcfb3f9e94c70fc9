import type { Node } from "../../generated/prisma-sqlite/client.js";
import { ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import "../../platform/graphql/upload.js"; // the File scalar
import { DownloadUrlRef, downloadUrl, encodeFilePath, uploadedFile, validForArg, WrittenFileRef } from "../files/graphql.js";
import { existingNodeFile, writeNodeFile } from "./files.js";
import { nodeAddress, NodeRef } from "./graphql.js";

/** Node files over GraphQL: a signed URL of GET …/nodes/{id}/files/{path}, and a multipart upload for the write. */
builder.prismaObjectField("Node", "fileUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download a file of the node's directory (its configs, disks, logs) with a plain GET",
    errors: { types: [InvalidInputError, NotFoundError, ForbiddenError] },
    args: { path: t.arg.string({ required: true, description: "The file's path inside the node directory" }), validForSeconds: validForArg(t.arg) },
    resolve: async (n, args, ctx) => {
      await existingNodeFile(ctx, n.projectId, n.id, args.path); // the route's checks now: a typed error instead of a URL that fails
      return downloadUrl(ctx, `/v2/projects/${n.projectId}/nodes/${n.id}/files/${encodeFilePath(args.path)}`, args.validForSeconds);
    },
  }),
);

const WriteNodeFileInput = builder.inputType("WriteNodeFileInput", {
  description: "A file to write into a node's directory",
  fields: (t) => ({
    nodeId: t.id({ required: true, description: "The node (its global id, or its GNS3 node_id)" }),
    path: t.string({ required: true, description: "The file's path inside the node directory; missing directories are made" }),
    file: t.field({ type: "File", required: true, description: "The file's content, sent as a multipart upload" }),
  }),
});

builder.mutationField("writeNodeFile", (t) =>
  t.field({
    type: payloadType<{ node: Node; file: { path: string; size: number } }>("writeNodeFile", "What `writeNodeFile` wrote, and into which node", (f) => ({
      node: f.field({ type: NodeRef, description: "The node: select `fileUrl(path:)` to get the file's download URL in the same answer", resolve: (p) => p.node }),
      file: f.field({ type: WrittenFileRef, description: "The file written", resolve: (p) => p.file }),
    })),
    description: "Creates or replaces a file of the node's directory (a startup config, a disk…), making its directories",
    // FORBIDDEN: a path that leaves the node directory; INVALID_INPUT (TOO_LARGE): a file beyond the upload limit.
    errors: mutationErrors("writeNodeFile", [InvalidInputError, NotFoundError, ForbiddenError]),
    args: { input: t.arg({ type: WriteNodeFileInput, required: true, description: "The node, the path and the content" }) },
    resolve: async (_r, { input }, ctx) => {
      const at = await nodeAddress(ctx, input.nodeId);
      const data = await uploadedFile(ctx, input.file);
      await writeNodeFile(ctx, at.projectId, at.id, input.path, data);
      return { node: await ctx.db.node.findUniqueOrThrow({ where: { id: at.id } }), file: { path: input.path, size: data.length } };
    },
  }),
);
