#!/usr/bin/env bash
# Side-by-side: bq against Redis 7 (appendfsync always, a Lua compare-and-set like an unlock),
# and against a bare libuv echo server, at the shapes of issue 6. Run from the repository root
# after `swift build -c release`:   bash bench/compare-redis.sh
# Environment: RUNS (default 3), DURATION seconds per run (default 10), STARTUP_EVENTS (default
# 1000000; 0 skips the start-up measurement), OUT (directory for the raw JSON, default a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
BQ=${BQ:-.build/release/bq}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
STARTUP_EVENTS=${STARTUP_EVENTS:-1000000}
[ -x "$BQ" ] || { echo "build first: swift build -c release" >&2; exit 1; }

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq redis-server redis-tools >/dev/null
fi

WORK=$(mktemp -d /tmp/bq-compare.XXXXXX)
OUT=${OUT:-$WORK/results}
mkdir -p "$OUT"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --appendonly yes --appendfsync always \
  --save "" --daemonize no --logfile "$WORK/redis.log" --maxclients 10000 &
REDIS_PID=$!
cleanup() {
  kill "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
  rm -rf "$WORK"  # OUT, when given, lives outside it
}
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "redis $(redis-server --version | grep -o 'v=[0-9.]*') on port $PORT (pid $REDIS_PID); set OUT=DIR to keep the raw JSON" >&2

run() { # name, then the command; keeps the JSON line, shows progress on stderr
  local name=$1; shift
  echo "  $name: $*" >&2
  "$@" 2>/dev/null | tail -1 > "$OUT/$name.json"
}
for i in $(seq "$RUNS"); do
  for depth in 1 16; do
    shape=(--games 4 --connections 50 --depth "$depth" --subscribers 2 --duration "$DURATION" --json)
    run "redis-50x$depth-$i" "$BQ" bench redis --port "$PORT" --server-pid "$REDIS_PID" --script bench/unlock.lua "${shape[@]}"
    run "bq-50x$depth-$i" "$BQ" bench load --spawn --sync full --durable-only "${shape[@]}"
    run "echo-50x$depth-$i" "$BQ" bench echo "${shape[@]}"
  done
  fan=(--games 1 --connections 1 --subscribers 1000 --rate 100 --duration "$DURATION" --json)
  run "redis-fanout-$i" "$BQ" bench redis --port "$PORT" --server-pid "$REDIS_PID" --script bench/unlock.lua "${fan[@]}"
  run "bq-fanout-$i" "$BQ" bench load --spawn --sync full --durable-only "${fan[@]}"
done
if [ "$STARTUP_EVENTS" != 0 ]; then
  echo "  startup: $STARTUP_EVENTS events" >&2
  "$BQ" bench startup --events "$STARTUP_EVENTS" --json 2>/dev/null | tail -1 > "$OUT/startup.json"
fi
python3 bench/summarize.py "$OUT"
