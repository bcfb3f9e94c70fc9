/** Structured logs: one JSON object per line on stdout. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(enabled: boolean): Logger {
  const write = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (enabled) process.stdout.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n");
  };
  return { info: write("info"), warn: write("warn"), error: write("error") };
}
