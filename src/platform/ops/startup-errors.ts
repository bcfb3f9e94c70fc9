/**
 * Start-up failures worded for the person starting the server: one line saying what is wrong and what to do,
 * instead of a stack trace (main.ts prints it and exits non-zero).
 */
export class StartupError extends Error {}

interface SystemError {
  code?: string;
  address?: string;
  port?: number;
  message?: string;
  cause?: unknown;
}

/** The database part of a URL, without credentials. */
function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) || "(default)";
  } catch {
    return "?";
  }
}

function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return "?";
  }
}

/** The one line for a known failure, or undefined (then the error is a bug: printed with its stack). */
export function describeStartupError(error: unknown, settings: { databaseUrl: string; host: string; port: number }): string | undefined {
  if (error instanceof StartupError) return error.message;
  // Prisma and pg wrap the cause: look one level down too.
  for (const e of [error, (error as SystemError)?.cause] as SystemError[]) {
    if (!e || typeof e !== "object") continue;
    const postgres = /^postgres(ql)?:/.test(settings.databaseUrl);
    if (e.code === "EADDRINUSE") return `port ${settings.port} on ${settings.host} is already in use: stop the other server or choose another port with PORT or --port`;
    if (e.code === "EADDRNOTAVAIL") return `address ${settings.host} is not an address of this machine: set HOST or --host to one of its addresses (or 0.0.0.0)`;
    if (e.code === "EACCES" && e.port !== undefined) return `not allowed to listen on port ${settings.port}: choose a port above 1023 with PORT or --port`;
    if (!postgres) continue;
    const where = hostOf(settings.databaseUrl);
    if (e.code === "ECONNREFUSED" || e.code === "EHOSTUNREACH" || e.code === "ETIMEDOUT") {
      return `cannot reach PostgreSQL at ${where} (${e.code}): start PostgreSQL, or set DATABASE_URL to a reachable server`;
    }
    if (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") return `cannot resolve the PostgreSQL host of DATABASE_URL (${where}): check DATABASE_URL`;
    if (e.code === "3D000") {
      const name = databaseName(settings.databaseUrl);
      return `database ${name} does not exist on ${where}: createdb ${name}, or set DATABASE_URL to an existing database`;
    }
    if (e.code === "28P01" || e.code === "28000") return `PostgreSQL at ${where} refused the credentials of DATABASE_URL (${e.message}): fix the user or password`;
  }
  return undefined;
}
