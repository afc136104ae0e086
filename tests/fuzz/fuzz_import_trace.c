/* `feedbench import-trace` on hostile traces (bench/import_trace_read.c, import_trace_state.c):
 * the line bounds, the JSON events, dftracer's file hashes, darshan-dxt-parser's lines, and the
 * derivation of the workload from whatever was accepted.
 *
 * Input: one trace file. Invariants on every input: reading ends with 0 or -1 and a message
 * naming the input and a line; what was accepted adds up (the files' reads and bytes are the
 * trace's, no file was read past its furthest byte); the derived workload reads no more files
 * than were named, has at least one epoch and reader thread, and a batch only with compute
 * events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_trace.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct it *t = calloc(1, sizeof(*t));
	struct it_workload d;
	uint64_t reads = 0, bytes = 0;

	if (!t || !(t->threads = calloc(IT_MAX_THREADS, sizeof(*t->threads)))) {
		free(t);
		return 0;
	}
	t->t_first = -1;
	int rc = it_read_buffer(t, "fuzz.pfw", (const char *)data, size);
	FUZZ_EXPECT(rc == 0 || rc == -1, "it_read_buffer returned %d", rc);
	FUZZ_EXPECT(rc == 0 || strncmp(t->err, "'fuzz.pfw' line ", 16) == 0,
		    "a failure without file and line: %s", t->err);
	for (size_t i = 0; i < t->nfiles; i++) {
		reads += t->files[i].reads;
		bytes += t->files[i].bytes;
	}
	FUZZ_EXPECT(reads == t->reads && bytes == t->bytes,
		    "files hold %llu reads of %llu bytes, the trace %llu of %llu",
		    (unsigned long long)reads, (unsigned long long)bytes,
		    (unsigned long long)t->reads, (unsigned long long)t->bytes);
	if (rc == 0 && t->reads > 0) {
		it_derive(t, &d);
		FUZZ_EXPECT(d.files >= 1 && d.files <= t->nfiles, "%llu files of %zu named",
			    (unsigned long long)d.files, t->nfiles);
		FUZZ_EXPECT(d.epochs >= 1 && d.threads >= 1, "epochs %llu, threads %llu",
			    (unsigned long long)d.epochs, (unsigned long long)d.threads);
		FUZZ_EXPECT(d.batch == 0 || t->computes > 0, "a batch without compute events");
	}
	it_free(t);
	free(t);
	return 0;
}
