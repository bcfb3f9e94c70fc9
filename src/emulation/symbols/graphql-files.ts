import { InvalidInputError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { uploadBytes } from "../../platform/graphql/upload.js";
import { DownloadUrlRef, downloadUrl, validForArg } from "../files/graphql.js";
import { NodeSymbol } from "./graphql.js";
import { SYMBOL_MAX_BYTES, uploadSymbol, type SymbolEntry } from "./operations.js";

/** Symbol files over GraphQL: a signed URL of GET /v2/symbols/{id}/raw, and a multipart upload of a custom symbol. */
builder.objectField(NodeSymbol, "rawUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description: "A short-lived URL to download the symbol's image (SVG or bitmap)",
    errors: { types: [InvalidInputError] },
    args: { validForSeconds: validForArg(t.arg) },
    resolve: (s, args, ctx) => downloadUrl(ctx, `/v2/symbols/${encodeURIComponent(s.symbol_id)}/raw`, args.validForSeconds),
  }),
);

const UploadSymbolInput = builder.inputType("UploadSymbolInput", {
  description: "A custom symbol's image and the id it is stored under",
  fields: (t) => ({
    id: t.id({ required: true, description: "The symbol's id (its file name: the last path segment is kept)" }),
    file: t.field({ type: "File", required: true, description: "The image (SVG, PNG …), sent as a multipart upload (its variable mapped to `input.file`)" }),
  }),
});

builder.mutationField("uploadSymbol", (t) =>
  t.field({
    type: payloadType<{ symbol: SymbolEntry }>("uploadSymbol", "What `uploadSymbol` stored: the symbol", (f) => ({
      symbol: f.field({ type: NodeSymbol, description: "The custom symbol, as `symbols` lists it", resolve: (p) => p.symbol }),
    })),
    description: `Stores a custom symbol nodes can be drawn with: the id's last path segment names it; at most ${SYMBOL_MAX_BYTES} bytes`,
    errors: mutationErrors("uploadSymbol", [InvalidInputError]),
    args: { input: t.arg({ type: UploadSymbolInput, required: true, description: "The symbol's id and image" }) },
    resolve: async (_r, { input }, ctx) => ({ symbol: await uploadSymbol(ctx, input.id, await uploadBytes(input.file, SYMBOL_MAX_BYTES)) }),
  }),
);
