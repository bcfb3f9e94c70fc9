import http from "node:http";
import https from "node:https";
import type { AppContext } from "../../platform/context.js";
import { publishControllerEvent } from "../core/events.js";
import { GNS3_VERSION } from "../core/version.js";
import { disconnected, remoteCompute, type Capabilities, type ComputeRow, type LiveState } from "./model.js";
import { unseal } from "./secret.js";
import type { HostStatistics } from "./usage.js";

/** Poll cadence: a connected compute every 2 s; a failing one after 1, 2, 4 … up to 30 s. */
const CONNECTED_POLL_MS = 2_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
const REQUEST_TIMEOUT_MS = 3_000;

interface Watched {
  row: ComputeRow;
  password: string | null;
  live: LiveState;
  statistics: HostStatistics | undefined;
  failures: number;
  timer?: NodeJS.Timeout;
  abort: AbortController;
}

/**
 * Keeps each remote compute's connection state live in memory (GNS3 does the same: connected, last_error,
 * capabilities and usage are never persisted) by polling its compute API, and announces every change with
 * compute.updated on the controller stream. One monitor per server instance.
 */
export class ComputeMonitor {
  private watched = new Map<string, Watched>();
  private stopped = false;
  private loading: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: AppContext) {}

  /** Watches every stored compute (in the background: a compute that does not answer must not hold start-up). */
  start(): void {
    this.loading = this.ctx.db.compute.findMany().then(
      (rows) => {
        for (const row of rows) {
          try {
            this.watch(row, row.passwordSeal ? unseal(this.ctx.config.dataDir, row.passwordSeal, row.id) : null);
          } catch (e) {
            this.ctx.log.error("cannot unseal a compute password (was secret.key replaced?)", { compute_id: row.id, error: String(e) });
          }
        }
      },
      (e) => this.ctx.log.error("cannot load computes", { error: String(e) }),
    );
  }

  /** Starts (or restarts, after an update) polling from a disconnected state; the first poll runs at once. */
  watch(row: ComputeRow, password: string | null): void {
    this.unwatch(row.id);
    if (this.stopped) return;
    const w: Watched = { row, password, live: disconnected(), statistics: undefined, failures: 0, abort: new AbortController() };
    this.watched.set(row.id, w);
    queueMicrotask(() => void this.poll(w));
  }

  unwatch(id: string): void {
    const w = this.watched.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    w.abort.abort();
    this.watched.delete(id);
  }

  live(id: string): LiveState {
    return this.watched.get(id)?.live ?? disconnected();
  }

  statistics(id: string): HostStatistics | undefined {
    const w = this.watched.get(id);
    return w?.live.connected ? w.statistics : undefined;
  }

  async stop(): Promise<void> {
    await this.loading; // its query must not outlive the database connection on a quick shutdown
    this.stopped = true;
    for (const id of [...this.watched.keys()]) this.unwatch(id);
  }

  private current(w: Watched) {
    return !this.stopped && this.watched.get(w.row.id) === w;
  }

  private async poll(w: Watched): Promise<void> {
    let next: LiveState;
    try {
      const caps = await this.get<Capabilities>(w, "/v2/compute/capabilities");
      if (typeof caps?.version !== "string" || !Array.isArray(caps.node_types)) throw new Error("The compute did not answer with its capabilities");
      if (minor(caps.version) !== minor(GNS3_VERSION)) {
        throw new Error(`Incompatible version: the compute runs ${caps.version}, this server ${GNS3_VERSION}`);
      }
      // Usage is a nicety: a compute without the statistics route still counts as connected.
      w.statistics = await this.get<HostStatistics>(w, "/v2/compute/statistics").catch(() => undefined);
      next = {
        connected: true,
        last_error: null,
        capabilities: caps,
        cpu_usage_percent: w.statistics?.cpu_usage_percent ?? null,
        memory_usage_percent: w.statistics?.memory_usage_percent ?? null,
      };
      w.failures = 0;
    } catch (e) {
      if (!this.current(w)) return;
      w.failures++;
      next = { ...w.live, connected: false, cpu_usage_percent: null, memory_usage_percent: null, last_error: describe(e) };
    }
    if (!this.current(w)) return;
    const changed = JSON.stringify(next) !== JSON.stringify(w.live);
    w.live = next;
    if (changed) await publishControllerEvent(this.ctx, { type: "compute.updated", compute: remoteCompute(w.row, w.live) });
    if (!this.current(w)) return;
    const delay = w.failures ? Math.min(FIRST_RETRY_MS * 2 ** (w.failures - 1), MAX_RETRY_MS) : CONNECTED_POLL_MS;
    w.timer = setTimeout(() => void this.poll(w), delay);
  }

  /** node:http rather than fetch: fetch refuses "bad ports" (9, 22, 6000 …) that a compute may well listen on. */
  private get<T>(w: Watched, route: string): Promise<T> {
    const { protocol, host, port, user } = w.row;
    const headers: Record<string, string> = { accept: "application/json" };
    if (user) headers.authorization = `Basic ${Buffer.from(`${user}:${w.password ?? ""}`).toString("base64")}`;
    const request = protocol === "https" ? https.request : http.request;
    return new Promise<T>((resolve, reject) => {
      const req = request({ host, port, path: route, headers, signal: w.abort.signal, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          if (res.statusCode === 401) return reject(new Error("Authentication failed: wrong user or password for the compute"));
          if (res.statusCode !== 200) return reject(new Error(`GET ${route} answered ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T);
          } catch {
            reject(new Error(`GET ${route} did not answer with JSON`));
          }
        });
      });
      req.on("timeout", () => req.destroy(new Error("The compute did not answer in time")));
      req.on("error", reject);
      req.end();
    });
  }
}

const minor = (version: string) => version.split(".").slice(0, 2).join(".");

function describe(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code && err.syscall ? `Cannot connect to the compute: ${err.code}` : err.message;
}
