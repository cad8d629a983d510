/*
 * fuzz.h: what every fuzz target (tests/fuzz/fuzz-*.c) shares.
 *
 * A target defines LLVMFuzzerTestOneInput: one input, any bytes, must
 * never crash, leak or hang.  `make fuzz` links each with libFuzzer
 * (clang, build/fuzz/); every other build links it with driver.c, which
 * feeds it the files of a corpus directory once (make check:
 * tests/t0990-fuzz-corpus.sh).  docs/testing.md says how to run them.
 */
#ifndef CF_FUZZ_H
#define CF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scratch directory of this process (made at the first call, removed
 * at exit); the path stays valid. */
const char *fuzz_dir(void);
struct cf_db;
/*
 * The target's db, in fuzz_dir()/NAME (no background threads, sync=none):
 * made empty at the first call and again every `every` calls, so state
 * does not pile up across inputs; closed and removed at exit.  *fresh is
 * set when it was just made (the caller creates its tables then).
 * Aborts when the db cannot be opened.
 */
struct cf_db *fuzz_db(const char *name, unsigned every, int *fresh);
/* Writes data[0..size) to path (created or truncated); 0 or -1. */
int fuzz_write(const char *path, const void *data, size_t size);

#endif
