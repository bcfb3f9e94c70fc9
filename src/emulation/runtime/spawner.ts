import { spawn } from "node:child_process";
import fs from "node:fs";
import readline from "node:readline";
import { findOnPath } from "../../platform/core/executables.js";

/**
 * Node processes (a sandbox for each vpcs) forked by a small helper instead of by the server. `child_process.spawn`
 * blocks the event loop until the child has exec'd, and forking a 150 MB server costs 5–7 ms of page-table copying
 * each (a third of the server's CPU in a 50-node start all). The helper is a Perl loop (perl-base is essential on
 * Debian) that forks from a few MB, off the server's thread: one line in, the pid back, the exit status when it ends.
 *
 * The helper is the sandboxes' parent, so bwrap's --die-with-parent follows it: it exits when its input closes,
 * which the kernel does when the server dies, even by SIGKILL — and the sandboxes go with it. Without perl,
 * processes are spawned by the server as before.
 */
const HELPER = String.raw`
use strict; use POSIX ();
$| = 1;
$SIG{CHLD} = sub { while ((my $p = waitpid(-1, POSIX::WNOHANG())) > 0) { my $s = $?; print "exit $p ", ($s & 127 ? 128 + ($s & 127) : $s >> 8), "\n"; } };
while (defined(my $line = <STDIN>)) {
  chomp $line;
  my @f = map { pack("H*", $_) } split(/ /, $line, -1);
  my ($id, $cwd, $log, $n) = splice(@f, 0, 4);
  my @env = splice(@f, 0, $n);
  my $pid = fork();
  if (!defined $pid) { print "err $id ", unpack("H*", "fork: $!"), "\n"; next; }
  if ($pid == 0) {
    $SIG{CHLD} = "DEFAULT";
    POSIX::setsid();
    open(STDIN, "<", "/dev/null"); open(STDOUT, ">>", $log) or POSIX::_exit(126); open(STDERR, ">&", \*STDOUT);
    chdir($cwd) or POSIX::_exit(126);
    %ENV = map { split(/=/, $_, 2) } @env;
    exec { $f[0] } @f;
    POSIX::_exit(127);
  }
  print "pid $id $pid\n";
}
`;

export interface Spawned {
  pid: number;
  /** Resolves with the exit code (128 + signal) when the process ends. */
  exited: Promise<number>;
}

const hex = (s: string) => Buffer.from(s, "utf8").toString("hex");

class Helper {
  private readonly child;
  private nextId = 0;
  private readonly started = new Map<string, { resolve: (pid: number) => void; reject: (e: Error) => void }>();
  private readonly waiting = new Map<number, (code: number) => void>();
  /** Exits read before the pid's own line (the child ended at once). */
  private readonly early = new Map<number, number>();
  dead = false;

  constructor(perl: string) {
    this.child = spawn(perl, ["-e", HELPER], { stdio: ["pipe", "pipe", "inherit"] });
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void }).unref?.();
    (this.child.stdout as unknown as { unref?: () => void }).unref?.();
    this.child.once("error", () => this.fail(new Error("the spawn helper could not run")));
    this.child.once("exit", () => this.fail(new Error("the spawn helper ended")));
    this.child.stdin.on("error", () => {});
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => this.read(line.split(" ")));
  }

  private read([kind, a, b]: string[]) {
    if (kind === "pid") {
      const pid = Number(b);
      this.started.get(a)?.resolve(pid);
      this.started.delete(a);
    } else if (kind === "err") {
      this.started.get(a)?.reject(new Error(Buffer.from(b ?? "", "hex").toString()));
      this.started.delete(a);
    } else if (kind === "exit") {
      const pid = Number(a);
      const done = this.waiting.get(pid);
      if (done) {
        this.waiting.delete(pid);
        done(Number(b));
      } else this.early.set(pid, Number(b));
    }
  }

  private fail(e: Error) {
    this.dead = true;
    for (const s of this.started.values()) s.reject(e);
    this.started.clear();
    for (const done of this.waiting.values()) done(-1);
    this.waiting.clear();
  }

  async spawn(argv: string[], o: { cwd: string; env: Record<string, string>; log: string }): Promise<Spawned> {
    const id = String(this.nextId++);
    const env = Object.entries(o.env).map(([k, v]) => `${k}=${v}`);
    const pid = await new Promise<number>((resolve, reject) => {
      this.started.set(id, { resolve, reject });
      this.child.stdin.write(`${[id, o.cwd, o.log, String(env.length), ...env, ...argv].map(hex).join(" ")}\n`);
    });
    const exited = new Promise<number>((resolve) => {
      const code = this.early.get(pid);
      if (code !== undefined) {
        this.early.delete(pid);
        resolve(code);
      } else this.waiting.set(pid, resolve);
    });
    return { pid, exited };
  }
}

let helper: Helper | undefined;

/**
 * `argv` started in a session of its own, in `cwd`, with exactly `env`, its output appended to `log`; answers its pid
 * once it runs. Through the helper when perl is there, else spawned here.
 */
export async function spawnDetached(argv: string[], o: { cwd: string; env: Record<string, string>; log: string }): Promise<Spawned> {
  if (!helper || helper.dead) {
    const perl = findOnPath("perl");
    if (perl && process.env.PATCHBAY_SPAWN_HELPER !== "0") helper = new Helper(perl);
  }
  if (helper && !helper.dead) return helper.spawn(argv, o);
  const fd = fs.openSync(o.log, "a");
  const [cmd, ...rest] = argv;
  const child = spawn(cmd, rest, { cwd: o.cwd, env: o.env, stdio: ["ignore", fd, fd], detached: true });
  fs.closeSync(fd);
  const exited = new Promise<number>((resolve) => {
    child.once("error", () => resolve(127));
    child.once("exit", (c) => resolve(c ?? 128));
  });
  if (!child.pid) throw new Error(`${cmd} could not be started`);
  return { pid: child.pid, exited };
}
