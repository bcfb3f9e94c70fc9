import { z } from "zod";
import type { AppContext } from "../../../platform/context.js";
import { NotFoundError } from "../../../platform/core/errors.js";
import { uuidSchema } from "../../../platform/input.js";
import { qemuPropertiesSchema } from "../../node-model/qemu-properties.js";
import { DOCKER_CONSOLE_TYPES, dockerPropertiesSchema } from "../../node-model/docker-properties.js";
import { sendJson, type Gns3Routes } from "../../rest/kit.js";
import { NODE_ACTIONS } from "../../nodes/lifecycle.js";
import { driverFor, runnableTypes, runsProcess, type RunnableType } from "../../runtime/drivers/registry.js";
import type { DataLinkType } from "../../runtime/pcap.js";
import { streamPcap } from "../../links/capture-rest.js";
import {
  addNio,
  allocateUdpPort,
  computeNodeAction,
  computeNodeJson,
  createComputeNode,
  deleteComputeNode,
  getComputeNode,
  portCapture,
  removeNio,
  startPortCapture,
  stopPortCapture,
  updateComputeNode,
  type ComputeNodeInput,
} from "./operations.js";

const P = "/v2/compute/projects/{project_id}";

/**
 * The per-emulator create schemas of GNS3's compute (name required; the compute picks what is omitted), one for
 * each node type with a driver.
 */
const common = {
  node_id: uuidSchema.optional(),
  name: z.string().min(1),
  usage: z.string().optional(),
};
const consoleFields = { console: z.int().min(1).max(65535).nullable().optional(), console_type: z.enum(["telnet", "none"]).optional() };
const portsMapping = z.array(z.record(z.string(), z.unknown()));
const createSchemas: Record<RunnableType, z.ZodObject> = {
  vpcs: z.strictObject({
    ...common,
    ...consoleFields,
    startup_script: z.string().nullable().optional(),
    startup_script_path: z.string().nullable().optional(),
    // Patchbay extension: the controller's MAC offset for the node, unique across the computes of a project.
    mac_offset: z.int().min(0).max(255).optional(),
  }),
  qemu: z.strictObject({ ...common, ...consoleFields, ...qemuPropertiesSchema.shape }),
  // GNS3's docker schema: image required, its console types.
  docker: z.strictObject({
    ...common,
    ...dockerPropertiesSchema.shape,
    image: z.string().min(1),
    console: consoleFields.console,
    console_type: z.enum(DOCKER_CONSOLE_TYPES).optional(),
  }),
  ethernet_switch: z.strictObject({ ...common, ...consoleFields, ports_mapping: portsMapping.optional() }),
  ethernet_hub: z.strictObject({ ...common, ports_mapping: portsMapping.optional() }),
  cloud: z.strictObject({
    node_id: uuidSchema.optional(),
    name: z.string().min(1),
    // A controller sends the node's console fields; a cloud has no console of its own (its remote console is a setting).
    console: z.int().min(1).max(65535).nullable().optional(),
    console_type: z.enum(["telnet", "vnc", "spice", "http", "https", "none"]).nullable().optional(),
    ports_mapping: portsMapping.optional(),
    interfaces: z.array(z.record(z.string(), z.unknown())).optional(), // the live list: shown, not stored from clients
    remote_console_host: z.string().optional(),
    remote_console_port: z.int().min(1).max(65535).nullable().optional(),
    remote_console_type: z.enum(["telnet", "vnc", "spice", "http", "https", "none"]).optional(),
    remote_console_http_path: z.string().optional(),
  }),
  // GNS3's nat schema: no required field; the ports are always nat0 (a ports_mapping sent is ignored).
  nat: z.strictObject({ node_id: uuidSchema.optional(), name: z.string().min(1), status: z.string().optional(), ports_mapping: portsMapping.optional() }),
};

const nioSchema = z.strictObject({
  type: z.enum(["nio_udp"]),
  lport: z.int().min(1).max(65535),
  rhost: z.string().min(1),
  rport: z.int().min(1).max(65535),
  filters: z.record(z.string(), z.array(z.unknown())).optional(),
  suspend: z.boolean().optional(),
});

const captureSchema = z.strictObject({
  capture_file_name: z.string().min(1),
  data_link_type: z.enum(["DLT_ATM_RFC1483", "DLT_EN10MB", "DLT_FRELAY", "DLT_C_HDLC", "DLT_PPP_SERIAL"]).optional(),
});

