/* Verdicts that explain themselves (see verdict.h). */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double verdict_rank_au(const struct step_totals *t)
{
	return t->step > 0 ? 100 * t->busy / t->step : 0;
}

void verdict_rank_lost(const struct step_totals *t, struct lost_time *out)
{
	*out = (struct lost_time){0};
	if (!(t->step > 0))
		return;
	out->data_wait = t->wait / t->step;
	out->copy = t->copy / t->step;
	out->barrier = t->barrier / t->step;
	out->other = fmax(0, 1 - t->busy / t->step - out->data_wait - out->copy - out->barrier);
}

int verdict_mean(const struct step_totals *t, int n, double *au, struct lost_time *lost,
		 double *au_min, double *au_max, double *conf_au)
{
	double sum = 0, conf = 0, lo = INFINITY, hi = -INFINITY;
	struct lost_time acc = {0};
	int k = 0;

	for (int r = 0; r < n; r++) {
		struct lost_time l;
		if (!(t[r].step > 0))
			continue;
		double a = verdict_rank_au(&t[r]);
		verdict_rank_lost(&t[r], &l);
		sum += a;
		conf += 100 * t[r].conf / t[r].step;
		lo = fmin(lo, a);
		hi = fmax(hi, a);
		acc.data_wait += l.data_wait;
		acc.copy += l.copy;
		acc.barrier += l.barrier;
		acc.other += l.other;
		k++;
	}
	if (k) {
		acc.data_wait /= k;
		acc.copy /= k;
		acc.barrier /= k;
		acc.other /= k;
	}
	*au = k ? sum / k : 0;
	if (lost)
		*lost = acc;
	if (au_min)
		*au_min = k ? lo : 0;
	if (au_max)
		*au_max = k ? hi : 0;
	if (conf_au)
		*conf_au = k ? conf / k : 0;
	return k;
}

const char *verdict_classify(double au_pct, double threshold_pct, const struct lost_time *l,
			     char *why, size_t len)
{
	static const char *const names[] = {"data wait", "host-to-device copy", "step barrier",
					    "other (trainer overhead)"};
	double v[] = {l->data_wait, l->copy, l->barrier, l->other};
	int top = 0;

	for (int i = 1; i < 4; i++)
		if (v[i] > v[top])
			top = i;
	int n = snprintf(why, len,
			 "AU %.2f %% %s threshold %.0f %%; lost time: data wait %.1f %%, copy "
			 "%.1f %%, barrier %.1f %%, other %.1f %% of step time",
			 au_pct, au_pct >= threshold_pct ? ">=" : "<", threshold_pct,
			 100 * l->data_wait, 100 * l->copy, 100 * l->barrier, 100 * l->other);
	if (n < 0 || (size_t)n >= len)
		n = len ? (int)len - 1 : 0;
	if (au_pct >= threshold_pct)
		return "compute-bound";
	if (top == 0 && v[0] > 0) {
		snprintf(why + n, len - (size_t)n, "; data wait is the main loss");
		return "storage-bound";
	}
	if (v[top] > 0)
		snprintf(why + n, len - (size_t)n, "; lost mostly to the %s, not to storage",
			 names[top]);
	else
		snprintf(why + n, len - (size_t)n,
			 "; no lost time measured (computation_time = 0?)");
	return "below threshold, not storage-bound";
}

bool verdict_rule_dataset(double data_bytes, double ram_per_node, int nnodes, bool bypassed,
			  char *why, size_t len)
{
	double need = MLPERF_DATASET_RAM_FACTOR * ram_per_node * (nnodes > 0 ? nnodes : 1);

	if (bypassed || !(ram_per_node > 0) || data_bytes >= need)
		return true;
	snprintf(why, len,
		 "MLPerf Storage rule: the dataset (%.2f GiB) is smaller than %d x the RAM of the "
		 "%d node%s reading it (%.2f GiB) and the page cache is not bypassed (direct = "
		 "true or page_cache = evict | drop): reads may come from memory",
		 data_bytes / 1073741824.0, MLPERF_DATASET_RAM_FACTOR, nnodes > 0 ? nnodes : 1,
		 nnodes > 1 ? "s" : "", need / 1073741824.0);
	return false;
}

bool verdict_rule_steps(double min_steps, double prefetch_batches, char *why, size_t len)
{
	double need = fmax(MLPERF_MIN_STEADY_STEPS, 2 * prefetch_batches);

	if (min_steps >= need)
		return true;
	snprintf(why, len,
		 "MLPerf Storage rule: %.0f measured steps per epoch on the rank with the fewest, "
		 "fewer than %.0f (at least %d and twice the %.0f batches the readers prefetch): "
		 "the epoch may end before the readers reach a steady state; use more files or "
		 "samples, or fewer ranks",
		 min_steps, need, MLPERF_MIN_STEADY_STEPS, prefetch_batches);
	return false;
}

bool verdict_rule_threshold(const char *workload, double threshold, char *why, size_t len)
{
	static const struct {
		const char *prefix;
		double au;
	} own[] = {{"unet3d", 0.90}, {"resnet50", 0.90}, {"cosmoflow", 0.70}};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t n = strlen(own[i].prefix);
		if (strncmp(workload, own[i].prefix, n) != 0 || fabs(threshold - own[i].au) < 1e-9)
			continue;
		snprintf(why, len,
			 "MLPerf Storage rule: au_threshold = %.2f, but %s's own is %.2f: the "
			 "verdict is not MLPerf Storage's",
			 threshold, own[i].prefix, own[i].au);
		return false;
	}
	return true;
}
