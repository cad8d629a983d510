# cellfs: one Makefile.  `make`, `make check`, `make run`, `make bench`.
# SANITIZE=address,undefined or SANITIZE=thread builds a separate variant
# under build/<variant>/; the plain build also puts cellfs and cellfs-fsck
# at the top of the tree.

SANITIZE ?=
comma := ,
VARIANT := $(if $(SANITIZE),$(subst $(comma),-,$(SANITIZE)),default)
B := build/$(VARIANT)

CC ?= cc
OPT ?= -O2 -g
WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
	-Wwrite-strings -Wvla -fno-common -Wno-unused-parameter
ifdef CI
WARN += -Werror
endif
ifneq ($(SANITIZE),)
# gcc's -fsanitize=undefined leaves out float-to-integer conversions out
# of range (undefined behaviour clang's finds): asked for by name
SANFLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	$(if $(findstring undefined,$(SANITIZE)),-fsanitize=float-cast-overflow) \
	-fno-omit-frame-pointer
OPT := -O1 -g
endif

PKGS := fuse3 sqlite3 snappy libzstd
CPPFLAGS = -I. -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	$(shell pkg-config --cflags fuse3 2>/dev/null)
CFLAGS = -std=c11 $(OPT) $(WARN) $(SANFLAGS) -pthread -MMD -MP
LDFLAGS = $(SANFLAGS) -pthread
LIBS = -lsqlite3 -lsnappy -lzstd -lpcre2-8 -ljansson -lm
NET_LIBS = -lmicrohttpd -lz
FUSE_LIBS = $(shell pkg-config --libs fuse3 2>/dev/null)

