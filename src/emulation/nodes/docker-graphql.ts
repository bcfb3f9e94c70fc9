import { builder } from "../../platform/graphql/builder.js";
import "./graphql.js"; // the EmulatedNode type this file extends
import { prepareDockerProperties, type DockerProperties } from "../node-model/docker-properties.js";
import { nodeProperties } from "../node-model/serialize.js";

/**
 * A docker node's settings as typed fields (`EmulatedNode.docker`), read from the same stored properties the JSON
 * `properties` field shows; they are set through `properties` like every node type's (a change makes a new container).
 */
const DockerSettingsRef = builder.objectRef<DockerProperties>("DockerSettings").implement({
  description: "The settings of a docker node (GNS3's docker properties)",
  fields: (t) => ({
    image: t.string({ description: "The image, with its tag (busybox → busybox:latest)", resolve: (p) => p.image }),
    adapters: t.int({ description: "Interfaces eth0..N-1 of the container", resolve: (p) => p.adapters }),
    macAddress: t.string({ description: "The base MAC: eth n uses it plus n", resolve: (p) => p.mac_address }),
    startCommand: t.string({ nullable: true, description: "Replaces the image's command (split as a shell would)", resolve: (p) => p.start_command }),
    environment: t.string({ nullable: true, description: "NAME=value lines", resolve: (p) => p.environment }),
    extraHosts: t.string({ nullable: true, description: "host:ip lines, added to /etc/hosts", resolve: (p) => p.extra_hosts }),
    extraVolumes: t.stringList({ description: "Directories kept in the node directory across new containers", resolve: (p) => p.extra_volumes }),
    consoleResolution: t.string({ description: "The screen size of a VNC console, WIDTHxHEIGHT in pixels", resolve: (p) => p.console_resolution }),
    consoleHttpPort: t.int({ description: "The container's own port its web console listens on (for an http(s) console)", resolve: (p) => p.console_http_port }),
    consoleHttpPath: t.string({ description: "The path of the container's web console (for an http(s) console)", resolve: (p) => p.console_http_path }),
    aux: t.int({ nullable: true, description: "The TCP port of the auxiliary (text) console", resolve: (p) => p.aux }),
    containerId: t.string({ nullable: true, description: "The container in the host's dockerd (made with the node)", resolve: (p) => p.container_id }),
    usage: t.string({ description: "Free text on how to use the container, shown to lab users", resolve: (p) => p.usage }),
  }),
});

function readDockerProperties(id: string, properties: Record<string, unknown>): DockerProperties | null {
  try {
    return prepareDockerProperties(id, properties);
  } catch {
    return null; // a node imported with settings a docker node cannot have: its JSON properties still show them
  }
}

builder.prismaObjectFields("Node", (t) => ({
  docker: t.field({
    type: DockerSettingsRef,
    nullable: true,
    description: "The docker settings, typed (null for other node types)",
    select: { id: true, nodeType: true, propertiesJson: true },
    resolve: (n) => (n.nodeType === "docker" ? readDockerProperties(n.id, nodeProperties(n)) : null),
  }),
}));
