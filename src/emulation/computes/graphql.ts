import type { AppContext } from "../../platform/context.js";
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, UnavailableError } from "../../platform/core/errors.js";
import { builder } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { deletedPayload, idInput, mutationErrors, payloadType, refuseTakenId } from "../../platform/graphql/mutation.js";
import type { Capabilities, Compute } from "./model.js";
import { PROTOCOLS } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./operations.js";
import type { NewCompute } from "./schema.js";
import { FORWARDED_ERRORS, forwardToCompute } from "./forwarding.js";
import { computePorts, type PortUsage } from "./ports.js";
import { controllerStatistics, type ComputeStatistics } from "./statistics.js";
import type { HostStatistics } from "./usage.js";

const PROTOCOL_DOCS = { http: "Plain HTTP", https: "HTTP over TLS" } as const;
const ComputeProtocol = builder.enumType("ComputeProtocol", {
  description: "How this server talks to a compute",
  values: Object.fromEntries(PROTOCOLS.map((p) => [p.toUpperCase(), { value: p, description: PROTOCOL_DOCS[p] }])) as {
    HTTP: { value: "http"; description: string };
    HTTPS: { value: "https"; description: string };
  },
});

/** Its `nodeTypes` field is added where node types are defined (nodes/graphql.ts): computes know no node vocabulary. */
export const ComputeCapabilities = builder.objectRef<Capabilities>("ComputeCapabilities").implement({
  description: "What a compute can run, as it reported when it last answered",
  fields: (t) => ({
    version: t.string({ nullable: true, description: "Null until the compute has answered", resolve: (c) => c.version }),
    platform: t.string({ nullable: true, description: "The compute's operating system (linux, darwin, win32)", resolve: (c) => c.platform ?? null }),
  }),
});

/** The compute an argument names: its global id or its GNS3 compute_id (`local` for this server). */
export const computeIdArg = (value: string | number, target = "computeId") => domainId(value, "Compute", target);

/** A compute by its GNS3 id, or null when there is none (an edge to a compute deleted since, a `node(id:)` miss). */
export const findCompute = (ctx: AppContext, computeId: string) =>
  getCompute(ctx, computeId).catch((e: unknown) => {
    if (e instanceof NotFoundError) return null;
    throw e;
  });

