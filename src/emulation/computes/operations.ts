import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { publishControllerEvent } from "../core/events.js";
import { assertName } from "../core/names.js";
import { isUniqueViolation } from "../projects/operations.js";
import { parseInput } from "../../platform/input.js";
import { LOCAL_ID, VM_ID, localCompute, localName, remoteCompute, type Compute, type ComputeRow } from "./model.js";
import { computeChangesSchema, newComputeSchema, type ComputeChanges, type NewCompute } from "./schema.js";
import { seal, unseal } from "./secret.js";

/** The computes registry: the built-in local compute first, then the remote ones in creation order. */
export async function listComputes(ctx: AppContext): Promise<Compute[]> {
  const rows = await ctx.db.compute.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const monitor = ctx.services.emulation.computes;
  return [localCompute(ctx), ...rows.map((row) => remoteCompute(row, monitor.live(row.id)))];
}

export async function getCompute(ctx: AppContext, computeId: string): Promise<Compute> {
  if (computeId === LOCAL_ID) return localCompute(ctx);
  if (computeId === VM_ID) throw new NotFoundError("Cannot use a node on the GNS3 VM server with the GNS3 VM not configured");
  const row = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!row) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
  return remoteCompute(row, ctx.services.emulation.computes.live(row.id));
}

export async function createCompute(ctx: AppContext, raw: NewCompute): Promise<Compute> {
  const input = parseInput(newComputeSchema, raw);
  const id = input.computeId ?? randomUUID();
  if (id === LOCAL_ID) return localCompute(ctx); // GNS3 answers with the existing local compute
  if (id === VM_ID) throw new InvalidInputError(`Compute ID "${VM_ID}" is reserved for the GNS3 VM, which this server does not run`);
  const existing = await ctx.db.compute.findUnique({ where: { id } });
  if (existing) return reconnect(ctx, existing);
  const name = input.name ?? `${input.protocol}://${input.user ? `${input.user}@` : ""}${input.host}:${input.port}`;
  assertName("Compute", name);
  // One read decides: the holder of the name may be this very compute_id, created by a concurrent request
  // meanwhile (a second read could see it appear after the first missed it, and answer 409 to a re-post).
  if (name === localName()) throw nameTaken(name);
  const holder = await ctx.db.compute.findUnique({ where: { name } });
  if (holder?.id === id) return reconnect(ctx, holder);
  if (holder) throw nameTaken(name);
  let row: ComputeRow;
  try {
    row = await ctx.db.compute.create({
      data: {
        id,
        name,
        protocol: input.protocol,
        host: input.host,
        port: input.port,
        user: input.user ?? null,
        passwordSeal: input.password == null ? null : seal(ctx.config.dataDir, input.password, id),
      },
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    // A concurrent POST of the same compute_id won: this one is a re-post, answered as GNS3 does (201, reconnect).
    const raced = await ctx.db.compute.findUnique({ where: { id } });
    if (raced) return reconnect(ctx, raced);
    throw nameTaken(name);
  }
  const monitor = ctx.services.emulation.computes;
  const compute = remoteCompute(row, monitor.live(id));
  await publishControllerEvent(ctx, { type: "compute.created", compute });
  monitor.watch(row, input.password ?? null);
  return compute;
}

/** Changes the connection settings and reconnects (the compute is reported disconnected until the next poll). */
export async function updateCompute(ctx: AppContext, computeId: string, raw: ComputeChanges): Promise<Compute> {
  const { password: newPassword, ...input } = parseInput(computeChangesSchema, raw);
  if (computeId === LOCAL_ID) throw new ForbiddenError("The local compute is this server: its settings come from its configuration");
  const current = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!current) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
  if (input.name !== undefined) assertName("Compute", input.name);
  if (input.name !== undefined && input.name !== current.name) await assertNameFree(ctx, input.name);
  const data: Partial<ComputeRow> = { ...input };
  // The stored password was given for one endpoint: it never follows the compute to another host, port or protocol.
  const moved = (["host", "port", "protocol"] as const).some((k) => input[k] !== undefined && input[k] !== current[k]);
  const given = newPassword !== undefined ? newPassword : moved ? null : undefined;
  if (given !== undefined) data.passwordSeal = given === null ? null : seal(ctx.config.dataDir, given, computeId);
  const row = await uniqueName(input.name ?? current.name, () => ctx.db.compute.update({ where: { id: computeId }, data }));
  const monitor = ctx.services.emulation.computes;
  monitor.watch(row, given !== undefined ? given : password(ctx, row));
  const compute = remoteCompute(row, monitor.live(computeId));
  await publishControllerEvent(ctx, { type: "compute.updated", compute });
  return compute;
}

/** Unknown ids succeed too: GNS3 treats deletion as idempotent. Returns the deleted compute, if there was one. */
export async function deleteCompute(ctx: AppContext, computeId: string): Promise<Compute | undefined> {
  if (computeId === LOCAL_ID) throw new ForbiddenError("The local compute cannot be deleted");
  const row = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!row) return undefined;
  const { count } = await ctx.db.compute.deleteMany({ where: { id: computeId } });
  if (!count) return undefined; // deleted concurrently: that request announced it
  const monitor = ctx.services.emulation.computes;
  const compute = remoteCompute(row, monitor.live(computeId));
  monitor.unwatch(computeId);
  await publishControllerEvent(ctx, { type: "compute.deleted", compute });
  return compute;
}

function password(ctx: AppContext, row: ComputeRow): string | null {
  return row.passwordSeal ? unseal(ctx.config.dataDir, row.passwordSeal, row.id) : null;
}

/** Re-posting a known compute asks for a reconnection, as in GNS3; the other fields are not applied. */
async function reconnect(ctx: AppContext, row: ComputeRow): Promise<Compute> {
  const monitor = ctx.services.emulation.computes;
  monitor.watch(row, password(ctx, row));
  const compute = remoteCompute(row, monitor.live(row.id));
  await publishControllerEvent(ctx, { type: "compute.updated", compute });
  return compute;
}

const nameTaken = (name: string) => new ConflictError(`Compute name "${name}" already exists`, { target: "name", reason: "already_exists" });

async function assertNameFree(ctx: AppContext, name: string): Promise<void> {
  if (name === localName() || (await ctx.db.compute.findUnique({ where: { name } }))) throw nameTaken(name);
}

/** The unique index settles races between two writers choosing the same name. */
async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(name);
    throw e;
  }
}
