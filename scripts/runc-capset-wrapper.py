#!/usr/bin/python3
"""runc as dockerd's default runtime on hosts whose capability bounding set lacks some capabilities.

In some sandboxes (this project's CI among them) the bounding set misses CAP_SYS_RESOURCE. Docker asks runc for
every capability up to cap_last_cap for a privileged container (and for `docker exec` in one), and runc then fails
with "unable to apply caps: operation not permitted". This wrapper removes the capabilities the bounding set lacks
from the bundle's config.json (`create`/`run`, `--bundle`) and from the `--process` JSON (`exec`), then runs the
real runc with the same arguments. Patchbay's own containers are not privileged and ask only NET_ADMIN and NET_RAW
beyond nothing, so they do not need it; it keeps `docker run --privileged` and exec into such containers working
for an operator on the same dockerd. Installed by scripts/start-dockerd.sh (--add-runtime, --default-runtime).
"""
import json
import os
import shutil
import sys

NAMES = [
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
    "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
    "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
    "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
    "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
    "CHECKPOINT_RESTORE",
]


def bounding_set():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapBnd:"):
                mask = int(line.split()[1], 16)
                return {"CAP_" + n for i, n in enumerate(NAMES) if mask & (1 << i)}
    return {"CAP_" + n for n in NAMES}


def trim(process, allowed):
    caps = process.get("capabilities") if isinstance(process, dict) else None
    if not isinstance(caps, dict):
        return False
    changed = False
    for kind, names in caps.items():
        if isinstance(names, list):
            kept = [c for c in names if c in allowed]
            if kept != names:
                caps[kind] = kept
                changed = True
    return changed


def rewrite(path, inner):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return
    target = doc.get("process") if inner else doc
    if trim(target, bounding_set()):
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)


def option(args, *names):
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def main():
    args = sys.argv[1:]
    real = os.environ.get("PATCHBAY_REAL_RUNC") or shutil.which("runc") or "/usr/sbin/runc"
    command = next((a for a in args if a in ("create", "run", "exec")), None)
    if command in ("create", "run"):
        bundle = option(args, "--bundle", "-b") or os.getcwd()
        rewrite(os.path.join(bundle, "config.json"), inner=True)
    elif command == "exec":
        process = option(args, "--process", "-p")
        if process:
            rewrite(process, inner=False)
    os.execv(real, [real] + args)


main()
