/**
 * PATCHBAY_LOG=pretty: each JSON log line as one line for people — time, level, message, then the fields as
 * key=value (an error's stack on the lines below). Coloured only on a terminal. Small on purpose: pino-pretty
 * pulls in dependencies that want Node 22.
 */
const COLOURS: Record<string, string> = { info: "\x1b[32m", warn: "\x1b[33m", error: "\x1b[31m", fatal: "\x1b[31m" };
const RESET = "\x1b[0m";

const value = (v: unknown) => (typeof v === "string" && !/[\s"=]/.test(v) && v !== "" ? v : JSON.stringify(v));

export function formatPretty(line: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  const { level = "info", time, msg = "", error, ...fields } = entry as { level?: string; time?: string; msg?: string; error?: { stack?: string } };
  const clock = typeof time === "string" ? time.slice(11, 23) : "";
  const tag = level.toUpperCase().padEnd(5);
  const parts = [clock, colour ? `${COLOURS[level] ?? ""}${tag}${RESET}` : tag, msg];
  for (const [k, v] of Object.entries(fields)) parts.push(`${k}=${value(v)}`);
  const stack = error && typeof error === "object" && typeof error.stack === "string" ? `\n    ${error.stack.replaceAll("\n", "\n    ")}` : error ? ` error=${value(error)}` : "";
  return `${parts.join(" ")}${stack}\n`;
}

/** A pino destination that writes formatted lines to `out`. */
export const prettyStream = (out: NodeJS.WriteStream) => ({ write: (line: string) => void out.write(formatPretty(line, Boolean(out.isTTY))) });
