/* sweep_results.json as the commands that read a finished sweep take it: `feedbench plot` (each
 * point's pictures and report, the sweep charts and sweep.md; gnuplot is /bin/true),
 * `feedbench compare` of the sweep against itself, and `feedbench history` over the folder.
 *
 * Input: the bytes of sweep_results.json. The rest of the sweep folder is fixed: sweep.json and
 * sweep.csv from tests/fuzz/companions/, and the folders point-1 and point-2 holding a run's
 * summary.json. A run folder `outside` beside the sweep must stay untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "fuzz_common.h"
#include "report.h"

static void fuzz_sweep_tree(void)
{
	fuzz_clean();
	fuzz_copy("companions/sweep.json", "sweep");
	fuzz_copy("companions/sweep.csv", "sweep");
	fuzz_copy("companions/summary.json", "sweep/point-1");
	fuzz_copy("companions/summary.json", "sweep/point-2");
	/* A run folder beside the sweep: a point's "dir" of "../outside" names it, and nothing
	 * may be written there. */
	fuzz_copy("companions/summary.json", "outside");
	fuzz_write("outside", "report.md", "precious", 8);
}

/* Aborts when a command wrote into the folder outside the sweep. */
static void fuzz_check_outside(const char *command)
{
	char path[4096], buf[16] = "";
	FILE *f = fopen(fuzz_path(path, sizeof(path), "outside", "report.md"), "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	FUZZ_EXPECT(strcmp(buf, "precious") == 0, "%s wrote report.md outside the sweep folder",
		    command);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("FEEDBENCH_GNUPLOT", "/bin/true", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[4096], out[4096];

	/* The scratch tree is the fence: one ".." reaches at most the folder holding the sweep
	 * and `outside`; more could reach folders of this machine that hold a summary.json. */
	const void *dots = memmem(data, size, "..", 2);
	if (dots && memmem((const char *)dots + 2,
			   size - (size_t)((const uint8_t *)dots + 2 - data), "..", 2))
		return -1;
	fuzz_sweep_tree();
	fuzz_write("sweep", "sweep_results.json", data, size);
	fuzz_path(dir, sizeof(dir), "sweep", "");
	fuzz_path(out, sizeof(out), "out", "");
	fuzz_write("out", "placeholder", "", 0);

	fuzz_main(compare_main, "compare", dir, dir, "--metric", "all", "--allow-cached", NULL);
	fuzz_main(history_main, "history", dir, "--no-plot", "--output", out, NULL);
	fuzz_check_outside("compare or history");
	fuzz_main(plot_main, "plot", dir, NULL);
	fuzz_check_outside("plot");
	return 0;
}
