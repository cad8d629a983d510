#!/bin/bash
# daemon_memory.sh: bulk-loads MIB MiB of puts through a table's .batch
# file and prints the daemon's peak RSS (VmHWM), to check that it stays
# within block_cache + the global memstore limit + a small constant.
#
#   tests/bench/daemon_memory.sh [MIB] [OPTIONS]
#   e.g. tests/bench/daemon_memory.sh 400 block_cache=64M,flush_size=16M,sync=none
set -eu
MIB=${1:-400}
OPTS=${2:-block_cache=64M,flush_size=16M,sync=none}
BIN=${CELLFS_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build/default}/cellfs
W=$(mktemp -d /tmp/cellfs-mem.XXXXXX)
mkdir "$W/mnt"
"$BIN" -f -o "$OPTS" "$W/data" "$W/mnt" 2>"$W/err" &
PID=$!
trap 'fusermount3 -u "$W/mnt" 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 100); do
	mountpoint -q "$W/mnt" && break
	sleep 0.1
done
mkdir "$W/mnt/bulk"
python3 - "$W/mnt/bulk/.batch" "$MIB" <<'PY'
import os, random, sys, time
path, mib = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_WRONLY)
chars = b'abcdefghijklmnopqrstuvwxyz0123456789'
rnd = random.Random(1)
written = rows = 0
t0 = time.time()
while written < mib << 20:
    lines = []
    for _ in range(5000):
        v = bytes(rnd.choice(chars) for _ in range(100))
        lines.append(b"put row%012d cf:q %s\n" % (rnd.randrange(10**12), v))
    data = b''.join(lines)
    os.write(fd, data)
    written += len(data)
    rows += 5000
os.close(fd)
print("loaded %d rows, %.0f MiB of put lines in %.1f s" %
      (rows, written / 1048576, time.time() - t0))
PY
echo "options: $OPTS"
grep -E "VmHWM|VmRSS" /proc/$PID/status
