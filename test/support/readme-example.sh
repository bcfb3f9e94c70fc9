# Put before every shell example of README.md by test/platform/readme-examples.test.ts: the only stand-ins
# between the README's lines and a person's terminal.
set -euo pipefail

# curl reports the status of every answer to the test (on stderr); a stream it follows (-N) ends after
# $README_FOLLOW seconds, as a person's Ctrl-C would.
curl() {
  local a follow=()
  for a in "$@"; do [ "$a" = -N ] && follow=(--max-time "$README_FOLLOW"); done
  local rc=0
  command curl "${follow[@]}" --write-out '%{stderr}HTTP %{response_code} %{method} %{url_effective}\n' "$@" || rc=$?
  if [ "$rc" = 28 ] && [ "${#follow[@]}" -gt 0 ]; then rc=0; fi # a followed stream that ran its time
  return "$rc"
}

# npm start / npm run demo: the built server, which is what they run once dist/ is built (the tests' global setup
# builds it); npm run dev: as it is (tsx, no build). The server runs in the background, one at a time as in one
# terminal, on $README_PORT unless the line says PORT or --port, in a fresh data directory and, when the suite runs
# on PostgreSQL, a fresh database; npm returns once it prints its banner, and its /health/ready goes to ./started.
__servers=()
__stop_servers() {
  local p
  for p in "${__servers[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  for p in "${__servers[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
  __servers=()
}
trap __stop_servers EXIT
npm() {
  local cmd
  case "$*" in
    start) cmd=(node "$README_CLI") ;;
    "run demo") cmd=(node "$README_CLI" --demo) ;;
    "run dev -- "*) cmd=(npm --prefix "$README_ROOT" "$@") ;;
    "run build") echo "npm run build: npm ci runs it (postinstall) in .ci/run" >&2; return 0 ;;
    *) echo "readme-examples: no stand-in for 'npm $*'" >&2; return 97 ;;
  esac
  __stop_servers
  : >"$README_DIR/server.log"
  local port=${PORT:-$README_PORT}
  if [[ "$*" =~ --port\ ([0-9]+) ]]; then port=${BASH_REMATCH[1]}; fi
  local scheme=http
  if [ -n "${PATCHBAY_TLS_CERT:-}" ]; then scheme=https; fi
  PORT=$port DATABASE_URL=${DATABASE_URL:-$README_DATABASE_URL} PATCHBAY_DATA_DIR=${PATCHBAY_DATA_DIR:-$README_DIR/data} \
    PATCHBAY_CONSOLE_PORTS=${PATCHBAY_CONSOLE_PORTS:-$README_CONSOLE_PORTS} PATCHBAY_UDP_PORTS=${PATCHBAY_UDP_PORTS:-$README_UDP_PORTS} \
    PATCHBAY_LOG=${PATCHBAY_LOG:-off} setsid "${cmd[@]}" >>"$README_DIR/server.log" 2>&1 &
  local pid=$!
  __servers+=("$pid")
  echo "$pid" >>"$README_DIR/pids"
  local i
  for ((i = 0; i < 600; i++)); do
    if grep -q '^Patchbay on ' "$README_DIR/server.log"; then # the banner a person waits for (after the demo fixture)
      echo "npm $*: $(command curl -sk "$scheme://127.0.0.1:$port/health/ready")" >>"$README_DIR/started"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "npm $*: the server exited" >&2
      cat "$README_DIR/server.log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "npm $*: no 'Patchbay on' banner within 60 s" >&2
  cat "$README_DIR/server.log" >&2
  return 1
}

