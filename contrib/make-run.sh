#!/bin/sh
# make-run.sh BUILD_DIR: `make run`.  Mounts ./run/data at ./run/mnt in the
# background, waits until the mount is up, seeds a small demo table
# (webtable, the HBase reference guide's example) when the data directory
# is new, and says how to unmount.
set -e
B=${1:?usage: make-run.sh BUILD_DIR}
DATA=run/data
MNT=run/mnt

mounted() {
	case "$(stat -f -c %T "$MNT" 2>/dev/null)" in
	fuse|fuseblk) return 0 ;;
	esac
	return 1
}

mkdir -p run "$MNT"
if mounted; then
	echo "cellfs: already mounted at $MNT (fusermount3 -u $MNT)"
	exit 0
fi
new=
test -e "$DATA" || new=1
"$B/cellfs" "$DATA" "$MNT"
i=0
until mounted; do
	i=$((i + 1))
	if test $i -gt 100; then
		echo "cellfs: mount did not come up" >&2
		exit 1
	fi
	sleep 0.1
done
if test -n "$new"; then
	mkdir "$MNT/webtable"
	printf "contents VERSIONS=3\nanchor\n" >"$MNT/webtable/.schema"
	cat >"$MNT/webtable/.batch" <<'EOB'
put com.cnn.www contents:html@3 %3Chtml%3Ev1
put com.cnn.www contents:html@5 %3Chtml%3Ev2
put com.cnn.www contents:html@6 %3Chtml%3Ev3
put com.cnn.www anchor:cnnsi.com@9 CNN
put com.cnn.www anchor:my.look.ca@8 CNN.com
put com.example.www contents:html %3Chtml%3Ehello
EOB
	echo "cellfs: seeded the demo table $MNT/webtable"
fi
echo "cellfs: $DATA mounted at $MNT; try: ls $MNT/webtable/@"
echo "cellfs: unmount with: fusermount3 -u $MNT"
