import { InvalidInputError } from "../../platform/core/errors.js";

/** The packet filters a link offers (GET L/available_filters), in GNS3's order and wording. */
export const AVAILABLE_FILTERS = [
  {
    type: "frequency_drop",
    name: "Frequency drop",
    description: "It will drop everything with a -1 frequency, drop every Nth packet with a positive frequency, or drop nothing",
    parameters: [{ name: "Frequency", type: "int", minimum: -1, maximum: 32767, unit: "th packet" }],
  },
  {
    type: "packet_loss",
    name: "Packet loss",
    description: "The percentage represents the chance for a packet to be lost",
    parameters: [{ name: "Chance", type: "int", minimum: 0, maximum: 100, unit: "%" }],
  },
  {
    type: "delay",
    name: "Delay",
    description: "Delay packets in milliseconds. You can add jitter in milliseconds (+/-) of the delay",
    parameters: [
      { name: "Latency", type: "int", minimum: 0, maximum: 32767, unit: "ms" },
      { name: "Jitter (-/+)", type: "int", minimum: 0, maximum: 32767, unit: "ms" },
    ],
  },
  {
    type: "corrupt",
    name: "Corrupt",
    description: "The percentage represents the chance for a packet to be corrupted",
    parameters: [{ name: "Chance", type: "int", minimum: 0, maximum: 100, unit: "%" }],
  },
  {
    type: "bpf",
    name: "Berkeley Packet Filter (BPF)",
    description: "This filter will drop any packet matching a BPF expression. Put one expression per line",
    parameters: [{ name: "Filters", type: "text" }],
  },
] as const;

export const FILTER_NAMES = AVAILABLE_FILTERS.map((f) => f.type);

/** Node types whose links can be filtered (the others get an empty list). */
export const FILTERING_NODE_TYPES = new Set(["vpcs", "traceng", "vmware", "dynamips", "qemu", "iou", "cloud", "nat", "virtualbox", "docker"]);

export type LinkFilters = Partial<Record<string, (number | string)[]>>;

/**
 * Checks parameter ranges (names and shapes are the input contract's, links/schema.ts) and drops disabled filters
 * (first value 0 or ""), as GNS3 does, so that `{"packet_loss": [0]}` means "no packet loss".
 */
export function normalizeFilters(filters: LinkFilters): LinkFilters {
  const out: LinkFilters = {};
  for (const [type, values] of Object.entries(filters)) {
    const def = AVAILABLE_FILTERS.find((f) => f.type === type);
    if (!def || values === undefined) continue;
    const cleaned = values.map((v) => (typeof v === "string" ? v.trim() : v));
    if (cleaned.length === 0 || cleaned[0] === 0 || cleaned[0] === "") continue;
    if (cleaned.length > def.parameters.length) throw new InvalidInputError(`Filter ${type} takes at most ${def.parameters.length} values`);
    cleaned.forEach((v, i) => {
      const p = def.parameters[i];
      if (p.type === "text" ? typeof v !== "string" : typeof v !== "number" || !Number.isInteger(v) || v < p.minimum || v > p.maximum) {
        const range = p.type === "text" ? "text" : `an integer from ${p.minimum} to ${p.maximum}`;
        throw new InvalidInputError(`Filter ${type}: ${p.name} must be ${range}`);
      }
    });
    out[type] = cleaned;
  }
  return out;
}
