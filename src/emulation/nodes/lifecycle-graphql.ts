import type { Node } from "../../generated/prisma-sqlite/client.js";
import type { AppContext } from "../../platform/context.js";
import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { ConsoleTypeEnum, NodeStatusEnum, NodeTypeEnum } from "./graphql.js";
import type { ConsoleType, NodeStatus, NodeType } from "../node-model/vocabularies.js";
import { projectNodesAction, reloadNode, startNode, stopNode, suspendNode } from "./lifecycle.js";

/** GraphQL face of the node lifecycle: the result describes the node as its compute runs it. */
type MutationFieldBuilder = Parameters<Parameters<typeof builder.mutationFields>[0]>[0];

const NodeLifecycleAction = builder.enumType("NodeLifecycleAction", {
  description: "What to do with every node of a project at once",
  values: {
    START: { value: "start", description: "Start every node" },
    STOP: { value: "stop", description: "Stop every node" },
    SUSPEND: { value: "suspend", description: "Suspend every node (those that cannot be suspended keep running)" },
    RELOAD: { value: "reload", description: "Stop every node, then start them all" },
  } as const,
});

const NodeRunState = builder.objectRef<Node>("NodeRunState").implement({
  description: "A node as the compute runs it",
  fields: (t) => ({
    nodeId: t.exposeString("id", { description: "The node's id (a UUID)" }),
    projectId: t.exposeString("projectId", { description: "The id of the node's project" }),
    name: t.exposeString("name", { description: "The node's name" }),
    nodeType: t.field({ type: NodeTypeEnum, description: "What kind of device the node emulates", resolve: (n) => n.nodeType as NodeType }),
    status: t.field({ type: NodeStatusEnum, description: "Whether the node's emulator is running now", resolve: (n) => n.status as NodeStatus }),
    commandLine: t.exposeString("commandLine", { nullable: true, description: "The emulator's command line once started" }),
    console: t.exposeInt("console", { nullable: true, description: "The TCP port of the node's console on `consoleHost`" }),
    consoleHost: t.exposeString("consoleHost", { nullable: true, description: "The host address to open the console on" }),
    consoleType: t.field({ type: ConsoleTypeEnum, nullable: true, description: "The protocol the console speaks", resolve: (n) => n.consoleType as ConsoleType | null }),
  }),
});

type Lifecycle = (ctx: AppContext, projectId: string, nodeId: string) => Promise<Node>;
/** The same arguments as the other node mutations (deleteNode, updateNode). */
const lifecycleField = (t: MutationFieldBuilder, run: Lifecycle, description: string) =>
  t.field({
    type: NodeRunState,
    description,
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The id of the node's project (an opened project)" }), id: t.arg.id({ required: true, description: "The node's id" }) },
    resolve: (_r, a, ctx) => run(ctx, String(a.projectId), String(a.id)),
  });

builder.mutationFields((t) => ({
  startNode: lifecycleField(t, startNode, "Starts the node's emulator; ConflictError names what this host lacks for node types it cannot run"),
  stopNode: lifecycleField(t, stopNode, "Stops the node's emulator (a no-op for always-running hubs and switches)"),
  suspendNode: lifecycleField(t, suspendNode, "Suspends the node (VPCS cannot be suspended: accepted, nothing changes)"),
  reloadNode: lifecycleField(t, reloadNode, "Stops then starts the node"),
}));

builder.mutationField("projectNodesAction", (t) =>
  t.field({
    type: "Boolean",
    description: "Runs the action on every node of the project, many at once (reload = stop all, then start all); a node that fails does not stop the others, and the first failure is the error",
    errors: { types: DOMAIN_ERRORS },
    args: { projectId: t.arg.id({ required: true, description: "The project's id (an opened project)" }), action: t.arg({ type: NodeLifecycleAction, required: true, description: "What to do with the nodes" }) },
    resolve: async (_r, a, ctx) => {
      await projectNodesAction(ctx, String(a.projectId), a.action);
      return true;
    },
  }),
);
