import type { ArgBuilder } from "@pothos/core";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import type { Capabilities, Compute } from "./model.js";
import { PROTOCOLS } from "./schema.js";
import { createCompute, deleteCompute, getCompute, listComputes, updateCompute } from "./operations.js";
import type { NewCompute } from "./schema.js";
import { forwardToCompute } from "./forwarding.js";
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

export const ComputeRef = builder.objectRef<Compute>("Compute").implement({
  description: "A server that runs nodes: this server (id local) or a remote one. The password is write-only.",
  fields: (t) => ({
    id: t.exposeString("compute_id", { description: "The compute's id (`local` for this server)" }),
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
  fields: (t) => ({ id: t.id({ required: false, description: "Chosen by the server when absent" }), ...fields(true)(t) }),
});
const UpdateComputeInput = builder.inputType("UpdateComputeInput", {
  description: "Only the fields given change; password null removes it",
  fields: fields(false),
});

/** GraphQL input onto the compute's input contract; absent stays absent, null stays null (the operation parses it). */
function toOperationInput(input: Record<string, unknown>) {
  const { id, ...rest } = input;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (id != null) out.computeId = id;
  return out as NewCompute;
}

builder.queryFields((t) => ({
  computes: t.connection(
    { type: ComputeRef, description: "The computes: this host (local) and the remote ones registered", resolve: async (_r, args, ctx) => arrayPage(args, await listComputes(ctx)) },
    arrayConnectionOptions,
  ),
  compute: t.field({
    type: ComputeRef,
    description: "One compute",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The compute's id (`local` for this server)" }) },
    resolve: (_r, args, ctx) => getCompute(ctx, args.id),
  }),
}));

builder.mutationFields((t) => ({
  createCompute: t.field({
    type: ComputeRef,
    description: "Registers a remote compute to run nodes on",
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: CreateComputeInput, required: true, description: "The compute" }) },
    resolve: (_r, args, ctx) => createCompute(ctx, toOperationInput(args.input)),
  }),
  updateCompute: t.field({
    type: ComputeRef,
    description: "Changes where a remote compute is or how to log in to it; the changed compute",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The compute's id" }), input: t.arg({ type: UpdateComputeInput, required: true, description: "The changes" }) },
    resolve: (_r, args, ctx) => updateCompute(ctx, args.id, toOperationInput(args.input)),
  }),
  deleteCompute: t.field({
    type: "Boolean",
    description: "True when a compute was deleted, false when there was none with this id",
    errors: { types: DOMAIN_ERRORS },
    args: { id: t.arg.id({ required: true, description: "The compute's id" }) },
    resolve: async (_r, args, ctx) => Boolean(await deleteCompute(ctx, args.id)),
  }),
}));

const HostStatisticsRef = builder.objectRef<HostStatistics>("HostStatistics").implement({
  description: "A host's load: CPU, memory, swap and disk",
  fields: (t) => ({
    cpuUsagePercent: t.exposeFloat("cpu_usage_percent", { description: "CPU in use, in percent of all CPUs" }),
    memoryUsagePercent: t.exposeFloat("memory_usage_percent", { description: "Memory in use, in percent" }),
    memoryTotal: t.exposeFloat("memory_total", { description: "Memory, in bytes" }),
    memoryFree: t.exposeFloat("memory_free", { description: "Memory free, in bytes" }),
    memoryUsed: t.exposeFloat("memory_used", { description: "Memory in use, in bytes" }),
    swapTotal: t.exposeFloat("swap_total", { description: "Swap space, in bytes" }),
    swapFree: t.exposeFloat("swap_free", { description: "Swap space free, in bytes" }),
    swapUsed: t.exposeFloat("swap_used", { description: "Swap space in use, in bytes" }),
    swapUsagePercent: t.exposeFloat("swap_usage_percent", { description: "Swap space in use, in percent" }),
    diskUsagePercent: t.exposeFloat("disk_usage_percent", { description: "Disk space in use where projects are kept, in percent" }),
    loadAveragePercent: t.exposeIntList("load_average_percent", { description: "1, 5 and 15 minutes, per CPU" }),
  }),
});
const ComputeStatisticsRef = builder.objectRef<ComputeStatistics>("ComputeStatistics").implement({
  description: "The load of one compute",
  fields: (t) => ({
    computeId: t.exposeString("compute_id", { description: "The compute's id" }),
    computeName: t.exposeString("compute_name", { description: "The compute's name" }),
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
/** The compute-API path after /v2/compute/{emulator}/ (segments kept as given; the operation encodes them). */
const forwardArgs = (t: ArgBuilder<Types>) => ({
  computeId: t.id({ required: true, description: "The compute to call" }),
  emulator: t.string({ required: true, description: "qemu, docker, vpcs …" }),
  path: t.string({ required: true, description: "What follows /v2/compute/{emulator}/ on the compute" }),
});

builder.queryFields((t) => ({
  computeStatistics: t.field({
    type: [ComputeStatisticsRef],
    description: "This host measured now and each connected remote compute as of its last poll",
    resolve: (_r, _a, ctx) => controllerStatistics(ctx),
  }),
  computePorts: t.field({
    type: PortUsageRef,
    description: "A compute's console and UDP port ranges and the ports in use in them",
    errors: { types: DOMAIN_ERRORS },
    args: { computeId: t.arg.id({ required: true, description: "The compute's id" }) },
    resolve: (_r, args, ctx) => computePorts(ctx, args.computeId),
  }),
  computeResource: t.field({
    type: "JSON",
    nullable: true,
    description: "A read passed through to a compute's own API (/v2/compute/{emulator}/{path}), for what this schema does not type; its errors mapped as GNS3's controller maps them",
    errors: { types: DOMAIN_ERRORS },
    args: forwardArgs(t.arg),
    resolve: (_r, a, ctx) => forwardToCompute(ctx, a.computeId, "GET", a.emulator, a.path),
  }),
}));

builder.mutationField("forwardToCompute", (t) =>
  t.field({
    type: "JSON",
    nullable: true,
    description: "POST or PUT passed through to the compute's /v2/compute/{emulator}/{path} with a JSON body",
    errors: { types: DOMAIN_ERRORS },
    args: {
      ...forwardArgs(t.arg),
      method: t.arg({ type: ForwardMethod, required: true, description: "The HTTP method" }),
      body: t.arg({ type: "JSON", description: "The JSON body to send (none when omitted)" }),
    },
    resolve: (_r, a, ctx) => {
      const body = a.body === undefined || a.body === null ? undefined : Buffer.from(JSON.stringify(a.body));
      return forwardToCompute(ctx, a.computeId, a.method, a.emulator, a.path, body, body ? "application/json" : undefined);
    },
  }),
);
