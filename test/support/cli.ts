import { spawn } from "node:child_process";
import path from "node:path";

/** The command line as users run it (`npm start`, the package's bin): the built server, one node process. */
export const CLI = [path.resolve(import.meta.dirname, "../../dist/launch.js")];

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a program to its end and collects what it printed, its exit code and how long it took. It runs in a
 * process group of its own: on `timeoutMs` the whole group (a script's children too) is killed.
 */
export async function runProcess(
  command: string,
  args: string[],
  opts: {
    env: NodeJS.ProcessEnv;
    cwd?: string;
    timeoutMs?: number;
    /** Called with all it printed so far, each time it prints: to act on what it says (make a request, stop it). */
    onOutput?: (printed: { stdout: string; stderr: string }, kill: (signal: NodeJS.Signals) => void) => void;
  },
): Promise<ProcessRun> {
  const started = Date.now();
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {} // already gone
  };
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    opts.onOutput?.({ stdout, stderr }, kill);
  });
  child.stderr.on("data", (d) => {
    stderr += d;
    opts.onOutput?.({ stdout, stderr }, kill);
  });
  const timer = setTimeout(() => kill("SIGKILL"), opts.timeoutMs ?? 20_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** The built CLI with `env` over a neutral environment: any free port, no database or Redis from the caller's. */
export const runCli = (env: Record<string, string>, args: string[] = [], cwd?: string) =>
  runProcess(process.execPath, [...CLI, ...args], {
    cwd,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", DATABASE_URL: "", REDIS_URL: "", PATCHBAY_LOG: "off", ...env },
  });
