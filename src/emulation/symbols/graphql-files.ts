import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { uploadBytes } from "../../platform/graphql/upload.js";
import { DownloadUrlRef, downloadUrl, validForArg } from "../files/graphql.js";
import { NodeSymbol } from "./graphql.js";
import { SYMBOL_MAX_BYTES, uploadSymbol } from "./operations.js";

/** Symbol files over GraphQL: a signed URL of GET /v2/symbols/{id}/raw, and a multipart upload of a custom symbol. */
builder.objectField(NodeSymbol, "rawUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download the symbol's image (SVG or bitmap)",
    errors: { types: DOMAIN_ERRORS },
    args: { validFor: validForArg(t.arg) },
    resolve: (s, args, ctx) => downloadUrl(ctx, `/v2/symbols/${encodeURIComponent(s.symbol_id)}/raw`, args.validFor),
  }),
);

builder.mutationField("uploadSymbol", (t) =>
  t.field({
    type: NodeSymbol,
    description: `Stores a custom symbol nodes can be drawn with: the id's last path segment names it; at most ${SYMBOL_MAX_BYTES} bytes`,
    errors: { types: DOMAIN_ERRORS },
    args: {
      id: t.arg.id({ required: true, description: "The symbol's id (its file name)" }),
      file: t.arg({ type: "File", required: true, description: "The image (SVG, PNG …), sent as a multipart upload" }),
    },
    resolve: async (_r, args, ctx) => uploadSymbol(ctx, args.id, await uploadBytes(args.file, SYMBOL_MAX_BYTES)),
  }),
);
