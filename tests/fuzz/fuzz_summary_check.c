/* The range checks compare, baseline and history apply to a summary.json (cmp_summary_check,
 * bench/compare_check.c), and the decision made from what they accept (bench/decide.c).
 *
 * Input: the bytes of a summary.json. Invariants: an accepted summary yields per-repetition
 * values that are finite, not negative, AU at most 100 %; the decision module, given those
 * values as both sides, returns an outcome with a finite change and a one-line why, and never
 * calls a sample different from itself.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "decide.h"
#include "fuzz_common.h"

static double values[CMP_MAX_REPS][SWM_COUNT];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
	char why[1024];
	double col[CMP_MAX_REPS];

	if (!root)
		return 0;
	if (cmp_summary_check(root, "fuzz/summary.json", why, sizeof(why)) < 0) {
		FUZZ_EXPECT(strstr(why, "cannot compare") != NULL, "refused without saying so: %s",
			    why);
		json_decref(root);
		return 0;
	}
	int n = summary_repetition_values(root, values, CMP_MAX_REPS);
	for (int m = 0; m < SWM_COUNT; m++) {
		const struct metric *mt = metric_of((enum sweep_metric)m);
		int k = 0;
		for (int i = 0; i < n; i++) {
			double x = values[i][m];
			if (isnan(x))
				continue;
			FUZZ_EXPECT(isfinite(x) && x >= 0, "accepted %s = %g", mt->name, x);
			FUZZ_EXPECT(!mt->points || x <= 100, "accepted %s = %g %%", mt->name, x);
			col[k++] = x;
		}
		struct decide_spec s = {.higher_better = mt->higher_better,
					.scale = mt->points ? DECIDE_POINTS : DECIDE_RELATIVE,
					.floor = mt->points ? 5 : 10,
					.run_noise = mt->run_noise};
		struct decide_result r;
		FUZZ_EXPECT(decide_compare(col, k, col, k, &s, &r) == 0, "spec refused");
		FUZZ_EXPECT(r.why[0] != '\0', "no why");
		if (k > 0) {
			FUZZ_EXPECT(r.change == 0 || isnan(r.change), "a sample against itself: %g",
				    r.change);
			FUZZ_EXPECT(r.outcome == DECIDE_SAME, "a sample differs from itself: %s",
				    r.why);
		}
	}
	json_decref(root);
	return 0;
}
