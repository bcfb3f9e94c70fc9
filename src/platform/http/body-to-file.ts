import { createWriteStream } from "node:fs";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { InvalidInputError, PayloadTooLargeError } from "../core/errors.js";

export interface BodyToFile {
  /** Most bytes accepted; more is a 413 with `tooLarge` as its message. */
  limit: number;
  tooLarge: string;
  /** The 400's message when the client leaves mid-body. */
  interrupted: string;
  /** Sees every chunk written (a checksum). */
  onChunk?: (chunk: Buffer) => void;
}

/**
 * Writes a request body to a new file (0600; `wx`: never over an existing one) and returns its size. On a refusal
 * the rest of the body is read and dropped, so the client's connection carries the answer and the next request
 * (destroying the body would reset it before the 413 is read). The file is the caller's to remove on failure.
 */
export async function writeBodyToFile(body: Readable, file: string, o: BodyToFile): Promise<number> {
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > o.limit) return done(new PayloadTooLargeError(o.tooLarge));
      o.onChunk?.(chunk);
      done(null, chunk);
    },
  });
  // Piped rather than part of the pipeline: a refusal must not destroy the body.
  const written = pipeline(meter, createWriteStream(file, { flags: "wx", mode: 0o600 }));
  // A client that leaves mid-body ("aborted") made no server error: both ways of ending early are its mistake.
  const interrupted = () => meter.destroy(new InvalidInputError(o.interrupted));
  body.on("error", interrupted);
  body.on("close", () => body.readableEnded || interrupted());
  body.pipe(meter);
  try {
    await written;
    return size;
  } catch (e) {
    if (!body.readableEnded && !body.destroyed) body.unpipe(meter).resume();
    throw e;
  }
}
