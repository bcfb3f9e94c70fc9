import { builder } from "../../platform/graphql/builder.js";
import { prepareDockerProperties, type DockerProperties } from "../node-model/docker-properties.js";
import { gns3Names, type SettingsKind } from "./settings-kind.js";

/**
 * A docker node's settings as typed fields (a member of `NodeSettings`), read from its stored properties, and the
 * input that sets them (`NodeSettingsInput.docker`; a change makes a new container).
 */
const DockerSettingsRef = builder.objectRef<DockerProperties>("DockerSettings").implement({
  description: "The settings of a docker node (GNS3's docker properties)",
  fields: (t) => ({
    image: t.string({ description: "The image, with its tag (busybox → busybox:latest)", resolve: (p) => p.image }),
    adapters: t.int({ description: "Interfaces eth0..N-1 of the container", resolve: (p) => p.adapters }),
    macAddress: t.string({ nullable: true, description: "The base MAC: eth n uses it plus n (null on a template: each node derives its own from its id)", resolve: (p) => p.mac_address || null }),
    startCommand: t.string({ nullable: true, description: "Replaces the image's command (split as a shell would)", resolve: (p) => p.start_command }),
    environment: t.string({ nullable: true, description: "NAME=value lines", resolve: (p) => p.environment }),
    extraHosts: t.string({ nullable: true, description: "host:ip lines, added to /etc/hosts", resolve: (p) => p.extra_hosts }),
    extraVolumes: t.stringList({ description: "Directories kept in the node directory across new containers", resolve: (p) => p.extra_volumes }),
    consoleResolution: t.string({ description: "The screen size of a VNC console, WIDTHxHEIGHT in pixels", resolve: (p) => p.console_resolution }),
    consoleHttpPort: t.int({ description: "The container's own port its web console listens on (for an http(s) console)", resolve: (p) => p.console_http_port }),
    consoleHttpPath: t.string({ description: "The path of the container's web console (for an http(s) console)", resolve: (p) => p.console_http_path }),
    aux: t.int({ nullable: true, description: "The TCP port of the auxiliary (text) console", resolve: (p) => p.aux }),
    containerId: t.string({ nullable: true, description: "The container in the host's dockerd (made with the node; null on a template)", resolve: (p) => p.container_id }),
    usage: t.string({ description: "Free text on how to use the container, shown to lab users", resolve: (p) => p.usage }),
  }),
});

const DockerSettingsInput = builder.inputType("DockerSettingsInput", {
  description: "Settings of a docker node; on a change only the fields given change, and the node gets a new container",
  fields: (t) => ({
    image: t.string({ description: "The image, with or without its tag (busybox → busybox:latest)" }),
    adapters: t.int({ description: "Interfaces eth0..N-1 of the container (0 to 99)" }),
    macAddress: t.string({ description: "The base MAC: eth n uses it plus n (empty: derived from the node's id)" }),
    startCommand: t.string({ description: "Replaces the image's command (split as a shell would; empty: the image's)" }),
    environment: t.string({ description: "NAME=value lines" }),
    extraHosts: t.string({ description: "host:ip lines, added to /etc/hosts" }),
    extraVolumes: t.stringList({ description: "Absolute directories kept in the node directory across new containers" }),
    consoleResolution: t.string({ description: "The screen size of a VNC console, WIDTHxHEIGHT in pixels" }),
    consoleHttpPort: t.int({ description: "The container's own port its web console listens on (for an http(s) console)" }),
    consoleHttpPath: t.string({ description: "The path of the container's web console (for an http(s) console)" }),
    aux: t.int({ description: "The TCP port of the auxiliary (text) console" }),
    usage: t.string({ description: "Free text on how to use the container, shown to lab users" }),
  }),
});

/** Stands in for a template's node id: what it would derive from one (the MAC) is shown as unset. */
const NO_NODE = "00000000-0000-0000-0000-000000000000";

/** A node imported with settings a docker node cannot have shows none (its JSON properties in a topology file still hold them). */
function readDockerSettings(properties: Record<string, unknown>, nodeId: string | null): DockerProperties | null {
  try {
    const settings = prepareDockerProperties(nodeId ?? NO_NODE, properties);
    return nodeId === null && !properties.mac_address ? { ...settings, mac_address: "" } : settings;
  } catch {
    return null;
  }
}

export const dockerSettings: SettingsKind<DockerProperties, typeof DockerSettingsInput.$inferInput> = {
  member: "docker",
  shown: DockerSettingsRef,
  read: readDockerSettings,
  given: DockerSettingsInput,
  toProperties: (input) => gns3Names(input),
};
