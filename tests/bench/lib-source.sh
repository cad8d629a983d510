# lib-source.sh: upstream sources from Debian's pool, for the scripts that
# build a peer's release library (peers.sh, fuse_uring.sh).  Sourced.

# unpack_checked URL SHA256 TARBALL DIR: TARBALL downloaded from URL
# unless it already has SHA256 (it must have it after), then unpacked
# into DIR (made empty first), its top folder stripped.
unpack_checked() {
	if ! echo "$2  $3" | sha256sum -c --quiet >/dev/null 2>&1; then
		echo "$(basename "$0"): downloading $1" >&2
		curl -sSfL -o "$3" "$1"
		echo "$2  $3" | sha256sum -c --quiet
	fi
	rm -rf "$4"
	mkdir -p "$4"
	tar xzf "$3" -C "$4" --strip-components=1
}
