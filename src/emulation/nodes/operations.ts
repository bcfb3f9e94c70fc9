import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import type { Node, Project } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import type { Tx } from "../../platform/db/client.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { withUniqueRetry } from "../../platform/db/unique-retry.js";
import { changedFields, endNodesOf, linkEndNodes, publishTopologyEvent } from "../core/events.js";
import { assertName } from "../core/names.js";
import { getOpenedProject, getProject } from "../projects/lookup.js";
import { projectDir } from "../projects/serialize.js";
import { consoleRules, isAlwaysOn, prepareProperties, startupScriptOf } from "../runtime/drivers/registry.js";
import { allocateConsolePort, assertConsoleFree, heldConsole } from "../node-model/console.js";
import { allocateNodeName } from "./naming.js";
import { defaultPortsMapping } from "../node-model/ports.js";
import { checkQemuNodeOptions, prepareQemuProperties, qemuCustomAdaptersSchema } from "../node-model/qemu-properties.js";
import { BUILTIN_TYPES, nodeDirectory, nodeProperties, nodeToRest } from "../node-model/serialize.js";
import { newNodeSchema, nodeChangesSchema, type NewNode, type NodeChanges, type NodeLabel } from "./schema.js";
import type { ConsoleType, NodeStatus } from "../node-model/vocabularies.js";

const DEFAULT_SYMBOL = ":/symbols/computer.svg";
const SYMBOL_SIZE = { width: 65, height: 59 };

/** The project directory, under the name the runtime imports it by. */
export { projectDir as projectDirectory };

/** Serialises a node for REST responses. */
export async function restNode(ctx: AppContext, node: Node) {
  return nodeToRest(node, projectDir(ctx, await getProject(ctx, node.projectId)));
}

/** "local" is the built-in compute; others must be registered. */
async function assertCompute(ctx: AppContext, computeId: string): Promise<void> {
  if (computeId === "local") return;
  if (!(await ctx.db.compute.findUnique({ where: { id: computeId } }))) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
}

/** A console port for a real console, or where GNS3 gives one all the same (a switch with console type "none"). */
const needsConsolePort = (nodeType: string, consoleType: ConsoleType | null) =>
  consoleRules(nodeType).portWithoutConsole === true || (consoleType !== null && consoleType !== "none");

/** Each node type's console types (its driver's, or GNS3's for the types this compute does not run). */
function checkConsoleType(nodeType: string, consoleType: ConsoleType | null): void {
  const allowed = consoleRules(nodeType).types;
  if (allowed && !allowed.includes(consoleType)) {
    throw new InvalidInputError(`Console type ${consoleType} is not supported by ${nodeType} nodes (allowed: ${allowed.join(", ")})`);
  }
}

/**
 * Emulator properties with rules of their own (qemu: every value reaches a command line; the types whose driver
 * prepares them: docker, cloud, nat); other types keep what they are given. `changed`: the keys a client sent (all for a
 * new node), for checks that concern only those.
 */
async function emulatorProperties(
  ctx: AppContext,
  node: { id: string; nodeType: string; computeId: string; name?: string },
  merged: Record<string, unknown>,
  changed: readonly string[] | "all",
): Promise<Record<string, unknown>> {
  return node.nodeType === "qemu" ? prepareQemuProperties(ctx, node, merged, changed) : prepareProperties(ctx, node, merged, changed);
}

function checkCustomAdapters(nodeType: string, adapters: unknown): void {
  if (nodeType === "qemu" && adapters !== undefined) parseInput(qemuCustomAdaptersSchema, adapters);
}

/** Name rules beyond the schema: spaces are dropped from a node name, so one of spaces only is empty. */
function checkName(name: string | undefined): void {
  if (name === undefined) return;
  if (!name.replaceAll(" ", "")) throw new InvalidInputError("The node name must not be empty");
  assertName("Node", name);
}

const defaultLabel = (height: number): NodeLabel => ({ style: null, x: null, y: -Math.round(height / 2 + 10), rotation: 0 });

/** On rename GNS3 counts the node's own current name as taken too (renaming PC1 to PC2 when PC2 exists gives PC3). */
async function takenNames(tx: Tx, projectId: string): Promise<Set<string>> {
  const rows = await tx.node.findMany({ where: { projectId }, select: { name: true } });
  return new Set(rows.map((r) => r.name));
}

const jsonFields = (c: NodeChanges) => ({
  ...(c.properties !== undefined && { propertiesJson: JSON.stringify(c.properties) }),
  ...(c.customAdapters !== undefined && { customAdapters: JSON.stringify(c.customAdapters) }),
  ...(c.label !== undefined && { labelJson: JSON.stringify(c.label) }),
});

