import type { ReadViews } from "../../platform/read-views.js";
import { connectionCoordinates } from "../../platform/graphql/connection.js";
import { useReadCache } from "../../platform/graphql/read-cache.js";

/**
 * The fields whose every change is announced by a project or topology event (so drops the read views): a query
 * made only of them can be answered again from memory until the next such event. Not here: anything read from
 * the runtime, computes (their usage changes without a write), snapshots (created without an event), storage.
 */
export const CACHEABLE_FIELDS = new Set([
  "Query.project",
  "Query.projects",
  "Query.emulatedNode",
  "Query.link",
  "Query.drawing",
  ...["QueryProjectsConnection", "ProjectNodesConnection", "ProjectLinksConnection", "ProjectDrawingsConnection"].flatMap(connectionCoordinates),
  ...[
    "id", "projectId", "name", "path", "filename", "status", "autoClose", "autoOpen", "autoStart", "sceneHeightPixels", "sceneWidthPixels",
    "zoomPercent", "showLayers", "snapToGrid", "showGrid", "gridSizePixels", "drawingGridSizePixels", "showInterfaceLabels", "supplier", "variables",
    "nodes", "links", "drawings", "eventCursor",
  ].map((f) => `Project.${f}`),
  ...[
    "id", "nodeId", "project", "nodeType", "name", "status", "console", "consoleHost", "consoleType",
    "consoleAutoStart", "commandLine", "nodeDirectory", "properties", "label", "symbol", "widthPixels", "heightPixels", "x", "y", "z",
    "locked", "portNameFormat", "portSegmentSize", "firstPortName", "customAdapters", "ports", "settings", "links",
  ].map((f) => `EmulatedNode.${f}`),
  // EmulatedNode.links: every link create, update and delete is a topology event.
  // EmulatedNode.settings (qemu, VPCS, switch and hub): read from the stored properties, whose changes node.updated publishes.
  ...[
    "qemuPath", "platform", "ramMb", "cpus", "maxCpus", "adapters", "adapterType", "macAddress", "bootPriority", "disks", "cdromImage",
    "biosImage", "kernelImage", "initrd", "kernelCommandLine", "options", "linkedClone", "onClose", "processPriority",
    "cpuThrottlingPercent", "replicateNetworkConnectionState", "legacyNetworking", "tpm", "uefi", "createConfigDisk", "usage",
  ].map((f) => `QemuSettings.${f}`),
  ...["startupScriptFile", "baseScriptFile", "usage"].map((f) => `VpcsSettings.${f}`),
  ...["ports", "usage"].flatMap((f) => [`EthernetSwitchSettings.${f}`, `EthernetHubSettings.${f}`]),
  ...["portNumber", "name", "type", "vlan", "ethertype"].map((f) => `EthernetSwitchPort.${f}`),
  ...["portNumber", "name"].map((f) => `EthernetHubPort.${f}`),
  ...["slot", "name", "md5sum", "interface"].map((f) => `QemuDisk.${f}`),
  ...["name", "md5sum"].map((f) => `QemuImage.${f}`),
  ...["name", "shortName", "adapterNumber", "portNumber", "linkType", "dataLinkTypes", "adapterType", "macAddress"].map((f) => `NodePort.${f}`),
  ...["name", "dlt"].map((f) => `DataLinkType.${f}`),
  ...["adapterNumber", "portName", "adapterType", "macAddress"].map((f) => `CustomAdapter.${f}`),
  ...[
    "id", "linkId", "project", "linkType", "endpoints", "filters", "linkStyle", "suspend", "capturing", "captureFileName",
    "captureFilePath",
  ].map((f) => `Link.${f}`),
  ...["node", "adapterNumber", "portNumber", "label"].map((f) => `LinkEndpoint.${f}`),
  ...["text", "style", "x", "y", "rotationDegrees"].map((f) => `Label.${f}`),
  ...["color", "widthPixels", "type"].map((f) => `LinkStyle.${f}`),
  ...["frequencyDrop", "packetLossPercent", "delay", "corruptPercent", "bpf"].map((f) => `LinkFilters.${f}`),
  ...["latencyMs", "jitterMs"].map((f) => `LinkDelay.${f}`),
  ...["id", "drawingId", "project", "x", "y", "z", "locked", "rotationDegrees", "svg", "shape"].map((f) => `Drawing.${f}`),
]);

/** Topology queries answered from memory while no project changed (the project read views' version). */
export const useTopologyReadCache = (reads: Pick<ReadViews, "version">) => useReadCache(CACHEABLE_FIELDS, () => reads.version());
