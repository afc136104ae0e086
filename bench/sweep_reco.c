/* The sweep's recommendation (docs/sweeps.md "The recommendation"): per group of points that
 * share their non-numeric values, the smallest values of the ordered knobs whose result is not
 * reliably worse than the group's best (the plateau rule), judged by bench/decide.h, with its
 * gain over the config's values and over the data folder's own layout. No recommendation for
 * a knob that had no effect where it ran (stripe keys on a file system that cannot stripe), nor
 * on bandwidth or samples/s when every point kept the accelerators busy.
 */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

/* The plateau: a point is on it unless Welch's test finds it worse than the best by more than
 * this many % (or AU points), with the metric's run-to-run noise (bench/metrics.c): every point
 * is a run of its own. */
#define SWEEP_PLATEAU_FLOOR 5.0

enum sweep_metric sweep_optimised_metric(const struct sweep_plan *p)
{
	switch (p->optimise) {
	case SWEEP_OPT_AU:
		return SWM_AU;
	case SWEEP_OPT_SAMPLES:
		return SWM_SAMPLES;
	default:
		return SWM_BANDWIDTH;
	}
}

bool sweep_stripe_key(const char *key)
{
	return strncmp(key, "storage.stripe_", 15) == 0 || strcmp(key, "storage.object_size") == 0;
}

static struct decide_spec sweep_spec(const struct sweep_plan *p)
{
	enum sweep_metric m = sweep_optimised_metric(p);
	struct decide_spec s = {
	    .higher_better = metric_of(m)->higher_better,
	    .scale = m == SWM_AU ? DECIDE_POINTS : DECIDE_RELATIVE,
	    .floor = SWEEP_PLATEAU_FLOOR,
	    .run_noise = metric_of(m)->run_noise,
	    .alpha = DECIDE_ALPHA,
	    .power = DECIDE_POWER,
	};
	return s;
}

/* decide_compare of point b against point a on the optimised metric. */
static void sweep_decide(const struct sweep_plan *p, const struct sweep_result *r, long a, long b,
			 struct decide_result *d)
{
	struct decide_spec s = sweep_spec(p);
	int k = p->optimise;

	decide_compare(r[a].opt[k], r[a].nopt, r[b].opt[k], r[b].nopt, &s, d);
}

/* Point i of the plan in group c? at_def: its numeric keys have the config's values. */
static bool sweep_in_group(const struct sweep_plan *p, const struct sweep_reco *c, long i,
			   bool *at_def)
{
	int idx[CFG_MAX_SWEEP];
	bool in = true;

	sweep_point_index(p, i, idx);
	*at_def = true;
	for (int a = 0; a < p->naxes; a++) {
		if (!p->axes[a].numeric && idx[a] != c->group_idx[a])
			in = false;
		/* By value: a zipped list may hold the default more than once. */
		if (p->axes[a].numeric && strcmp(p->axes[a].canon[idx[a]], p->axes[a].def) != 0)
			*at_def = false;
	}
	return in;
}

/* Order of the plateau: the numeric keys' values, the first swept key most significant. */
static int sweep_order_cmp(const struct sweep_plan *p, long i, long j)
{
	int ii[CFG_MAX_SWEEP], jj[CFG_MAX_SWEEP];

	sweep_point_index(p, i, ii);
	sweep_point_index(p, j, jj);
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++) {
			if (p->axes[a].order != o || !p->axes[a].numeric)
				continue;
			double x = p->axes[a].num[ii[a]], y = p->axes[a].num[jj[a]];
			if (x != y)
				return x < y ? -1 : 1;
		}
	return 0;
}

/* The point of group c whose stripe keys have the folder's default count and whose other
 * numeric keys have the config's values; -1 when not swept. */