function toInput(body: Record<string, unknown>): ComputeNodeInput {
  const { node_id, name, console, console_type, usage: _usage, startup_script_path: _path, status: _status, ...properties } = body as Record<string, any>;
  if (body.usage !== undefined) properties.usage = body.usage;
  return { nodeId: node_id, name, console, consoleType: console_type, properties };
}

/** `{adapter_number:\d+}` in GNS3's routes: anything else is no route at all. */
function portParams(params: Record<string, string>): [number, number] {
  const { adapter_number: a, port_number: p } = params;
  if (!/^\d+$/.test(a) || !/^\d+$/.test(p)) throw new NotFoundError("404: Not Found");
  return [Number(a), Number(p)];
}

/** REST adapter of the compute node API (compat §15) for the node types this compute has drivers for. */
export function computeNodeRoutes(routes: Gns3Routes, ctx: AppContext): void {
  routes.add("POST", `${P}/ports/udp`, async ({ res, params }) => sendJson(res, 201, { udp_port: await allocateUdpPort(ctx, params.project_id) }));

  for (const type of runnableTypes()) {
    const N = `${P}/${type}/nodes/{node_id}`;
    const PORT = `${N}/adapters/{adapter_number}/ports/{port_number}`;
    const create = createSchemas[type];

    routes.add("POST", `${P}/${type}/nodes`, async ({ res, params, body }) => {
      sendJson(res, 201, await computeNodeJson(ctx, await createComputeNode(ctx, params.project_id, type, toInput(body))));
    }, { schema: create });
    routes.add("GET", N, async ({ res, params }) => sendJson(res, 200, await computeNodeJson(ctx, await getComputeNode(ctx, params.project_id, type, params.node_id))));
    routes.add("PUT", N, async ({ res, params, body }) => {
      const node = await updateComputeNode(ctx, params.project_id, type, params.node_id, toInput(body));
      sendJson(res, 200, await computeNodeJson(ctx, node));
    }, { schema: create.partial() });
    routes.add("DELETE", N, async ({ res, params }) => {
      await deleteComputeNode(ctx, params.project_id, type, params.node_id);
      res.status(204).end();
    });

    for (const action of NODE_ACTIONS) {
      // As GNS3's compute: a process's start (vpcs, qemu) answers with the node, every other action with 204.
      routes.add("POST", `${N}/${action}`, async ({ res, params }) => {
        const node = await computeNodeAction(ctx, params.project_id, type, params.node_id, action);
        if (runsProcess(type) && action === "start") sendJson(res, 200, await computeNodeJson(ctx, node));
        else res.status(204).end();
      });
    }
    if (driverFor(type)!.suspends) {
      // A type that pauses has GNS3's resume route (qemu; the controller resumes with start, which does the same).
      routes.add("POST", `${N}/resume`, async ({ res, params }) => {
        await computeNodeAction(ctx, params.project_id, type, params.node_id, "start");
        res.status(204).end();
      });
    }

    for (const method of ["POST", "PUT"]) {
      routes.add(method, `${PORT}/nio`, async ({ res, params, body }) => {
        const [a, p] = portParams(params);
        sendJson(res, 201, await addNio(ctx, params.project_id, type, params.node_id, a, p, body as z.infer<typeof nioSchema>));
      }, { schema: nioSchema });
    }
    routes.add("DELETE", `${PORT}/nio`, async ({ res, params }) => {
      const [a, p] = portParams(params);
      await removeNio(ctx, params.project_id, type, params.node_id, a, p);
      res.status(204).end();
    });
    routes.add("POST", `${PORT}/start_capture`, async ({ res, params, body }) => {
      const [a, p] = portParams(params);
      const b = body as z.infer<typeof captureSchema>;
      const file = await startPortCapture(ctx, params.project_id, type, params.node_id, a, p, b.capture_file_name, b.data_link_type as DataLinkType);
      sendJson(res, 200, { pcap_file_path: file });
    }, { schema: captureSchema });
    routes.add("POST", `${PORT}/stop_capture`, async ({ res, params }) => {
      const [a, p] = portParams(params);
      await stopPortCapture(ctx, params.project_id, type, params.node_id, a, p);
      res.status(204).end();
    });
    routes.add("GET", `${PORT}/pcap`, async ({ req, res, params }) => {
      const [a, p] = portParams(params);
      await streamPcap(req, res, await portCapture(ctx, params.project_id, type, params.node_id, a, p));
    });
  }
}