export const ComputeRef = builder.node(builder.objectRef<Compute>("Compute"), {
  description: "A server that runs nodes: this server (compute id `local`) or a remote one. The password is write-only.",
  id: { description: "The compute's global id: use it for `node(id:)`, as a cache key and in arguments", resolve: (c) => c.compute_id },
  loadOne: (id, ctx) => findCompute(ctx, id),
  fields: (t) => ({
    computeId: t.exposeID("compute_id", { description: "The compute's GNS3 id (`local` for this server): the `compute_id` of the REST API and the GNS3 GUI" }),
    name: t.exposeString("name", { description: "The compute's name, for people" }),
    protocol: t.field({ type: ComputeProtocol, description: "How this server talks to the compute", resolve: (c) => c.protocol }),
    host: t.exposeString("host", { description: "The compute's address" }),
    port: t.exposeInt("port", { description: "The compute's TCP port" }),
    user: t.exposeString("user", { nullable: true, description: "The user this server logs in to the compute as, if any" }),
    connected: t.exposeBoolean("connected", { description: "Whether the compute answered its last poll" }),
    cpuUsagePercent: t.exposeFloat("cpu_usage_percent", { nullable: true, description: "The compute's CPU load at its last poll, in percent" }),
    memoryUsagePercent: t.exposeFloat("memory_usage_percent", { nullable: true, description: "The compute's memory in use at its last poll, in percent" }),
    lastError: t.exposeString("last_error", { nullable: true, description: "Why the compute last failed to answer, if it did" }),
    capabilities: t.field({ type: ComputeCapabilities, description: "What the compute can run", resolve: (c) => c.capabilities }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The connection fields, shared by both inputs: required on create, optional on update. */
const fields = (required: boolean) => (t: PothosSchemaTypes.InputFieldBuilder<Types, "InputObject">) => ({
  name: t.string({ required: false, description: "A name for people (defaults to the address)" }),
  protocol: t.field({ type: ComputeProtocol, required, description: "How this server talks to the compute" }),
  host: t.string({ required, description: "The compute's address" }),
  port: t.int({ required, description: "The compute's TCP port" }),
  user: t.string({ required: false, description: "The user to log in to the compute as" }),
  password: t.string({ required: false, description: "Write-only: stored sealed, never returned" }),
});

const CreateComputeInput = builder.inputType("CreateComputeInput", {
  description: "A remote server to run nodes on: where it is and how to log in",
  fields: (t) => ({ id: t.id({ required: false, description: "Chosen GNS3 compute id; a taken one is refused (ALREADY_EXISTS); chosen by the server when absent" }), ...fields(true)(t) }),
});
const UpdateComputeInput = builder.inputType("UpdateComputeInput", {
  description: "A remote compute and changes to it: only the fields given change; password null removes it",
  fields: (t) => ({ id: t.id({ required: true, description: "The compute (its global id, or its GNS3 compute_id)" }), ...fields(false)(t) }),
});
const computeInput = (name: string) => idInput(name, `The compute \`${name}\` acts on`, "The compute's id (its global id, or its GNS3 compute_id)");

/** GraphQL input onto the compute's input contract; absent stays absent, null stays null (the operation parses it). */
const toOperationInput = (input: Record<string, unknown>) => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as NewCompute;

const ComputePayload = (name: string, what = "the compute") =>
  payloadType<{ compute: Compute }>(name, `What \`${name}\` changed: ${what}`, (t) => ({
    compute: t.field({ type: ComputeRef, description: "The compute as it is now", resolve: (p) => p.compute }),
  }));

/** What registering or changing a compute can fail with: bad input, a missing compute, a taken id or name, the local compute. */
const COMPUTE_ERRORS = [InvalidInputError, NotFoundError, ConflictError, ForbiddenError];

builder.queryFields((t) => ({
  computes: t.connection(
    { type: ComputeRef, description: "The computes: this host (local) and the remote ones registered", resolve: async (_r, args, ctx) => arrayPage(args, await listComputes(ctx)) },
    arrayConnectionOptions,
  ),
  compute: t.field({
    type: ComputeRef,
    nullable: true,
    description: lookupDescription("One compute"),
    args: { id: t.arg.id({ required: true, description: "The compute's id (its global id, or its GNS3 compute_id: `local` for this server)" }) },
    resolve: (_r, args, ctx) => orNull(() => getCompute(ctx, computeIdArg(args.id, "id"))),
  }),
}));

builder.mutationFields((t) => ({
  createCompute: t.field({
    type: ComputePayload("createCompute", "the new compute"),
    description: "Registers a remote compute to run nodes on",
    errors: mutationErrors("createCompute", [InvalidInputError, ConflictError]),
    args: { input: t.arg({ type: CreateComputeInput, required: true, description: "The compute" }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...rest } = input;
      const computeId = id == null ? undefined : computeIdArg(id, "id");
      await refuseTakenId("Compute", computeId, (id) => findCompute(ctx, id));
      return { compute: await createCompute(ctx, { ...toOperationInput(rest), ...(computeId && { computeId }) }) };
    },
  }),
  updateCompute: t.field({
    type: ComputePayload("updateCompute"),
    description: "Changes where a remote compute is or how to log in to it (it reconnects)",
    errors: mutationErrors("updateCompute", COMPUTE_ERRORS),
    args: { input: t.arg({ type: UpdateComputeInput, required: true, description: "The compute and the changes" }) },
    resolve: async (_r, { input }, ctx) => {
      const { id, ...changes } = input;
      return { compute: await updateCompute(ctx, computeIdArg(id, "id"), toOperationInput(changes)) };
    },
  }),
  deleteCompute: t.field({
    type: deletedPayload("deleteCompute", "the compute (the nodes it ran stay in their projects)"),
    description: "Unregisters a remote compute; one that does not exist is a NotFoundError",
    errors: mutationErrors("deleteCompute", [InvalidInputError, NotFoundError, ForbiddenError]),
    args: { input: t.arg({ type: computeInput("deleteCompute"), required: true, description: "The compute" }) },
    resolve: async (_r, { input }, ctx) => {
      const computeId = computeIdArg(input.id, "id");
      // GNS3's REST delete of an unknown compute succeeds; GraphQL says it was not there, as every delete does.
      if (!(await deleteCompute(ctx, computeId))) throw new NotFoundError(`Compute ID ${computeId} doesn't exist`);
      return { deletedIds: [globalId("Compute", computeId)] };
    },
  }),
}));

const HostStatisticsRef = builder.objectRef<HostStatistics>("HostStatistics").implement({
  description: "A host's load: CPU, memory, swap and disk",
  fields: (t) => ({
    cpuUsagePercent: t.exposeFloat("cpu_usage_percent", { description: "CPU in use, in percent of all CPUs" }),
    memoryUsagePercent: t.exposeFloat("memory_usage_percent", { description: "Memory in use, in percent" }),
    memoryTotalBytes: t.exposeFloat("memory_total", { description: "Memory, in bytes" }),
    memoryFreeBytes: t.exposeFloat("memory_free", { description: "Memory free, in bytes" }),
    memoryUsedBytes: t.exposeFloat("memory_used", { description: "Memory in use, in bytes" }),
    swapTotalBytes: t.exposeFloat("swap_total", { description: "Swap space, in bytes" }),
    swapFreeBytes: t.exposeFloat("swap_free", { description: "Swap space free, in bytes" }),
    swapUsedBytes: t.exposeFloat("swap_used", { description: "Swap space in use, in bytes" }),
    swapUsagePercent: t.exposeFloat("swap_usage_percent", { description: "Swap space in use, in percent" }),
    diskUsagePercent: t.exposeFloat("disk_usage_percent", { description: "Disk space in use where projects are kept, in percent" }),
    loadAveragePercent: t.exposeIntList("load_average_percent", { description: "The load average over 1, 5 and 15 minutes per CPU, in percent (100: as many runnable tasks as CPUs)" }),
  }),
});
const ComputeStatisticsRef = builder.objectRef<ComputeStatistics>("ComputeStatistics").implement({
  description: "The load of one compute",
  fields: (t) => ({
    compute: t.field({ type: ComputeRef, description: "The compute measured", resolve: (s, _a, ctx) => getCompute(ctx, s.compute_id) }),
    statistics: t.field({ type: HostStatisticsRef, description: "Its load", resolve: (s) => s.statistics }),
  }),
});
const PortUsageRef = builder.objectRef<PortUsage>("ComputePortUsage").implement({
  description: "A compute's port ranges and the ports reserved in them",
  fields: (t) => ({
    consolePortRange: t.exposeIntList("console_port_range", { description: "The TCP ports node consoles are given from: [first, last]" }),
    consolePorts: t.exposeIntList("console_ports", { description: "The TCP console ports in use" }),
    udpPortRange: t.exposeIntList("udp_port_range", { description: "The UDP ports link tunnels are given from: [first, last]" }),
    udpPorts: t.exposeIntList("udp_ports", { description: "The UDP tunnel ports in use" }),
  }),
});

const ForwardMethod = builder.enumType("ComputeForwardMethod", {
  description: "The HTTP method a call passed through to a compute uses",
  values: { POST: { description: "Create or act (POST)" }, PUT: { description: "Change (PUT)" } },
});
/** What names a call passed through to a compute (the compute-API path after /v2/compute/{emulator}/; segments kept as given, the operation encodes them). */
const FORWARD_DOCS = {
  computeId: "The compute to call (its global id, or its GNS3 compute_id)",
  emulator: "qemu, docker, vpcs …",
  path: "What follows /v2/compute/{emulator}/ on the compute",
} as const;

builder.queryFields((t) => ({
  computeStatistics: t.field({
    type: [ComputeStatisticsRef],
    description: "This host measured now and each connected remote compute as of its last poll",
    resolve: (_r, _a, ctx) => controllerStatistics(ctx),
  }),
  computePorts: t.field({
    type: PortUsageRef,
    description: "A compute's console and UDP port ranges and the ports in use in them",
    // A remote compute's answer other than 404 is a ConflictError (computeJson), its silence an UnavailableError.
    errors: { types: [InvalidInputError, NotFoundError, ConflictError, UnavailableError] },
    args: { computeId: t.arg.id({ required: true, description: "The compute (its global id, or its GNS3 compute_id)" }) },
    resolve: (_r, args, ctx) => computePorts(ctx, computeIdArg(args.computeId)),
  }),
  computeResource: t.field({
    type: "JSON",
    nullable: true,
    description: "A read passed through to a compute's own API (/v2/compute/{emulator}/{path}), for what this schema does not type; its errors mapped as GNS3's controller maps them",
    errors: { types: FORWARDED_ERRORS, directResult: false },
    args: {
      computeId: t.arg.id({ required: true, description: FORWARD_DOCS.computeId }),
      emulator: t.arg.string({ required: true, description: FORWARD_DOCS.emulator }),
      path: t.arg.string({ required: true, description: FORWARD_DOCS.path }),
    },
    resolve: (_r, a, ctx) => forwardToCompute(ctx, computeIdArg(a.computeId), "GET", a.emulator, a.path),
  }),
}));

const ForwardToComputeInput = builder.inputType("ForwardToComputeInput", {
  description: "A POST or PUT to pass through to a compute's own API, for what this schema does not type",
  fields: (t) => ({
    computeId: t.id({ required: true, description: FORWARD_DOCS.computeId }),
    emulator: t.string({ required: true, description: FORWARD_DOCS.emulator }),
    path: t.string({ required: true, description: FORWARD_DOCS.path }),
    method: t.field({ type: ForwardMethod, required: true, description: "The HTTP method" }),
    body: t.field({ type: "JSON", description: "The JSON body to send (none when omitted)" }),
  }),
});

builder.mutationField("forwardToCompute", (t) =>
  t.field({
    type: payloadType<{ response: unknown }>("forwardToCompute", "What the compute answered a call passed through to it", (f) => ({
      response: f.field({ type: "JSON", nullable: true, description: "The compute's JSON answer (null when it answered with no body)", resolve: (p) => p.response ?? null }),
    })),
    description: "POST or PUT passed through to the compute's /v2/compute/{emulator}/{path} with a JSON body; its errors mapped as GNS3's controller maps them",
    errors: mutationErrors("forwardToCompute", FORWARDED_ERRORS),
    args: { input: t.arg({ type: ForwardToComputeInput, required: true, description: "The compute, the path, the method and the body" }) },
    resolve: async (_r, { input: a }, ctx) => {
      const body = a.body === undefined || a.body === null ? undefined : Buffer.from(JSON.stringify(a.body));
      return { response: await forwardToCompute(ctx, computeIdArg(a.computeId), a.method, a.emulator, a.path, body, body ? "application/json" : undefined) };
    },
  }),
);