static long sweep_fs_default_point(const struct sweep_plan *p, const struct sweep_result *r,
				   const struct sweep_reco *c, const struct fs_dir_layout *f)
{
	int idx[CFG_MAX_SWEEP];
	bool any = false;

	for (int a = 0; a < p->naxes; a++)
		any |= strcmp(p->axes[a].key, "storage.stripe_count") == 0;
	if (!f || !f->known || !f->can_stripe || f->stripe_count == 0 || !any)
		return -1;
	for (long i = 0; i < p->npoints; i++) {
		bool at_def, match = true;

		if (!sweep_in_group(p, c, i, &at_def) || !r[i].done)
			continue;
		sweep_point_index(p, i, idx);
		for (int a = 0; a < p->naxes; a++) {
			const struct sweep_axis *ax = &p->axes[a];

			if (!ax->numeric)
				continue;
			if (strcmp(ax->key, "storage.stripe_count") == 0)
				match &= ax->num[idx[a]] == (double)f->stripe_count;
			else if (!sweep_stripe_key(ax->key))
				match &= strcmp(ax->canon[idx[a]], ax->def) == 0;
		}
		if (match)
			return i;
	}
	return -1;
}

/* The points of a group: best, default; the kind of answer it gets. */
static void sweep_group_scan(const struct sweep_plan *p, const struct sweep_result *r,
			     struct sweep_reco *c, bool *any)
{
	enum sweep_metric m = sweep_optimised_metric(p);
	bool numeric_stripe_only = true, any_numeric = false;

	*any = false;
	for (int a = 0; a < p->naxes; a++)
		if (p->axes[a].numeric) {
			any_numeric = true;
			numeric_stripe_only &= sweep_stripe_key(p->axes[a].key);
		}
	for (long i = 0; i < p->npoints; i++) {
		bool at_def;

		if (!sweep_in_group(p, c, i, &at_def))
			continue;
		*any = true;
		c->npoints++;
		if (!r[i].done || r[i].m[m].n == 0)
			continue;
		if (at_def)
			c->def = i;
		if (strstr(r[i].stripe_effective, "unsupported"))
			snprintf(c->fs, sizeof(c->fs), "%s", r[i].fs_type);
		if (c->best < 0 ||
		    r[i].m[m].mean * (metric_of(m)->higher_better ? 1 : -1) >
			r[c->best].m[m].mean * (metric_of(m)->higher_better ? 1 : -1))
			c->best = i;
	}
	if (c->best < 0)
		c->kind = RECO_NONE;
	else if (c->npoints == 1)
		c->kind = RECO_ONE_POINT;
	else if (c->fs[0] && any_numeric && numeric_stripe_only)
		c->kind = RECO_NOT_APPLICABLE;
	else
		c->kind = RECO_PLATEAU;
}

/* The plateau rule: of the points not reliably worse than the best, the smallest values. */
static void sweep_group_plateau(const struct sweep_plan *p, struct sweep_result *r,
				struct sweep_reco *c, const struct fs_dir_layout *f)
{
	enum sweep_metric m = sweep_optimised_metric(p);

	c->pick = -1;
	if (c->kind != RECO_PLATEAU)
		return; /* one point, or a knob without effect: nothing to judge */
	for (long i = 0; i < p->npoints; i++) {
		struct decide_result d;
		bool at_def;

		if (!sweep_in_group(p, c, i, &at_def) || !r[i].done || r[i].m[m].n == 0)
			continue;
		sweep_decide(p, r, c->best, i, &d);
		r[i].vs_best = i == c->best ? DECIDE_SAME : (int)d.outcome;
		r[i].vs_best_change = i == c->best ? 0 : d.change;
		r[i].vs_best_p = i == c->best ? NAN : d.p;
		if (r[i].vs_best == DECIDE_WORSE)
			continue;
		if (c->pick < 0 || sweep_order_cmp(p, i, c->pick) < 0) {
			c->pick = i;
			c->pick_vs_best = d;
		}
	}
	c->over_def.ref = c->def;
	if (c->def >= 0)
		sweep_decide(p, r, c->def, c->pick, &c->over_def.d);
	c->over_fs.ref = sweep_fs_default_point(p, r, c, f);
	if (c->over_fs.ref >= 0)
		sweep_decide(p, r, c->over_fs.ref, c->pick, &c->over_fs.d);
}

