#!/usr/bin/env bash
# Starts the host's dockerd for docker nodes (CI, a lab host without systemd) unless one already answers on
# /var/run/docker.sock. Debian's docker.io, with:
# - runc behind scripts/runc-capset-wrapper.py as the default runtime: where the capability bounding set lacks some
#   capabilities (this CI's sandbox lacks CAP_SYS_RESOURCE), privileged containers and `docker exec` into them
#   would fail; Patchbay's own containers are unprivileged and do not need it;
# - no bridge and no iptables rules: docker nodes have no Docker network (the compute gives each container its
#   interfaces), so dockerd changes nothing in the host's network.
# Logs to /var/log/patchbay-dockerd.log. Needs root.
set -euo pipefail
cd "$(dirname "$0")"

answers() { curl -sf --max-time 2 --unix-socket /var/run/docker.sock http://docker/_ping >/dev/null 2>&1; }
if answers; then exit 0; fi
command -v dockerd >/dev/null || { echo "start-dockerd: dockerd is not installed (Debian package docker.io)" >&2; exit 1; }

real_runc=$(command -v runc || echo /usr/sbin/runc)
wrapper=/usr/local/lib/patchbay/runc-capset-wrapper
install -D -m 0755 runc-capset-wrapper.py "$wrapper"
PATCHBAY_REAL_RUNC="$real_runc" nohup dockerd \
  --add-runtime "patchbay-runc=$wrapper" --default-runtime patchbay-runc \
  --bridge=none --iptables=false --ip6tables=false \
  >>/var/log/patchbay-dockerd.log 2>&1 </dev/null &
for _ in $(seq 1 60); do
  if answers; then exit 0; fi
  sleep 0.5
done
echo "start-dockerd: dockerd did not answer in 30 s; see /var/log/patchbay-dockerd.log" >&2
exit 1
