/* Readers of summary.json shared by report, sweep, compare and history: numbers at dotted
 * paths, strings, and the values of every metric per repetition. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

/* ---- reading summary.json -------------------------------------------------------------- */

double summary_num(json_t *obj, const char *path)
{
	char key[128];
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		obj = json_object_get(obj, key);
		path = dot + 1;
	}
	obj = json_object_get(obj, path);
	return json_is_number(obj) ? json_number_value(obj) : NAN;
}

const char *summary_str(json_t *obj, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : def;
}

/* Any scalar as text: the effective config in summary.json keeps numbers as numbers. */
const char *summary_text(json_t *obj, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.9g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "?");
	return buf;
}

/* Number under either of two names: repetitions[] has flat names ("latency_p99_seconds"),
 * epochs[] nests them ("latency_seconds.p99"). */
static double json_num2(json_t *o, const char *flat, const char *nested)
{
	double v = summary_num(o, flat);

	return isnan(v) ? summary_num(o, nested) : v;
}

/* One repetition's (or one epoch's) metrics, NAN where summary.json has none. */
static void report_metrics_of(json_t *o, double v[SWM_COUNT])
{
	for (int i = 0; i < metric_count; i++) {
		const struct metric *mt = &metric_table[i];
		v[mt->m] =
		    mt->nested ? json_num2(o, mt->column, mt->nested) : summary_num(o, mt->column);
	}
}

/* Without a repetitions[] array, a repetition is the epochs that carry its number: rates from
 * the summed bytes, operations and samples over the summed wall time; AU the mean of its
 * epochs; percentiles the worst epoch's (an upper bound: histograms are not in the JSON). */
static int report_reps_from_epochs(json_t *epochs, double (*v)[SWM_COUNT], int max)
{
	int n = 0;
	size_t i;
	json_t *e;

	for (int rep = 1; n < max; rep++) {
		double bytes = 0, ops = 0, samples = 0, opens = 0, wall = 0, au = 0, ep[SWM_COUNT];
		int count = 0;

		for (int m = 0; m < SWM_COUNT; m++)
			v[n][m] = NAN;
		json_array_foreach(epochs, i, e)
		{
			double r = summary_num(e, "repetition");
			if ((isnan(r) ? 1 : (int)r) != rep)
				continue;
			bytes += summary_num(e, "bytes_read");
			ops += summary_num(e, "read_ops");
			samples += summary_num(e, "samples");
			opens += summary_num(e, "opens");
			wall += summary_num(e, "wall_seconds");
			report_metrics_of(e, ep);
			au += ep[SWM_AU];
			/* lower-is-better metrics (percentiles): the worst epoch's */
			for (int m = 0; m < SWM_COUNT; m++)
				if (!metric_of((enum sweep_metric)m)->higher_better &&
				    (isnan(v[n][m]) || ep[m] > v[n][m]))
					v[n][m] = ep[m];
			count++;
		}
		if (count == 0)
			break;
		if (wall > 0) {
			v[n][SWM_BANDWIDTH] = bytes / wall / 1048576.0;
			v[n][SWM_IOPS] = ops / wall;
			v[n][SWM_SAMPLES] = samples / wall;
			if (!isnan(opens))
				v[n][SWM_OPENS] = opens / wall;
		}
		v[n][SWM_AU] = au / count;
		n++;
	}
	return n;
}

/* Values of every metric per repetition: repetitions[] holds what the runner reduced per
 * repetition (exact percentiles from merged histograms); what it lacks comes from the epochs of
 * that repetition; a summary with neither gives one repetition from "metric". */
int summary_repetition_values(struct json_t *root, double (*v)[SWM_COUNT], int max)
{
	json_t *reps;
	size_t i;
	int n;

	n = report_reps_from_epochs(json_object_get(root, "epochs"), v, max);
	reps = json_object_get(root, "repetitions");
	if (json_is_array(reps) && json_array_size(reps) > 0) {
		json_t *o;
		double one[SWM_COUNT];

		json_array_foreach(reps, i, o)
		{
			if ((int)i >= max || !json_is_object(o))
				continue;
			report_metrics_of(o, one);
			if ((int)i >= n) {
				for (int m = 0; m < SWM_COUNT; m++)
					v[i][m] = NAN;
				n = (int)i + 1;
			}
			for (int m = 0; m < SWM_COUNT; m++)
				if (!isnan(one[m]))
					v[i][m] = one[m];
		}
	}
	if (n == 0 && max > 0) {
		json_t *m = json_object_get(root, "metric");
		for (int k = 0; k < metric_count; k++)
			v[0][metric_table[k].m] = summary_num(m, metric_table[k].total);
		n = 1;
	}
	return n;
}