/* Every done point at or above the AU threshold: bandwidth and samples/s are what the
 * emulated compute lets through, not what the storage can do. */
static bool sweep_compute_bound(const struct sweep_plan *p, const struct sweep_result *r)
{
	long done = 0;

	if (p->optimise == SWEEP_OPT_AU)
		return false;
	for (long i = 0; i < p->npoints; i++) {
		if (!r[i].done)
			continue;
		if (!r[i].au_pass)
			return false;
		done++;
	}
	return done > 0;
}

int sweep_recommend(const struct sweep_plan *p, struct sweep_result *r,
		    const struct fs_dir_layout *folder, struct sweep_reco **out)
{
	int ngroups = 1, kept = 0;
	bool bound = sweep_compute_bound(p, r);
	struct sweep_reco *reco;

	for (int a = 0; a < p->naxes; a++)
		if (!p->axes[a].numeric)
			ngroups *= p->axes[a].nvalues;
	reco = calloc((size_t)ngroups, sizeof(*reco));
	if (!reco)
		return -ENOMEM;
	for (long i = 0; i < p->npoints; i++)
		r[i].vs_best = -1;
	for (int g = 0; g < ngroups; g++) {
		struct sweep_reco *c = &reco[kept];
		int rest = g;
		bool any;

		memset(c, 0, sizeof(*c));
		/* Group g in mixed radix over the non-numeric axes, last axis fastest. */
		for (int a = p->naxes - 1; a >= 0; a--) {
			if (p->axes[a].numeric) {
				c->group_idx[a] = -1;
				continue;
			}
			c->group_idx[a] = rest % p->axes[a].nvalues;
			rest /= p->axes[a].nvalues;
		}
		c->best = c->def = c->pick = c->over_def.ref = c->over_fs.ref = -1;
		sweep_group_scan(p, r, c, &any);
		if (!any)
			continue; /* zipped axes leave combinations without a point */
		kept++;
		if (c->best < 0)
			continue;
		sweep_group_plateau(p, r, c, folder);
		if (bound && c->kind == RECO_PLATEAU)
			c->kind = RECO_COMPUTE_BOUND;
	}
	*out = reco;
	return kept;
}

/* ---- sentences ---------------------------------------------------------------------------- */

/* "read_threads=8 prefetch_size=4": the numeric values (all values when numeric_only is
 * false), stripe keys left out when no_stripe. */
static void reco_values(const struct sweep_plan *p, long i, bool numeric_only, bool no_stripe,
			char *buf, size_t len)
{
	int idx[CFG_MAX_SWEEP];
	size_t used = 0;

	sweep_point_index(p, i, idx);
	buf[0] = '\0';
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++) {
			if (p->axes[a].order != o || (numeric_only && !p->axes[a].numeric) ||
			    (no_stripe && sweep_stripe_key(p->axes[a].key)))
				continue;
			int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
					 p->axes[a].name, p->axes[a].values[idx[a]]);
			if (w > 0 && (size_t)w < len - used)
				used += (size_t)w;
		}
}

static void reco_group_label(const struct sweep_plan *p, const struct sweep_reco *c, char *buf,
			     size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++) {
			if (p->axes[a].order != o || p->axes[a].numeric)
				continue;
			int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
					 p->axes[a].name, p->axes[a].values[c->group_idx[a]]);
			if (w > 0 && (size_t)w < len - used)
				used += (size_t)w;
		}
}

/* The names of the swept stripe keys: "stripe_count". */
static void reco_stripe_names(const struct sweep_plan *p, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int a = 0; a < p->naxes; a++)
		if (sweep_stripe_key(p->axes[a].key)) {
			int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 p->axes[a].name);
			if (w > 0 && (size_t)w < len - used)
				used += (size_t)w;
		}
}

