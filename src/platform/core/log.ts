import { AsyncLocalStorage } from "node:async_hooks";
import { pino } from "pino";
import { prettyStream } from "./log-pretty.js";

/**
 * Structured logs through pino: one JSON object per line ({"level","time","msg",...fields}). Info goes to
 * stdout (off with PATCHBAY_LOG=off); warnings and errors always reach stderr. A line logged while a request is
 * handled (its async context: handlers, resolvers, the jobs they start) carries that request's `id`. With the
 * "pretty" format the same lines are formatted for people (log-pretty.ts).
 */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const requestScope = new AsyncLocalStorage<string>();

/** The id of the request being handled (undefined outside one). */
export const currentRequestId = (): string | undefined => requestScope.getStore();

/** Runs `fn` (and everything it starts) as part of request `id`: their log lines carry it. */
export function withRequestId<T>(id: string, fn: () => T): T {
  return requestScope.run(id, fn);
}

export function createLogger(infoEnabled: boolean, format: "json" | "pretty" = "json"): Logger {
  const out = (stream: NodeJS.WriteStream) => (format === "pretty" ? prettyStream(stream) : stream);
  const logger = pino(
    {
      level: infoEnabled ? "info" : "warn",
      base: undefined, // no pid/hostname: the lines keep the fields they always had
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Error objects logged as {type, message, stack, ...own fields such as a database error code}.
      serializers: { error: pino.stdSerializers.err },
      mixin: () => {
        const id = requestScope.getStore();
        return id ? { id } : {};
      },
    },
    pino.multistream(
      [
        { level: "info", stream: out(process.stdout) },
        { level: "warn", stream: out(process.stderr) },
      ],
      { dedupe: true }, // each line to the stream of its level only
    ),
  );
  return {
    info: (msg, fields = {}) => logger.info(fields, msg),
    warn: (msg, fields = {}) => logger.warn(fields, msg),
    error: (msg, fields = {}) => logger.error(fields, msg),
  };
}
