import { builder } from "../../platform/graphql/builder.js";
import { parseBytes } from "../../platform/bytes.js";
import type { AppContext } from "../../platform/context.js";
import { InvalidInputError } from "../../platform/core/errors.js";
import { uploadBytes } from "../../platform/graphql/upload.js";
import { MAX_VALIDITY_SECONDS, signUrl, type SignedUrl } from "../../platform/http/signed-url.js";

/**
 * The GraphQL face of files and archives, shared by the resources that have them: downloads are signed URLs of
 * the REST routes (served by the same code, never file content in JSON), uploads are multipart `File`s held to
 * the upload limit.
 */
export const DownloadUrlRef = builder.objectRef<SignedUrl>("DownloadUrl").implement({
  description:
    "A short-lived URL that downloads one thing with a GET, without other credentials: relative to this server's address, valid until expiresAt and only for its own path and query",
  fields: (t) => ({
    url: t.exposeString("url", { description: "The URL to GET, relative to this server's address (it carries its own signature)" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", description: "When the URL stops working" }),
  }),
});

const DEFAULT_VALIDITY_SECONDS = 300;

type ArgBuilder = Parameters<Parameters<typeof builder.queryField>[1]>[0]["arg"];
/** The `validForSeconds` argument of every download field. */
export const validForArg = (arg: ArgBuilder) =>
  arg.int({ required: true, defaultValue: DEFAULT_VALIDITY_SECONDS, description: `Seconds the URL stays valid (1-${MAX_VALIDITY_SECONDS})` });

/** A signed URL for `pathAndQuery` (a REST route, percent-encoded). */
export function downloadUrl(ctx: AppContext, pathAndQuery: string, validForSeconds: number): SignedUrl {
  if (!Number.isInteger(validForSeconds) || validForSeconds < 1 || validForSeconds > MAX_VALIDITY_SECONDS) {
    throw new InvalidInputError(`validForSeconds must be 1-${MAX_VALIDITY_SECONDS} seconds`, { target: "validForSeconds" });
  }
  return signUrl(ctx.config.urlSecret, pathAndQuery, validForSeconds);
}

/** A file path as the tail of a REST files route: each segment percent-encoded (the route decodes the tail once). */
export const encodeFilePath = (userPath: string) => userPath.split("/").map(encodeURIComponent).join("/");

/** The bytes of a project, node or archive upload, held to PATCHBAY_UPLOAD_LIMIT as REST holds them. */
export const uploadedFile = (ctx: AppContext, file: File) => uploadBytes(file, parseBytes(ctx.config.uploadLimit));

/** What a file write answers: the path written and its size. */
export const WrittenFileRef = builder.objectRef<{ path: string; size: number }>("WrittenFile").implement({
  description: "A file that was written: where, and how large",
  fields: (t) => ({
    path: t.exposeString("path", { description: "The file's path, as given" }),
    sizeBytes: t.field({ type: "BigInt", description: "Bytes written", resolve: (f) => f.size }),
  }),
});
