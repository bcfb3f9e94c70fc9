import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { AppContext } from "../../platform/context.js";
import { ForbiddenError, NotFoundError } from "../../platform/core/errors.js";
import { resolveInside } from "../files/safe-path.js";
import { getProject } from "../projects/lookup.js";
import { getNode } from "./operations.js";
import { projectDir } from "../projects/serialize.js";
import { nodeDirectory } from "../node-model/serialize.js";

/**
 * A file in a node's directory (`project-files/<type>/<node id>/<path>`). GNS3 refuses dot-leading and `/../`
 * paths outright; everything else goes through the one path resolver, which proves containment.
 */
async function nodeFile(ctx: AppContext, projectId: string, nodeId: string, userPath: string) {
  const node = await getNode(ctx, projectId, nodeId);
  const p = userPath.replaceAll("\\", "/");
  if (p.startsWith(".") || p.includes("/../")) throw new ForbiddenError("403: Forbidden");
  const root = nodeDirectory(projectDir(ctx, await getProject(ctx, projectId)), node);
  await fs.mkdir(root, { recursive: true });
  return { node, file: await resolveInside(root, p) };
}

/** The resolved path of a node file that exists (403 outside the node directory, 404 when missing). */
export async function existingNodeFile(ctx: AppContext, projectId: string, nodeId: string, userPath: string): Promise<string> {
  const { node, file } = await nodeFile(ctx, projectId, nodeId, userPath);
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) throw new NotFoundError(`GET /projects/${projectId}/files/project-files/${node.nodeType}/${nodeId}/${userPath} not found`);
  return file;
}

export async function openNodeFile(ctx: AppContext, projectId: string, nodeId: string, userPath: string): Promise<Readable> {
  return createReadStream(await existingNodeFile(ctx, projectId, nodeId, userPath));
}

/** Writes the upload to the node file, creating its directories. */
export async function writeNodeFile(ctx: AppContext, projectId: string, nodeId: string, userPath: string, body: Buffer): Promise<void> {
  const { file } = await nodeFile(ctx, projectId, nodeId, userPath);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, body);
}
