/* summary.json as the commands that read results take it: `feedbench compare` (the run against
 * itself, with Markdown, JUnit and JSON outputs), `feedbench history`, `feedbench baseline save`
 * and `compare --baseline` against that saved baseline, and `feedbench plot` on the run folder
 * (which rewrites report.md from it; gnuplot is /bin/true, so no picture is drawn).
 *
 * Input: the bytes of one run folder's summary.json.
 */
#include <stdio.h>
#include <stdlib.h>

#include "compare.h"
#include "fuzz_common.h"
#include "report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("FEEDBENCH_GNUPLOT", "/bin/true", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char run[4096], out[4096], md[4096], junit[4096], json[4096], bl[4096], sum[4096];

	fuzz_clean();
	fuzz_write("results/run", "summary.json", data, size);
	fuzz_path(run, sizeof(run), "results", "run");
	fuzz_path(sum, sizeof(sum), "results/run", "summary.json");
	fuzz_path(out, sizeof(out), "out", "");
	fuzz_path(md, sizeof(md), "out", "compare.md");
	fuzz_path(junit, sizeof(junit), "out", "compare.xml");
	fuzz_path(json, sizeof(json), "out", "compare.json");
	fuzz_path(bl, sizeof(bl), "baselines", "");
	fuzz_write("out", "placeholder", "", 0);

	fuzz_main(compare_main, "compare", run, sum, "--markdown", md, "--junit", junit, "--json",
		  json, "--metric", "all", "--allow-cached", NULL);
	fuzz_main(history_main, "history", run, "--no-plot", "--output", out, NULL);
	if (fuzz_main(baseline_main, "baseline", "save", run, "--name", "base", "--baselines", bl,
		      NULL) == 0)
		fuzz_main(compare_main, "compare", "--baseline", "base", "--baselines", bl, run,
			  "--quiet", "--allow-cached", NULL);
	fuzz_main(plot_main, "plot", run, NULL);
	return 0;
}