const scalarFields = (c: NodeChanges) => ({
  templateId: c.templateId,
  consoleAutoStart: c.consoleAutoStart,
  symbol: c.symbol,
  x: c.x,
  y: c.y,
  z: c.z,
  locked: c.locked,
  portNameFormat: c.portNameFormat,
  portSegmentSize: c.portSegmentSize,
  firstPortName: c.firstPortName,
});

export async function createNode(ctx: AppContext, projectId: string, raw: NewNode): Promise<Node> {
  const input = parseInput(newNodeSchema, raw);
  checkName(input.name);
  const project = await getOpenedProject(ctx, projectId);
  await assertCompute(ctx, input.computeId);
  const consoleType = input.consoleType === undefined ? consoleRules(input.nodeType).default : input.consoleType;
  checkConsoleType(input.nodeType, consoleType);
  checkCustomAdapters(input.nodeType, input.customAdapters);
  const builtin = BUILTIN_TYPES.has(input.nodeType);
  const ports = defaultPortsMapping(input.nodeType);
  const id = input.nodeId ?? randomUUID();
  // A template's base script (VPCS's base_script_file) becomes the node's first startup script, as in GNS3, and is not kept.
  const startup = startupScriptOf(input.nodeType);
  const { script, rest } = startup ? startup.takeBase(input.properties ?? {}) : { script: undefined, rest: input.properties };
  const properties = await emulatorProperties(ctx, { ...input, id }, { ...(ports && { ports_mapping: ports }), ...rest }, "all");
  if (await ctx.db.node.findUnique({ where: { id } })) throw new ConflictError(`Node ID ${id} already exists`, { target: "id", reason: "already_exists" });

  const node = await withUniqueRetry(() =>
    ctx.db.$transaction(async (tx) => {
      const name = allocateNodeName(input.name, await takenNames(tx, projectId));
      let console: number | null = null;
      if (input.console != null) {
        await assertConsoleFree(tx, input.computeId, input.console);
        console = input.console;
      } else if (input.console === undefined && needsConsolePort(input.nodeType, consoleType)) {
        console = await allocateConsolePort(tx, input.computeId, ctx.config);
      }
      if (input.nodeType === "qemu") checkQemuNodeOptions({ id, name, projectId, console }, properties.options as string);
      return tx.node.create({
        data: {
          ...scalarFields(input),
          ...jsonFields({ ...input, properties, label: input.label ?? defaultLabel(SYMBOL_SIZE.height) }),
          id,
          projectId,
          computeId: input.computeId,
          nodeType: input.nodeType,
          name,
          ...heldConsole(console),
          consoleType,
          consoleHost: ctx.config.host,
          commandLine: builtin ? null : "",
          status: builtin ? "started" : "stopped",
          symbol: input.symbol ?? DEFAULT_SYMBOL,
          ...SYMBOL_SIZE,
        },
      });
    }),
  );
  let placed = input.computeId === "local" ? node : await placeRemote(ctx, node);
  const dir = projectDir(ctx, project);
  if (!builtin) await fs.mkdir(nodeDirectory(dir, placed), { recursive: true });
  if (placed.computeId === "local") placed = await provisionNew(ctx, placed, nodeDirectory(dir, placed));
  if (script !== undefined) await startup?.write(nodeDirectory(dir, placed), placed.name, script);
  await publishTopologyEvent(ctx, projectId, { type: "node.created", node: placed, projectDir: dir });
  return placed;
}

/**
 * What a new node keeps on this host (a docker node's container) is made with it, as GNS3 does; when that fails (a
 * missing image) there is no node: the row and its directory go, and the 409 says why.
 */
