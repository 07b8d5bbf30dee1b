#!/usr/bin/env bash
# scripts/pgcluster.sh [WATCH_PID]
#
# Starts a throwaway PostgreSQL cluster for tests and benchmarks: initdb in
# a new directory under ${TMPDIR:-/tmp} (as a non-root user when run as
# root, since PostgreSQL refuses to run as root), trust authentication,
# fsync off, listening on 127.0.0.1 at a free port and on a socket inside
# that directory. It prints the cluster's URL as the only line of its
# standard output and returns; the cluster is stopped and its directory
# removed when WATCH_PID (default: the caller, $PPID) exits.
#
# PostgreSQL's server binaries come from PATH or /usr/lib/postgresql/*/bin
# (Debian: apt-get install postgresql). Exit 3 when they are missing.
set -euo pipefail

watch=${1:-$PPID}

bindir=""
if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
  bindir=$(dirname "$(command -v initdb)")
else
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && bindir=$d
  done
fi
if [ -z "$bindir" ]; then
  echo "pgcluster: PostgreSQL's initdb and pg_ctl not found (Debian: apt-get install postgresql)" >&2
  exit 3
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/openrecall-pg.XXXXXX")
chmod 755 "$dir"
run=()
if [ "$(id -u)" = 0 ]; then
  user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  chown "$user" "$dir"
  run=(runuser -u "$user" --)
fi

# A free port: one nothing answers on, from a range above the usual ones.
port=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 30000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    port=$p
    break
  fi
done
[ -n "$port" ] || { echo "pgcluster: no free port found" >&2; exit 1; }

"${run[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
"${run[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
  start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }

# The watcher stops the cluster when the process it watches is gone; it
# holds none of this script's output open.
nohup setsid bash -c '
  while kill -0 "$0" 2>/dev/null; do sleep 1; done
  '"${run[*]}"' "$1/pg_ctl" -D "$2/data" -m immediate stop >/dev/null 2>&1
  rm -rf "$2"
' "$watch" "$bindir" "$dir" </dev/null >/dev/null 2>&1 &

echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
