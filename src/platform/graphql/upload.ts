import { InvalidInputError } from "../core/errors.js";
import { builder } from "./builder.js";

/**
 * Uploads over GraphQL: the multipart request convention (a multipart/form-data POST with an `operations` part
 * holding the request, a `map` part naming the variable each file part goes to, and the file parts), which Yoga
 * reads into `File` objects. Yoga's request parser holds each file to PATCHBAY_UPLOAD_LIMIT while it arrives
 * (yoga.ts); an operation with a smaller limit checks it with `uploadBytes`, which answers a typed error.
 */
builder.scalarType("File", {
  description: "A file part of a multipart request (the GraphQL multipart request convention); input only",
  serialize: () => {
    throw new TypeError("File is an input-only scalar");
  },
  parseValue: (v) => {
    if (isFile(v)) return v;
    throw new TypeError("File must be a file part of a multipart/form-data request");
  },
});

const isFile = (v: unknown): v is File =>
  typeof v === "object" && v !== null && typeof (v as File).arrayBuffer === "function" && typeof (v as File).size === "number" && typeof (v as File).name === "string";

/** The bytes of an upload; a file larger than `limit` bytes is refused with a typed InvalidInputError. */
export async function uploadBytes(file: File, limit: number, target = "file"): Promise<Buffer> {
  if (file.size > limit) throw new InvalidInputError(`The file may not exceed ${limit} bytes`, { target, reason: "too_large" });
  return Buffer.from(await file.arrayBuffer());
}
