/** Structured logs: one JSON object per line. Info goes to stdout (off with PATCHBAY_LOG=off); warnings and errors always reach stderr. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const line = (level: string, msg: string, fields: Record<string, unknown>) =>
  JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n";

export function createLogger(infoEnabled: boolean): Logger {
  return {
    info: (msg, fields = {}) => void (infoEnabled && process.stdout.write(line("info", msg, fields))),
    warn: (msg, fields = {}) => void process.stderr.write(line("warn", msg, fields)),
    error: (msg, fields = {}) => void process.stderr.write(line("error", msg, fields)),
  };
}