/* "better, +57.1 %, p=0.001" or "inconclusive, +3.4 %: run 5 more repetitions a side". */
static void reco_outcome(const struct decide_result *d, const char *unit, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%+.1f%s, %s", d->change, unit,
				    decide_outcome_name(d->outcome));

	if (!isnan(d->p) && n < len)
		n += (size_t)snprintf(buf + n, len - n, " (p=%.2g)", d->p);
	if (d->outcome == DECIDE_INCONCLUSIVE && d->reps_needed > 0 && n < len)
		snprintf(buf + n, len - n, ": run %d more repetitions a side to tell it",
			 d->reps_needed - (d->a.n < d->b.n ? d->a.n : d->b.n));
	else if (d->outcome == DECIDE_INCONCLUSIVE && n < len)
		snprintf(buf + n, len - n, ": more repetitions cannot tell it (run-to-run noise)");
}

/* One group's sentence. */
static void reco_line(const struct sweep_plan *p, const struct sweep_result *r,
		      const struct sweep_reco *c, const struct fs_dir_layout *f, char *line,
		      size_t len)
{
	enum sweep_metric m = sweep_optimised_metric(p);
	const char *unit = m == SWM_AU ? " points" : " %", *sfx = metric_of(m)->suffix;
	char g[512], v[512], a[64], b[64], o[256], names[128];
	size_t n;

	reco_group_label(p, c, g, sizeof(g));
	n = (size_t)snprintf(line, len, "%s%s", g, *g ? ": " : "");
	if (c->kind == RECO_NONE) {
		snprintf(line + n, len - n, "no completed point");
		return;
	}
	reco_values(p, c->best, true, false, v, sizeof(v));
	sweep_fmt_stat(&r[c->best].m[m], m, a, sizeof(a));
	if (c->kind == RECO_ONE_POINT) {
		snprintf(line + n, len - n, "one point (%s): %s %s", v, a, sfx);
		return;
	}
	reco_stripe_names(p, names, sizeof(names));
	if (c->kind == RECO_NOT_APPLICABLE) {
		snprintf(line + n, len - n,
			 "%s: not applicable on %s (it cannot stripe: the stripe settings had no "
			 "effect, the points differ by noise only); no recommendation",
			 names, c->fs);
		return;
	}
	if (c->kind == RECO_COMPUTE_BOUND) {
		snprintf(line + n, len - n,
			 "no recommendation on %s: every point kept the accelerators busy (AU at "
			 "or above the threshold), so %s is set by the emulated compute, not by "
			 "the storage; set computation_time = 0 to measure the storage",
			 metric_of(m)->column, metric_of(m)->column);
		return;
	}
	reco_values(p, c->pick, true, c->fs[0] != '\0', v, sizeof(v));
	sweep_fmt_stat(&r[c->pick].m[m], m, a, sizeof(a));
	n += (size_t)snprintf(line + n, len - n, "recommended %s: %s %s", v, a, sfx);
	if (c->pick == c->best) {
		n += (size_t)snprintf(line + n, len - n, ", the best");
	} else if (n < len) {
		reco_values(p, c->best, true, c->fs[0] != '\0', v, sizeof(v));
		sweep_fmt_stat(&r[c->best].m[m], m, b, sizeof(b));
		n += (size_t)snprintf(line + n, len - n,
				      ", the smallest not reliably worse than the best %s (%s %s; "
				      "%+.1f%s, %s)",
				      v, b, sfx, c->pick_vs_best.change, unit,
				      decide_outcome_name(c->pick_vs_best.outcome));
	}
	if (n < len && c->over_def.ref >= 0 && c->over_def.ref != c->pick) {
		reco_values(p, c->over_def.ref, true, c->fs[0] != '\0', v, sizeof(v));
		reco_outcome(&c->over_def.d, unit, o, sizeof(o));
		n += (size_t)snprintf(line + n, len - n, "; over the config's %s: %s", v, o);
	} else if (n < len && c->over_def.ref == c->pick) {
		n += (size_t)snprintf(line + n, len - n, "; the config's value already");
	} else if (n < len) {
		n += (size_t)snprintf(line + n, len - n, "; the config's values were not swept");
	}
	if (n >= len || !names[0])
		return;
	if (c->fs[0])
		snprintf(line + n, len - n, "; %s: not applicable on %s (it cannot stripe)", names,
			 c->fs);
	else if (c->over_fs.ref >= 0 && c->over_fs.ref != c->pick) {
		reco_outcome(&c->over_fs.d, unit, o, sizeof(o));
		snprintf(line + n, len - n,
			 "; over the folder's default stripe_count=%lld (%s): %s",
			 (long long)f->stripe_count, f->text, o);
	} else if (c->over_fs.ref >= 0)
		snprintf(line + n, len - n, "; the folder's default stripe_count=%lld already (%s)",
			 (long long)f->stripe_count, f->text);
	else if (f && f->known && f->stripe_count > 0)
		snprintf(line + n, len - n,
			 "; the folder's default stripe_count=%lld (%s) was not swept",
			 (long long)f->stripe_count, f->text);
	else
		snprintf(line + n, len - n, "; the folder's default layout is unknown%s%s",
			 f && f->text[0] ? ": " : "", f ? f->text : "");
}

