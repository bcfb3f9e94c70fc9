import { randomUUID } from "node:crypto";
import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "../../platform/errors.js";
import { publishControllerEvent } from "../events.js";
import { parseInput } from "../server/input.js";
import { LOCAL_ID, VM_ID, localCompute, localName, remoteCompute, type Compute, type ComputeRow } from "./model.js";
import { computeMonitor } from "./monitor.js";
import { computeCreateSchema, computeUpdateSchema } from "./schema.js";
import { seal, unseal } from "./secret.js";

/** The computes registry: the built-in local compute first, then the remote ones in creation order. */
export async function listComputes(ctx: AppContext): Promise<Compute[]> {
  const rows = await ctx.db.compute.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const monitor = computeMonitor(ctx);
  return [localCompute(ctx), ...rows.map((row) => remoteCompute(row, monitor.live(row.id)))];
}

export async function getCompute(ctx: AppContext, computeId: string): Promise<Compute> {
  if (computeId === LOCAL_ID) return localCompute(ctx);
  if (computeId === VM_ID) throw new NotFoundError("Cannot use a node on the GNS3 VM server with the GNS3 VM not configured");
  const row = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!row) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
  return remoteCompute(row, computeMonitor(ctx).live(row.id));
}

export async function createCompute(ctx: AppContext, raw: unknown): Promise<Compute> {
  const input = parseInput(computeCreateSchema, raw);
  const id = input.compute_id ?? randomUUID();
  if (id === LOCAL_ID) return localCompute(ctx); // GNS3 answers with the existing local compute
  if (id === VM_ID) throw new InvalidInputError(`Compute ID "${VM_ID}" is reserved for the GNS3 VM, which this server does not run`);
  const existing = await ctx.db.compute.findUnique({ where: { id } });
  if (existing) {
    // Re-posting a known compute asks for a reconnection, as in GNS3; the other fields are not applied.
    const monitor = computeMonitor(ctx);
    monitor.watch(existing, password(ctx, existing));
    const compute = remoteCompute(existing, monitor.live(id));
    await publishControllerEvent(ctx, "compute.updated", compute);
    return compute;
  }
  const name = input.name ?? `${input.protocol}://${input.user ? `${input.user}@` : ""}${input.host}:${input.port}`;
  await assertNameFree(ctx, name);
  const row = await uniqueName(name, () =>
    ctx.db.compute.create({
      data: {
        id,
        name,
        protocol: input.protocol,
        host: input.host,
        port: input.port,
        user: input.user ?? null,
        passwordSeal: input.password == null ? null : seal(ctx.config.dataDir, input.password, id),
      },
    }),
  );
  const monitor = computeMonitor(ctx);
  const compute = remoteCompute(row, monitor.live(id));
  await publishControllerEvent(ctx, "compute.created", compute);
  monitor.watch(row, input.password ?? null);
  return compute;
}

/** Changes the connection settings and reconnects (the compute is reported disconnected until the next poll). */
export async function updateCompute(ctx: AppContext, computeId: string, raw: unknown): Promise<Compute> {
  const { compute_id: _ignored, password: newPassword, ...input } = parseInput(computeUpdateSchema, raw);
  if (computeId === LOCAL_ID) throw new ForbiddenError("The local compute is this server: its settings come from its configuration");
  const current = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!current) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
  if (input.name !== undefined && input.name !== current.name) await assertNameFree(ctx, input.name);
  const data: Partial<ComputeRow> = { ...input };
  if (newPassword !== undefined) data.passwordSeal = newPassword === null ? null : seal(ctx.config.dataDir, newPassword, computeId);
  const row = await uniqueName(input.name ?? current.name, () => ctx.db.compute.update({ where: { id: computeId }, data }));
  const monitor = computeMonitor(ctx);
  monitor.watch(row, newPassword !== undefined ? newPassword : password(ctx, row));
  const compute = remoteCompute(row, monitor.live(computeId));
  await publishControllerEvent(ctx, "compute.updated", compute);
  return compute;
}

/** Unknown ids succeed too: GNS3 treats deletion as idempotent. Returns the deleted compute, if there was one. */
export async function deleteCompute(ctx: AppContext, computeId: string): Promise<Compute | undefined> {
  if (computeId === LOCAL_ID) throw new ForbiddenError("The local compute cannot be deleted");
  const row = await ctx.db.compute.findUnique({ where: { id: computeId } });
  if (!row) return undefined;
  const { count } = await ctx.db.compute.deleteMany({ where: { id: computeId } });
  if (!count) return undefined; // deleted concurrently: that request announced it
  const monitor = computeMonitor(ctx);
  const compute = remoteCompute(row, monitor.live(computeId));
  monitor.unwatch(computeId);
  await publishControllerEvent(ctx, "compute.deleted", compute);
  return compute;
}

function password(ctx: AppContext, row: ComputeRow): string | null {
  return row.passwordSeal ? unseal(ctx.config.dataDir, row.passwordSeal, row.id) : null;
}

async function assertNameFree(ctx: AppContext, name: string): Promise<void> {
  if (name === localName() || (await ctx.db.compute.findUnique({ where: { name } }))) {
    throw new ConflictError(`Compute name "${name}" already exists`);
  }
}

/** The unique index settles races between two writers choosing the same name. */
async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if ((e as { code?: string }).code === "P2002") throw new ConflictError(`Compute name "${name}" already exists`);
    throw e;
  }
}