LIB_SRC := $(wildcard util/*.c meta/*.c engine/*.c tsd/*.c)
FS_SRC := $(wildcard fs/*.c)
NET_SRC := $(wildcard net/*.c)
FS_MAIN := fs/main.c
FSCK_MAIN := fs/fsck_main.c
FS_LIB_SRC := $(filter-out $(FS_MAIN) $(FSCK_MAIN),$(FS_SRC))
TEST_SRC := $(wildcard tests/test-*.c)
HELPER_SRC := $(wildcard tests/helper-*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)
SOAK := $(if $(wildcard tests/soak/soak.c),$(B)/tests/soak/soak)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz-%.c=%)

LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
FS_LIB_OBJ := $(FS_LIB_SRC:%.c=$(B)/%.o)
NET_OBJ := $(NET_SRC:%.c=$(B)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
HELPER_BIN := $(HELPER_SRC:tests/%.c=$(B)/tests/%)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(B)/tests/bench/%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/fuzz/%)
DAEMON := $(if $(wildcard $(FS_MAIN)),$(B)/cellfs)
FSCK := $(if $(wildcard $(FSCK_MAIN)),$(B)/cellfs-fsck)

# Debian packages the build, the tests and the benchmarks need (libzstd-dev:
# the COMPRESSION=ZSTD block codec; python3:
# t1210 plays systemd's notify socket; man-db: t1240 renders the man
# pages).  promtool (package prometheus, ~100 MB) is used by t1200 only
# when present.
DEBS := build-essential pkg-config libfuse3-dev fuse3 libsnappy-dev \
	libsqlite3-dev sqlite3 sharness rsync tar attr gnuplot-nox \
	libleveldb-dev librocksdb-dev liblmdb-dev libpcre2-dev cmake curl \
	python3 man-db libmicrohttpd-dev libjansson-dev zlib1g-dev \
	libzstd-dev
# Only `make fuzz` needs these (clang and libFuzzer's runtime): make check
# runs the fuzz targets over their corpus with a plain driver instead.
FUZZ_DEBS := clang libclang-rt-14-dev

.SECONDARY:
.PHONY: all deps check check-build check-thread run bench bench-quick clean \
	peers install uninstall fuzz fuzz-build fuzz-run soak
all: $(B)/libcellfs.a $(DAEMON) $(FSCK) $(TEST_BIN) $(HELPER_BIN) $(BENCH_BIN) \
	$(FUZZ_BIN) $(SOAK)
ifeq ($(VARIANT),default)
all: $(if $(DAEMON),cellfs) $(if $(FSCK),cellfs-fsck)
cellfs: $(B)/cellfs
	cp $< $@
cellfs-fsck: $(B)/cellfs-fsck
	cp $< $@
endif

# Installs what is missing (as root through apt-get; otherwise says what
# to install).
deps:
	@missing=$$(for p in $(DEBS) $(EXTRA_DEBS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "cellfs: installing Debian packages:" $$missing; \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				$$missing >/dev/null; \
		else \
			sudo apt-get update -qq && \
			sudo DEBIAN_FRONTEND=noninteractive apt-get install \
				-y -qq $$missing >/dev/null; \
		fi; \
	fi

$(B)/libcellfs.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/cellfs: $(B)/$(FS_MAIN:.c=.o) $(FS_LIB_OBJ) $(NET_OBJ) $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) $(NET_LIBS) $(LIBS)

$(B)/cellfs-fsck: $(B)/$(FSCK_MAIN:.c=.o) $(FS_LIB_OBJ) $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) $(LIBS)

$(B)/tests/%: $(B)/tests/%.o $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Benchmarks: programs that print tables (tests/bench/), built by
# `make` so they do not rot, run by `make bench` / `make bench-quick`.
$(B)/tests/bench/%: $(B)/tests/bench/%.o $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# db_bench compares the engine with its peers, linked in one binary.
# The plain build links Debian's LevelDB and RocksDB, which are built
# with assertions live; make bench links db_bench-release instead, the
# same program against release builds of both (tests/bench/peers.sh
# builds them once into build/peers/).
PEER_LIBS = -lleveldb -lrocksdb -llmdb
$(B)/tests/bench/db_bench: $(B)/tests/bench/db_bench.o $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PEER_LIBS) $(LIBS) -lstdc++
PEERS := build/peers
$(B)/tests/bench/db_bench-release.o: tests/bench/db_bench.c
	@mkdir -p $(@D)
	$(CC) -I$(PEERS)/include $(CPPFLAGS) -DPEERS_RELEASE $(CFLAGS) \
		-c -o $@ $<
$(B)/tests/bench/db_bench-release: $(B)/tests/bench/db_bench-release.o \
		$(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PEERS)/lib/libleveldb.a \
		$(PEERS)/lib/librocksdb.a -llmdb -lsnappy $(LIBS) -lstdc++ -ldl
peers:
	sh tests/bench/peers.sh $(PEERS)

# memfs is the floor of the filesystem benchmark: a minimal FUSE
# filesystem, no engine behind it.  fs_bench needs only libc.
$(B)/tests/bench/memfs: $(B)/tests/bench/memfs.o
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS)
$(B)/tests/bench/fs_bench: $(B)/tests/bench/fs_bench.o
	$(CC) $(LDFLAGS) -o $@ $^
# scan_bench also makes the scan file's bytes in its own thread, fs/scan.c
# without FUSE: the split of the mount's cost between the two.
$(B)/tests/bench/scan_bench: $(B)/tests/bench/scan_bench.o \
		$(B)/fs/scan.o $(B)/fs/filter.o $(B)/fs/errmap.o $(B)/libcellfs.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(FUSE_LIBS)

# Fuzz targets (tests/fuzz/fuzz-NAME.c, docs/testing.md): linked with
# libFuzzer in the fuzz variant (clang, build/fuzz/), with driver.c (runs
# each file of a corpus once) in every other.  The fs objects are linked
# in for the .batch and .ctl parsers, the net ones for the HTTP API.
ifeq ($(VARIANT),fuzz)
FUZZ_MAIN :=
FUZZ_LINK := -fsanitize=fuzzer
else
FUZZ_MAIN := $(B)/tests/fuzz/driver.o
FUZZ_LINK :=
endif
$(B)/tests/fuzz/%: $(B)/tests/fuzz/%.o $(B)/tests/fuzz/common.o $(FUZZ_MAIN) \
		$(FS_LIB_OBJ) $(NET_OBJ) $(B)/libcellfs.a
	$(CC) $(LDFLAGS) $(FUZZ_LINK) -o $@ $^ $(FUSE_LIBS) $(NET_LIBS) \
		$(LIBS)

# The kill -9 / power-cut soak (tests/soak/soak.c, docs/testing.md): a
# program of its own, needing only libc; it runs the daemon it is given.
$(B)/tests/soak/soak: $(B)/tests/soak/soak.o
	$(CC) $(LDFLAGS) -o $@ $^

# make soak SOAK_KILLS=1000 SOAK_SYNC=always [SOAK_POWER=1]: the long run.
SOAK_KILLS ?= 200
SOAK_SYNC ?= batch
soak: all
	nice $(SOAK) -b $(CURDIR)/$(B) -k $(SOAK_KILLS) -s $(SOAK_SYNC) \
		$(if $(SOAK_POWER),-p)

# make fuzz: every target under libFuzzer, ASan and UBSan.  make fuzz-run
# FUZZ_S=60: each for FUZZ_S seconds (nice), new inputs kept under
# build/fuzz/corpus/NAME/, the seeds read from tests/fuzz/corpus/NAME/, a
# crash saved as build/fuzz/crash-NAME-*.  FUZZ=NAME...: only those.
FUZZ_S ?= 60
FUZZ ?= $(FUZZ_NAMES)
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz:
	@$(MAKE) --no-print-directory EXTRA_DEBS="$(FUZZ_DEBS)" deps
	@$(MAKE) --no-print-directory VARIANT=fuzz CC=clang OPT="-O1 -g" \
		SANFLAGS="$(FUZZ_SAN)" fuzz-build
fuzz-build: $(FUZZ_BIN)

fuzz-run: fuzz
	@for t in $(FUZZ); do \
		mkdir -p build/fuzz/corpus/$$t && \
		echo "fuzz-$$t: $(FUZZ_S) s" && \
		nice build/fuzz/tests/fuzz/fuzz-$$t -max_total_time=$(FUZZ_S) \
			-timeout=20 -rss_limit_mb=1024 -print_final_stats=1 \
			-artifact_prefix=build/fuzz/crash-$$t- \
			build/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			2>build/fuzz/fuzz-$$t.log || \
		{ tail -n 40 build/fuzz/fuzz-$$t.log; exit 1; }; \
		grep -E "^stat::(number_of_executed_units|peak_rss_mb)" \
			build/fuzz/fuzz-$$t.log; \
	done

# bench-quick: at most 2 minutes, 100k entries; bench: at most 15.
# fs_bench.sh mounts cellfs, memfs and tmpfs (root) and prints a table
# per target and the ratio table; tsd_put_bench.sh mounts cellfs and
# appends points to MNT/tsd/put, queries them, and weighs them on disk.
bench-quick: deps
	@$(MAKE) --no-print-directory all
	$(B)/tests/bench/engine_bench -n 100000
	@$(MAKE) --no-print-directory peers
	@$(MAKE) --no-print-directory $(B)/tests/bench/db_bench-release
	$(B)/tests/bench/db_bench-release -n 100000
	$(B)/tests/bench/tsd_bench -n 100000
	CELLFS_BUILD=$(CURDIR)/$(B) sh tests/bench/tsd_put_bench.sh -n 200000
	sh tests/bench/fs_bench.sh -q $(CURDIR)/$(B)

bench: deps
	@$(MAKE) --no-print-directory all
	$(B)/tests/bench/engine_bench -n 1000000
	@$(MAKE) --no-print-directory peers
	@$(MAKE) --no-print-directory $(B)/tests/bench/db_bench-release
	$(B)/tests/bench/db_bench-release -n 1000000 -r 2
	$(B)/tests/bench/tsd_bench
	CELLFS_BUILD=$(CURDIR)/$(B) sh tests/bench/tsd_put_bench.sh
	sh tests/bench/fs_bench.sh $(CURDIR)/$(B)

# C tests (tests/test-*.c) and shell tests (tests/t[0-9]*.sh), by prove.
# Shell tests find the binaries through CELLFS_BUILD.  Sanitizer builds
# list huge rows of 200,000 entries, not a million, and allow their
# allocators 64 MiB, not 32 (t1165).
check: deps
	@$(MAKE) --no-print-directory check-build

check-build: all
	@cd tests && CELLFS_BUILD=$(CURDIR)/$(B) CELLFS_TOP=$(CURDIR) \
		$(if $(SANITIZE),CELLFS_HUGE_N=200000 CELLFS_HUGE_HWM_MB=64) \
		prove $(PROVE_OPTS) --exec '' \
		$(TEST_BIN:$(B)/tests/%=../$(B)/tests/%) \
		$(addprefix ./,$(notdir $(wildcard tests/t[0-9]*.sh)))

# The concurrent tests under ThreadSanitizer (the whole suite under TSan
# would take too long on two cores).
TSAN_TESTS := $(basename $(notdir $(wildcard $(addprefix tests/,\
	test-engine-concurrent.c test-engine-append.c test-memstore.c \
	test-wal.c test-cache.c \
	test-sst.c test-tsd.c test-engine-readpath.c test-engine-merge.c))))
check-thread: deps
	@$(MAKE) --no-print-directory SANITIZE=thread \
		$(addprefix build/thread/tests/,$(TSAN_TESTS))
	@cd tests && TSAN_OPTIONS=halt_on_error=1 prove $(PROVE_OPTS) --exec '' \
		$(addprefix ../build/thread/tests/,$(TSAN_TESTS))

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the programs, their man
# pages, the docs, the contrib/ scripts and the systemd units (the man
# pages' and units' /usr/local paths rewritten to PREFIX).  `make uninstall` removes exactly
# these files and the directories only cellfs uses.  mount.fuse3 finds
# PREFIX/bin/cellfs in PATH for `fuse.cellfs` fstab lines (cellfs(8)).
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
DOCDIR = $(PREFIX)/share/doc/cellfs
LIBDIR = $(PREFIX)/lib/cellfs
UNITDIR = $(PREFIX)/lib/systemd/system
INST_BIN := cellfs cellfs-fsck
INST_MAN5 := $(notdir $(wildcard man/*.5))
INST_MAN8 := $(notdir $(wildcard man/*.8))
INST_DOC := README.md $(wildcard docs/*.md)
INST_LIB := contrib/tcollector-run.sh contrib/cellfs-textfile.sh
INST_COLL := $(sort $(wildcard contrib/collectors/*/*.sh))
INST_UNIT := $(notdir $(wildcard contrib/*.service))
INST_FILES = $(addprefix $(BINDIR)/,$(INST_BIN)) \
	$(addprefix $(MANDIR)/man5/,$(INST_MAN5)) \
	$(addprefix $(MANDIR)/man8/,$(INST_MAN8)) \
	$(addprefix $(DOCDIR)/,$(notdir $(INST_DOC))) \
	$(addprefix $(LIBDIR)/,$(notdir $(INST_LIB))) \
	$(INST_COLL:contrib/%=$(LIBDIR)/%) \
	$(addprefix $(UNITDIR)/,$(INST_UNIT))
INST_DIRS = $(sort $(dir $(INST_COLL:contrib/%=$(LIBDIR)/%))) \
	$(LIBDIR)/collectors/ $(LIBDIR)/ $(DOCDIR)/

install: $(B)/cellfs $(B)/cellfs-fsck
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man5" \
		"$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(DOCDIR)" \
		"$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(UNITDIR)"
	install -m 755 $(addprefix $(B)/,$(INST_BIN)) "$(DESTDIR)$(BINDIR)"
	for m in $(INST_MAN5:%=man5/%) $(INST_MAN8:%=man8/%); do \
		sed 's|/usr/local/|$(PREFIX)/|g' man/$${m#man?/} \
			>"$(DESTDIR)$(MANDIR)/$$m" && \
		chmod 644 "$(DESTDIR)$(MANDIR)/$$m" || exit; \
	done
	install -m 644 $(INST_DOC) "$(DESTDIR)$(DOCDIR)"
	install -m 755 $(INST_LIB) "$(DESTDIR)$(LIBDIR)"
	for f in $(INST_COLL:contrib/%=%); do \
		install -D -m 755 contrib/$$f "$(DESTDIR)$(LIBDIR)/$$f" || \
			exit; \
	done
	for u in $(INST_UNIT); do \
		sed 's|/usr/local/|$(PREFIX)/|g' contrib/$$u \
			>"$(DESTDIR)$(UNITDIR)/$$u" && \
		chmod 644 "$(DESTDIR)$(UNITDIR)/$$u" || exit; \
	done

uninstall:
	for f in $(INST_FILES); do rm -f "$(DESTDIR)$$f"; done
	-for d in $(INST_DIRS); do rmdir "$(DESTDIR)$$d"; done 2>/dev/null

# `make run`: mounts ./run/data at ./run/mnt (docs/usage.md).
run: deps
	@$(MAKE) --no-print-directory all
	@sh contrib/make-run.sh $(CURDIR)/$(B)

clean:
	rm -rf build cellfs cellfs-fsck

-include $(shell find build -name '*.d' 2>/dev/null)
