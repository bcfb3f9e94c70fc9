import type { Node } from "../../generated/prisma-sqlite/client.js";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import type { LinkWithEndpoints } from "../links/serialize.js";
import { bulkNodeAction, type NodeAction, nodeAction, startLinkCapture, stopLinkCapture } from "./operations.js";
import type { DataLinkType } from "./pcap.js";
import "./packets-graphql.js";

/**
 * GraphQL face of the local compute: node lifecycle and packet capture. The results describe the runtime side
 * of a node or link (status, command line, console; capture file); the full node and link types belong to the
 * nodes and links modules.
 */
const NodeRunStatus = builder.enumType("NodeRunStatus", {
  description: "Whether the node's emulator is running",
  values: { STARTED: { value: "started" }, STOPPED: { value: "stopped" }, SUSPENDED: { value: "suspended" } } as const,
});

const NodeLifecycleAction = builder.enumType("NodeLifecycleAction", {
  values: { START: { value: "start" }, STOP: { value: "stop" }, SUSPEND: { value: "suspend" }, RELOAD: { value: "reload" } } as const,
});

const CaptureDataLinkType = builder.enumType("CaptureDataLinkType", {
  description: "Link-layer header type written into the pcap file",
  values: {
    EN10MB: { value: "DLT_EN10MB", description: "Ethernet (default)" },
    ATM_RFC1483: { value: "DLT_ATM_RFC1483" },
    FRELAY: { value: "DLT_FRELAY" },
    C_HDLC: { value: "DLT_C_HDLC" },
    PPP_SERIAL: { value: "DLT_PPP_SERIAL" },
  } as const,
});

const NodeRunState = builder.objectRef<Node>("NodeRunState").implement({
  description: "A node as the compute runs it",
  fields: (t) => ({
    nodeId: t.exposeString("id"),
    projectId: t.exposeString("projectId"),
    name: t.exposeString("name"),
    nodeType: t.exposeString("nodeType"),
    status: t.field({ type: NodeRunStatus, resolve: (n) => n.status as "started" | "stopped" | "suspended" }),
    commandLine: t.exposeString("commandLine", { nullable: true, description: "The emulator's command line once started" }),
    console: t.exposeInt("console", { nullable: true }),
    consoleHost: t.exposeString("consoleHost", { nullable: true }),
    consoleType: t.exposeString("consoleType", { nullable: true }),
  }),
});

const LinkCaptureState = builder.objectRef<LinkWithEndpoints>("LinkCaptureState").implement({
  description: "The packet capture of a link",
  fields: (t) => ({
    linkId: t.exposeString("id"),
    projectId: t.exposeString("projectId"),
    capturing: t.exposeBoolean("capturing"),
    fileName: t.exposeString("captureFileName", { nullable: true, description: "Kept after the capture stops" }),
    filePath: t.exposeString("captureFilePath", { nullable: true }),
    computeId: t.exposeString("captureComputeId", { nullable: true, description: "Set while capturing" }),
  }),
});

const nodeMutation = (action: NodeAction, description: string) =>
  builder.mutationField(`${action}Node`, (t) =>
    t.field({
      type: NodeRunState,
      description,
      errors: { types: DOMAIN_ERRORS },
      args: { projectId: t.arg.string({ required: true }), nodeId: t.arg.string({ required: true }) },
      resolve: (_r, a, ctx) => nodeAction(ctx, a.projectId, a.nodeId, action),
    }),
  );

nodeMutation("start", "Starts the node's emulator; ConflictError names what this host lacks for node types it cannot run");
nodeMutation("stop", "Stops the node's emulator (a no-op for always-running hubs and switches)");
nodeMutation("suspend", "Suspends the node (VPCS cannot be suspended: accepted, nothing changes)");
nodeMutation("reload", "Stops then starts the node");

builder.mutationField("projectNodesAction", (t) =>
  t.field({
    type: "Boolean",
    description: "Runs the action on every node of the project, three at a time (reload = stop all, then start all)",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.string({ required: true }), action: t.arg({ type: NodeLifecycleAction, required: true }) },
    resolve: async (_r, a, ctx) => {
      await bulkNodeAction(ctx, a.projectId, a.action);
      return true;
    },
  }),
);

builder.mutationFields((t) => ({
  startCapture: t.field({
    type: LinkCaptureState,
    description: "Starts capturing the link's traffic into <project>/project-files/captures/<fileName>",
    errors: { types: DOMAIN_ERRORS },
    args: {
      projectId: t.arg.string({ required: true }),
      linkId: t.arg.string({ required: true }),
      fileName: t.arg.string({ required: false, description: "Default: <node1>_<a>-<p>_to_<node2>_<a>-<p>.pcap" }),
      dataLinkType: t.arg({ type: CaptureDataLinkType, required: false }),
    },
    resolve: (_r, a, ctx) =>
      startLinkCapture(ctx, a.projectId, a.linkId, {
        captureFileName: a.fileName ?? undefined,
        dataLinkType: (a.dataLinkType ?? undefined) as DataLinkType | undefined,
      }),
  }),
  stopCapture: t.field({
    type: LinkCaptureState,
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.string({ required: true }), linkId: t.arg.string({ required: true }) },
    resolve: (_r, a, ctx) => stopLinkCapture(ctx, a.projectId, a.linkId),
  }),
}));
