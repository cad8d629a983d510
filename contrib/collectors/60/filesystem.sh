#!/bin/sh
# filesystem.sh: space and inodes of the mounted filesystems listed in
# /proc/mounts (pseudo filesystems skipped), as tcollector's dfstat
# collector names them, with mount=PATH fstype=TYPE:
#
#   df.bytes.total  df.bytes.used  df.bytes.free (available to users)
#   df.inodes.total df.inodes.used df.inodes.free
set -eu
host=${COLLECTOR_HOST:-$(uname -n)}
ts=$(date +%s)
skip='^(proc|sysfs|devpts|devtmpfs|cgroup|cgroup2|securityfs|pstore|debugfs|tracefs|mqueue|hugetlbfs|configfs|fusectl|binfmt_misc|autofs|bpf|rpc_pipefs|nsfs|efivarfs|selinuxfs|squashfs|ramfs|tmpfs|overlay|fuse\.cellfs|fuse\.gvfsd-fuse|fuse\.portal)$'
seen=' '
while read -r dev mnt fstype rest; do
	if printf '%s\n' "$fstype" | grep -Eq "$skip"; then
		continue
	fi
	# /proc/mounts escapes spaces and such as \040
	path=$(printf '%b' "$(printf '%s' "$mnt" | sed 's/\\\([0-7][0-7][0-7]\)/\\0\1/g')")
	case $seen in *" $mnt "*) continue ;; esac
	seen="$seen$mnt "
	out=$(stat -f -c '%S %b %f %a %c %d' -- "$path" 2>/dev/null) || continue
	printf '%s %s %s %s\n' "$out" "$mnt" "$fstype" "$host"
done < /proc/mounts | awk -v ts="$ts" '
function clean(s) { gsub(/[^A-Za-z0-9._\/-]/, "_", s); return s }
$2 > 0 {
	bs = $1; total = $2 * bs; free = $3 * bs; avail = $4 * bs
	m = clean($7); t = clean($8); h = clean($9)
	tags = sprintf("mount=%s fstype=%s host=%s", m, t, h)
	printf "df.bytes.total %s %.0f %s\n", ts, total, tags
	printf "df.bytes.used %s %.0f %s\n", ts, total - free, tags
	printf "df.bytes.free %s %.0f %s\n", ts, avail, tags
	if ($5 > 0) {
		printf "df.inodes.total %s %.0f %s\n", ts, $5, tags
		printf "df.inodes.used %s %.0f %s\n", ts, $5 - $6, tags
		printf "df.inodes.free %s %.0f %s\n", ts, $6, tags
	}
}'