/* The overall line: the best point of the sweep, without the keys that had no effect. */
static void reco_overall(const struct sweep_plan *p, const struct sweep_result *r,
			 const struct sweep_reco *reco, int ngroups, char *line, size_t len)
{
	enum sweep_metric m = sweep_optimised_metric(p);
	char v[512], a[64], fs[32] = "", names[128], o[256];
	double sign = metric_of(m)->higher_better ? 1 : -1;
	long best = -1, second = -1; /* the best group's best, the next group's best */
	bool bound = sweep_compute_bound(p, r);
	size_t n;

	for (int k = 0; k < ngroups; k++) {
		long b = reco[k].best;

		if (reco[k].fs[0])
			snprintf(fs, sizeof(fs), "%s", reco[k].fs);
		if (b < 0)
			continue;
		if (best < 0 || r[b].m[m].mean * sign > r[best].m[m].mean * sign) {
			second = best;
			best = b;
		} else if (second < 0 || r[b].m[m].mean * sign > r[second].m[m].mean * sign) {
			second = b;
		}
	}
	line[0] = '\0';
	if (best < 0)
		return;
	n = (size_t)snprintf(line, len, "best overall by %s: ", metric_of(m)->column);
	reco_stripe_names(p, names, sizeof(names));
	if (bound) {
		n += (size_t)snprintf(
		    line + n, len - n,
		    "not recommended: every point was at or above the AU threshold "
		    "(the emulated compute sets %s)",
		    metric_of(m)->column);
	} else {
		reco_values(p, best, false, fs[0] != '\0', v, sizeof(v));
		sweep_fmt_stat(&r[best].m[m], m, a, sizeof(a));
		n += (size_t)snprintf(line + n, len - n, "%s (point %ld): %s %s", v[0] ? v : "any",
				      best + 1, a, metric_of(m)->suffix);
		if (second >= 0 && n < len) { /* the best of another group, judged against it */
			struct decide_result d;

			sweep_decide(p, r, best, second, &d);
			reco_values(p, second, false, fs[0] != '\0', v, sizeof(v));
			sweep_fmt_stat(&r[second].m[m], m, a, sizeof(a));
			reco_outcome(&d, m == SWM_AU ? " points" : " %", o, sizeof(o));
			n += (size_t)snprintf(line + n, len - n, "; runner-up %s: %s %s, %s", v, a,
					      metric_of(m)->suffix, o);
		}
	}
	if (fs[0] && names[0] && n < len)
		snprintf(line + n, len - n, " (%s: not applicable on %s)", names, fs);
}