async function provisionNew(ctx: AppContext, node: Node, workdir: string): Promise<Node> {
  try {
    const recorded = await ctx.services.emulation.runtime.provisionNode(node, workdir);
    if (!recorded) return node;
    return await ctx.db.node.update({ where: { id: node.id }, data: { propertiesJson: JSON.stringify({ ...nodeProperties(node), ...recorded }) } });
  } catch (e) {
    await ctx.db.node.deleteMany({ where: { id: node.id } });
    ctx.services.emulation.reads.invalidate(node.projectId); // never announced: a read may have seen the row
    await fs.rm(workdir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * A changed node whose host state depends on the change (a docker node's settings or name) has it made again; when
 * that fails the node keeps its former name and properties.
 */
async function reprovision(ctx: AppContext, before: Node, after: Node, sentKeys: readonly string[]): Promise<Node> {
  // Only what really changed counts: the GUI sends every property back when its dialog is confirmed.
  const [was, now] = [nodeProperties(before), nodeProperties(after)];
  const changedKeys = sentKeys.filter((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k]));
  if (after.computeId !== "local" || (!changedKeys.length && after.name === before.name)) return after;
  const workdir = nodeDirectory(projectDir(ctx, await getProject(ctx, after.projectId)), after);
  try {
    const recorded = await ctx.services.emulation.runtime.reprovisionNode(after, workdir, changedKeys, after.name !== before.name);
    if (!recorded) return after;
    return await ctx.db.node.update({ where: { id: after.id }, data: { propertiesJson: JSON.stringify({ ...nodeProperties(after), ...recorded }) } });
  } catch (e) {
    await ctx.db.node.update({ where: { id: after.id }, data: { name: before.name, propertiesJson: before.propertiesJson } }).catch(() => {});
    // A running node was stopped to be made again: it stays stopped, and says so.
    if (after.status !== "stopped" && !ctx.services.emulation.runtime.isRunning(after.id)) await setNodeRuntimeState(ctx, after.id, { status: "stopped" }).catch(() => {});
    throw e;
  }
}

/**
 * A node for another compute is created there before it is announced, and what the compute answered is recorded
 * (its console port may differ); when the compute refuses, the row goes again.
 */
async function placeRemote(ctx: AppContext, node: Node): Promise<Node> {
  try {
    const state = await ctx.services.emulation.placement.place(node);
    return await ctx.db.node.update({ where: { id: node.id }, data: { ...state, ...(state.console !== undefined && heldConsole(state.console)) } });
  } catch (e) {
    await ctx.db.node.deleteMany({ where: { id: node.id } });
    ctx.services.emulation.reads.invalidate(node.projectId); // never announced: a read may have seen the row
    throw e;
  }
}

/** A node of an opened project (GET N, PUT N, DELETE N, node files and links). */
export async function getNode(ctx: AppContext, projectId: string, nodeId: string): Promise<Node> {
  return (await getOpenedNode(ctx, projectId, nodeId)).node;
}

/** A node of an opened project with that project, each read once (a node action needs the project's directory). */
export async function getOpenedNode(ctx: AppContext, projectId: string, nodeId: string): Promise<{ project: Project; node: Node }> {
  const project = await getOpenedProject(ctx, projectId);
  const node = await ctx.db.node.findFirst({ where: { id: nodeId, projectId } });
  if (!node) throw new NotFoundError(`Node ID ${nodeId} doesn't exist`);
  return { project, node };
}

/** All nodes of a project, opened or closed (the adapter picks the shape), in creation order. */
export async function listNodes(ctx: AppContext, projectId: string): Promise<{ project: Project; nodes: Node[] }> {
  const project = await getProject(ctx, projectId);
  const nodes = await ctx.db.node.findMany({ where: { projectId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return { project, nodes };
}

export async function updateNode(ctx: AppContext, projectId: string, nodeId: string, raw: NodeChanges): Promise<Node> {
  const changes = parseInput(nodeChangesSchema, raw);
  checkName(changes.name);
  const before = await getNode(ctx, projectId, nodeId);
  const consoleType = changes.consoleType === undefined ? (before.consoleType as ConsoleType | null) : changes.consoleType;
  if (changes.consoleType !== undefined) checkConsoleType(before.nodeType, consoleType);
  checkCustomAdapters(before.nodeType, changes.customAdapters);
  // Emulator properties merge into the current ones, as the compute merges what it is sent; an empty change
  // (the GUI sends `properties: {}` with a move) leaves them as they are.
  const properties =
    changes.properties && Object.keys(changes.properties).length
      ? await emulatorProperties(ctx, before, { ...nodeProperties(before), ...changes.properties }, Object.keys(changes.properties))
      : undefined;
  let after = await withUniqueRetry(() =>
    ctx.db.$transaction(async (tx) => {
      const name =
        changes.name === undefined || changes.name === before.name
          ? undefined
          : allocateNodeName(changes.name, await takenNames(tx, projectId));
      if (changes.console != null && changes.console !== before.console) await assertConsoleFree(tx, before.computeId, changes.console, nodeId);
      // The options' placeholders take the node's values: a new name or new options are checked together.
      if (before.nodeType === "qemu" && (name !== undefined || properties !== undefined)) {
        const options = (properties ?? nodeProperties(before)).options as string;
        checkQemuNodeOptions({ ...before, name: name ?? before.name, console: changes.console === undefined ? before.console : changes.console }, options);
      }
      return tx.node.update({
        where: { id: nodeId },
        data: {
          ...scalarFields(changes),
          ...jsonFields({ ...changes, properties }),
          ...(changes.console !== undefined && heldConsole(changes.console)),
          name,
          consoleType,
        },
      });
    }),
  );
  after = await reprovision(ctx, before, after, properties ? Object.keys(changes.properties ?? {}) : []);
  const startup = startupScriptOf(after.nodeType);
  if (startup && after.name !== before.name) {
    await startup.rename(nodeDirectory(projectDir(ctx, await getProject(ctx, projectId)), after), after.name);
  }
  await commandSettings(ctx, before, after);
  await publishIfChanged(ctx, before, after);
  return after;
}

/**
 * The compute that runs the node follows its new settings before they are announced: a device of this deployment
 * (a switch's ports mapping) on the project's runner, or the node's copy on its remote compute.
 */
async function commandSettings(ctx: AppContext, before: Node, after: Node): Promise<void> {
  const { placement, runners } = ctx.services.emulation;
  if (after.computeId !== "local") {
    await placement.settingsChanged(before, after).catch((e) => ctx.log.error("placement: settings not passed on", { node: after.id, error: String(e) }));
  } else if (isAlwaysOn(after.nodeType) && after.propertiesJson !== before.propertiesJson) {
    await runners.apply(after.projectId, { do: "reconfigureNode", nodeId: after.id, properties: nodeProperties(after) });
  }
}

export type RuntimeState = { status?: NodeStatus; commandLine?: string | null; console?: number | null; consoleHost?: string; properties?: Record<string, unknown> };

/** For the runtime: record a process state change (status, command line) and tell the project stream. */
export async function setNodeRuntimeState(ctx: AppContext, nodeId: string, state: RuntimeState): Promise<Node> {
  const before = await ctx.db.node.findUnique({ where: { id: nodeId } });
  if (!before) throw new NotFoundError(`Node ID ${nodeId} doesn't exist`);
  const after = await ctx.db.node.update({ where: { id: nodeId }, data: runtimeStateData(before, state) });
  await publishIfChanged(ctx, before, after);
  return after;
}

/** The columns a runtime state change writes; its properties are merged into those of `before`. */
export function runtimeStateData(before: Node, state: RuntimeState) {
  const { properties, ...rest } = state;
  return {
    ...rest,
    ...(state.console !== undefined && heldConsole(state.console)),
    ...(properties && { propertiesJson: JSON.stringify({ ...nodeProperties(before), ...properties }) }),
  };
}

/** node.updated when the row changed; `project` when the caller has it read already (a bulk start: one read for all). */
export async function publishIfChanged(ctx: AppContext, before: Node, after: Node, project?: Project): Promise<void> {
  const changed = changedFields(before, after);
  if (!changed.length) return;
  const dir = projectDir(ctx, project ?? (await getProject(ctx, after.projectId)));
  await publishTopologyEvent(ctx, after.projectId, { type: "node.updated", node: after, projectDir: dir, changed });
}

/** Deletes the node and, first, every link attached to it (each announced with link.deleted). */
export async function deleteNode(ctx: AppContext, projectId: string, nodeId: string): Promise<void> {
  const node = await getNode(ctx, projectId, nodeId);
  if (node.locked) throw new ConflictError(`Node ${node.name} cannot be deleted because it is locked`);
  const { links, ends } = await ctx.db.$transaction(async (tx) => {
    const attached = await tx.link.findMany({
      where: { endpoints: { some: { nodeId } } },
      include: { endpoints: { orderBy: { position: "asc" } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    // The nodes at their ends as they were (this one included): each cascaded link.deleted carries them.
    const ends = await linkEndNodes(tx, attached);
    await tx.link.deleteMany({ where: { id: { in: attached.map((l) => l.id) } } });
    await tx.node.delete({ where: { id: nodeId } });
    return { links: attached, ends };
  });
  // What ran it goes before the delete is announced: its process or device and its links' relays on the project's
  // runner, and the node on its remote compute.
  const { placement, runners } = ctx.services.emulation;
  await runners.apply(projectId, { do: "releaseNode", nodeId, nodeType: node.nodeType });
  if (node.computeId !== "local") await placement.removeNode(node);
  for (const link of links) await publishTopologyEvent(ctx, projectId, { type: "link.deleted", link, nodes: endNodesOf(link, ends) });
  const dir = projectDir(ctx, await getProject(ctx, projectId));
  await publishTopologyEvent(ctx, projectId, { type: "node.deleted", node, projectDir: dir });
}
