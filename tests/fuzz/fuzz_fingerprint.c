/* A saved baseline's fingerprint.json as `feedbench compare --baseline NAME` (the host
 * fingerprint against the current run's) and `feedbench baseline list` read it.
 *
 * Input: the bytes of fingerprint.json. The baseline folder holds it beside a run's
 * summary.json (tests/fuzz/companions/), which is also the current result.
 */
#include "compare.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char bl[4096], cur[4096];

	fuzz_clean();
	fuzz_copy("companions/summary.json", "baselines/base");
	fuzz_copy("companions/summary.json", "current");
	fuzz_write("baselines/base", "fingerprint.json", data, size);
	fuzz_path(bl, sizeof(bl), "baselines", "");
	fuzz_path(cur, sizeof(cur), "current", "");

	fuzz_main(compare_main, "compare", "--baseline", "base", "--baselines", bl, cur, "--quiet",
		  "--allow-cached", NULL);
	fuzz_main(baseline_main, "baseline", "list", "--baselines", bl, NULL);
	return 0;
}
