/* sweep_results.json as the commands that read a finished sweep take it: `feedbench plot` (each
 * point's pictures and report, the sweep charts and sweep.md; gnuplot is /bin/true),
 * `feedbench compare` of the sweep against itself, and `feedbench history` over the folder.
 *
 * Input: the bytes of sweep_results.json. The rest of the sweep folder is fixed: sweep.json and
 * sweep.csv from tests/fuzz/companions/, and the folders
 * point-1 and point-2 holding a run's summary.json.
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
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("FEEDBENCH_GNUPLOT", "/bin/true", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[4096], out[4096];

	/* `plot` writes report.md into the folder a point's "dir" names: a ".." could reach a
	 * folder outside the scratch tree, so such inputs are not run. */
	if (memmem(data, size, "..", 2))
		return -1;
	fuzz_sweep_tree();
	fuzz_write("sweep", "sweep_results.json", data, size);
	fuzz_path(dir, sizeof(dir), "sweep", "");
	fuzz_path(out, sizeof(out), "out", "");
	fuzz_write("out", "placeholder", "", 0);

	fuzz_main(compare_main, "compare", dir, dir, "--metric", "all", "--allow-cached", NULL);
	fuzz_main(history_main, "history", dir, "--no-plot", "--output", out, NULL);
	fuzz_main(plot_main, "plot", dir, NULL);
	return 0;
}
