import type { Express } from "express";

export interface RouteEntry {
  method: string;
  /** Express path syntax, mount prefixes included: `/api/storage/volumes/:uuid`, `/v2/projects/:project_id/files/*path`. */
  path: string;
}

interface Layer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/**
 * Every route the app serves, read from the Express router stacks (mounted routers walked with their
 * prefixes). Read-only: tests generate their cases from it, so a new route is covered without a hand list.
 */
export function routeTable(app: Express): RouteEntry[] {
  const out: RouteEntry[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route && typeof layer.route.path === "string") {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== "_all") out.push({ method: method.toUpperCase(), path: prefix + layer.route.path });
        }
      } else if (layer.handle?.stack) {
        const mount = typeof layer.rawPath === "string" && layer.rawPath !== "/" ? layer.rawPath : "";
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, "");
  return out;
}