json_t *sweep_reco_lines(const struct sweep_plan *p, const struct sweep_result *r,
			 const struct sweep_reco *reco, int ngroups, const struct fs_dir_layout *f)
{
	json_t *lines = json_array();
	bool any_numeric = false;
	char line[2048];

	for (int x = 0; x < p->naxes; x++)
		any_numeric |= p->axes[x].numeric;
	for (int k = 0; any_numeric && k < ngroups; k++) {
		reco_line(p, r, &reco[k], f, line, sizeof(line));
		json_array_append_new(lines, json_string(line));
	}
	reco_overall(p, r, reco, ngroups, line, sizeof(line));
	if (line[0])
		json_array_append_new(lines, json_string(line));
	return lines;
}

static json_t *reco_point_ref(const struct sweep_plan *p, long i)
{
	char buf[512];
	json_t *o;

	if (i < 0)
		return json_null();
	o = json_object();
	json_object_set_new(o, "point", json_integer(i + 1));
	sweep_point_label(p, i, -1, buf, sizeof(buf));
	json_object_set_new(o, "label", json_string(buf));
	return o;
}

static json_t *reco_decision_json(const struct decide_result *d)
{
	json_t *o = json_object();

	json_object_set_new(o, "outcome", json_string(decide_outcome_name(d->outcome)));
	json_object_set_new(o, "change", isfinite(d->change) ? json_real(d->change) : json_null());
	json_object_set_new(o, "p", isfinite(d->p) ? json_real(d->p) : json_null());
	json_object_set_new(o, "mde", isfinite(d->mde) ? json_real(d->mde) : json_null());
	json_object_set_new(o, "why", json_string(d->why));
	return o;
}

static const char *reco_kind_name(enum sweep_reco_kind k)
{
	static const char *const names[] = {"no_result", "plateau", "one_point", "not_applicable",
					    "compute_bound"};
	return names[k];
}

json_t *sweep_reco_groups(const struct sweep_plan *p, const struct sweep_result *r,
			  const struct sweep_reco *reco, int ngroups, const struct fs_dir_layout *f)
{
	json_t *groups = json_array();

	(void)r;
	for (int g = 0; g < ngroups; g++) {
		const struct sweep_reco *c = &reco[g];
		json_t *o = json_object(), *gv = json_object();
		bool pick = c->kind == RECO_PLATEAU;

		for (int a = 0; a < p->naxes; a++)
			if (!p->axes[a].numeric)
				json_object_set_new(
				    gv, p->axes[a].key,
				    json_string(p->axes[a].values[c->group_idx[a]]));
		json_object_set_new(o, "group", gv);
		json_object_set_new(o, "kind", json_string(reco_kind_name(c->kind)));
		json_object_set_new(o, "best", reco_point_ref(p, c->best));
		json_object_set_new(o, "recommended", reco_point_ref(p, pick ? c->pick : -1));
		json_object_set_new(o, "recommended_vs_best",
				    pick ? reco_decision_json(&c->pick_vs_best) : json_null());
		json_object_set_new(o, "default", reco_point_ref(p, c->def));
		json_object_set_new(o, "gain_over_default",
				    pick && c->over_def.ref >= 0 && c->over_def.ref != c->pick
					? reco_decision_json(&c->over_def.d)
					: json_null());
		json_object_set_new(o, "fs_default", reco_point_ref(p, pick ? c->over_fs.ref : -1));
		json_object_set_new(o, "gain_over_fs_default",
				    pick && c->over_fs.ref >= 0 && c->over_fs.ref != c->pick
					? reco_decision_json(&c->over_fs.d)
					: json_null());
		json_object_set_new(o, "gain_percentage",
				    pick && c->over_def.ref >= 0 && isfinite(c->over_def.d.change)
					? json_real(c->over_def.d.change)
					: json_null());
		json_object_set_new(o, "not_applicable_on",
				    c->fs[0] ? json_string(c->fs) : json_null());
		json_array_append_new(groups, o);
	}
	(void)f;
	return groups;
}
