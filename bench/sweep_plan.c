/* A sweep's plan: [sweep] expanded into points (axes, zipped keys, order, the plan's hash), a
 * point's config, index, label and folder name (sweep.h); below the sweep command (sweep.c),
 * its dry run (sweep_dry.c) and its tables (sweep_report.c). */
#include "sweep.h"

#include <ctype.h>
#include <signal.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <jansson.h>
#include <nettle/sha2.h>

#include "build_config.h"
#include "metrics.h"
#include "outputs.h"
#include "preflight.h"
#include "report.h"
#include "runner.h"
#include "timer.h"
#include "safefile.h"
#include "stop.h"
#include "util.h"

/* ---- the plan ------------------------------------------------------------------------ */

static bool sweep_numeric(const struct cfg_key *k)
{
	return k->type == CFG_INT || k->type == CFG_SIZE || k->type == CFG_DURATION ||
	       k->type == CFG_DOUBLE;
}

void sweep_plan_free(struct sweep_plan *p)
{
	for (int a = 0; a < p->naxes; a++) {
		free(p->axes[a].values);
		free(p->axes[a].canon);
		free(p->axes[a].num);
	}
	memset(p, 0, sizeof(*p));
}

/* cfg_set() words its errors for --set; in a sweep the config line is the better pointer. */
static const char *sweep_strip_set(const char *msg)
{
	const char *c;

	if (strncmp(msg, "--set ", 6) == 0 && (c = strstr(msg, ": ")))
		return c + 2;
	return msg;
}

static int sweep_axis_build(struct sweep_axis *ax, const struct cfg_sweep_key *sk,
			    const struct config *cfg, struct config *scratch, struct fb_errbuf *err)
{
	char why[512], set[CFG_NAME_MAX + SWEEP_VALUE_MAX + 2];
	const char *src = cfg->source[0] ? cfg->source : "config";
	int n;

	snprintf(ax->key, sizeof(ax->key), "%s", sk->key);
	ax->name = strrchr(ax->key, '.') + 1;
	ax->line = sk->line;
	ax->k = cfg_find_dotted(sk->key);
	if (!ax->k)
		return fb_fail(err, -FB_ECONFIG, "%s:%d: [sweep] names unknown key '%s'", src,
			       sk->line, sk->key);
	if (strcmp(ax->k->section, "output") == 0 || strcmp(ax->k->section, "sweep") == 0)
		return fb_fail(err, -FB_ECONFIG,
			       "%s:%d: [sweep] cannot sweep '%s': [%s] keys shape the sweep itself",
			       src, sk->line, sk->key, ax->k->section);
	ax->values = calloc(SWEEP_MAX_VALUES, sizeof(*ax->values));
	if (!ax->values)
		return fb_fail(err, -ENOMEM, "out of memory expanding [sweep]");
	/* Repeated values are refused by sweep_check_repeats() once [sweep] zip is known. */
	n = sweep_expand_list(sk->values, ax->k, ax->values, SWEEP_MAX_VALUES, true, why,
			      sizeof(why));
	if (n < 0)
		return fb_fail(err, n, "%s:%d: [sweep] %s = %s: %s", src, sk->line, sk->key,
			       sk->values, why);
	ax->nvalues = n;
	ax->canon = calloc((size_t)n, sizeof(*ax->canon));
	ax->num = calloc((size_t)n, sizeof(*ax->num));
	if (!ax->canon || !ax->num)
		return fb_fail(err, -ENOMEM, "out of memory expanding [sweep]");
	ax->dataset = ax->k->flags & CFG_F_DATASET;
	ax->numeric = sweep_numeric(ax->k);
	cfg_format_value(cfg, ax->k, ax->def, sizeof(ax->def));
	ax->def_index = -1;
	for (int v = 0; v < n; v++) {
		struct fb_errbuf e;

		fb_errbuf_init(&e);
		memcpy(scratch, cfg, sizeof(*scratch));
		snprintf(set, sizeof(set), "%s=%s", ax->key, ax->values[v]);
		if (cfg_set(scratch, set, &e) < 0)
			return fb_fail(err, -FB_ECONFIG, "%s:%d: [sweep] %s: %s", src, sk->line,
				       ax->key, sweep_strip_set(e.msg));
		cfg_format_value(scratch, ax->k, ax->canon[v], SWEEP_VALUE_MAX);
		ax->num[v] = ax->numeric ? strtod(ax->canon[v], NULL) : NAN;
		if (strcmp(ax->canon[v], ax->def) == 0 && ax->def_index < 0)
			ax->def_index = v;
	}
	return 0;
}

/* Dataset keys first (slowest), each group in config order: a stable partition. Zipped axes
 * move together: all of them are slow when one of them changes the dataset. Then the
 * dimensions, in that order: one per axis, one for all the zipped axes. */
static void sweep_order_axes(struct sweep_plan *p)
{
	struct sweep_axis tmp[CFG_MAX_SWEEP];
	bool zip_dataset = false;
	int n = 0, zip_dim = -1;

	for (int a = 0; a < p->naxes; a++)
		zip_dataset |= p->axes[a].zipped && p->axes[a].dataset;
	for (int pass = 0; pass < 2; pass++)
		for (int a = 0; a < p->naxes; a++) {
			const struct sweep_axis *ax = &p->axes[a];
			bool slow = ax->dataset || (ax->zipped && zip_dataset);

			if (slow == (pass == 0))
				tmp[n++] = *ax;
		}
	memcpy(p->axes, tmp, sizeof(tmp[0]) * (size_t)n);
	p->ndims = 0;
	for (int a = 0; a < p->naxes; a++) {
		struct sweep_axis *ax = &p->axes[a];

		ax->name = strrchr(ax->key, '.') + 1;
		if (ax->zipped && zip_dim >= 0) {
			ax->dim = zip_dim;
			continue;
		}
		ax->dim = p->ndims++;
		p->dim_nvalues[ax->dim] = ax->nvalues;
		if (ax->zipped)
			zip_dim = ax->dim;
	}
}

/* A key's list names each value once (as written, and as the config reads it), unless the
 * key is zipped: then the neighbours in the zip tell its points apart. */
static int sweep_check_repeats(const struct sweep_plan *p, const struct config *cfg,
			       struct fb_errbuf *err)
{
	const char *src = cfg->source[0] ? cfg->source : "config";

	for (int a = 0; a < p->naxes; a++) {
		const struct sweep_axis *ax = &p->axes[a];

		for (int v = 0; !ax->zipped && v < ax->nvalues; v++)
			for (int w = 0; w < v; w++) {
				if (strcmp(ax->values[w], ax->values[v]) == 0)
					return fb_fail(err, -FB_ECONFIG,
						       "%s:%d: [sweep] %s = %s: value '%s' is "
						       "listed twice",
						       src, ax->line, ax->key,
						       cfg->sweep.keys[ax->order].values,
						       ax->values[v]);
				if (strcmp(ax->canon[w], ax->canon[v]) == 0)
					return fb_fail(err, -FB_ECONFIG,
						       "%s:%d: [sweep] %s: '%s' and '%s' are the "
						       "same value",
						       src, ax->line, ax->key, ax->values[w],
						       ax->values[v]);
			}
	}
	return 0;
}

/* [sweep] zip: the swept keys it names (section.key, or the key alone when one swept key has
 * that name) walk their value lists together, so they need as many values each. */
static int sweep_zip(struct sweep_plan *p, const struct config *cfg, struct fb_errbuf *err)
{
	const struct cfg_key *zk = cfg_find("sweep", "zip");
	const char *src = cfg->source[0] ? cfg->source : "config";
	int line = zk ? cfg->lines[zk - cfg_keys] : 0, first = -1, nzip = 0;
	bool seen[CFG_MAX_SWEEP] = {false};
	char *copy = strdup(cfg->sweep.zip), *item, *save = NULL;
	int rc = 0;

	if (!copy)
		return fb_fail(err, -ENOMEM, "out of memory");
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *name = sweep_trim(item);
		int found = -1;

		for (int a = 0; a < p->naxes; a++) {
			bool full = strcmp(p->axes[a].key, name) == 0;
			bool tail = !strchr(name, '.') && strcmp(p->axes[a].name, name) == 0;

			if (!full && !tail)
				continue;
			if (found >= 0) {
				rc = fb_fail(err, -FB_ECONFIG,
					     "%s:%d: [sweep] zip: '%s' names both %s and %s; write "
					     "section.key",
					     src, line, name, p->axes[found].key, p->axes[a].key);
				goto out;
			}
			found = a;
		}
		if (found < 0) {
			rc = fb_fail(err, -FB_ECONFIG,
				     "%s:%d: [sweep] zip: '%s' is not a swept key of this [sweep] "
				     "section",
				     src, line, name);
			goto out;
		}
		struct sweep_axis *ax = &p->axes[found];
		if (seen[found]) {
			rc = fb_fail(err, -FB_ECONFIG, "%s:%d: [sweep] zip names %s twice", src,
				     line, ax->key);
			goto out;
		}
		seen[found] = true;
		ax->zipped = true;
		if (first >= 0 && ax->nvalues != p->axes[first].nvalues) {
			rc =
			    fb_fail(err, -FB_ECONFIG,
				    "%s:%d: [sweep] zip: %s has %d value%s (line %d) but %s has %d "
				    "(line %d); zipped keys walk their lists together and need as "
				    "many values each",
				    src, line, p->axes[first].key, p->axes[first].nvalues,
				    p->axes[first].nvalues == 1 ? "" : "s", p->axes[first].line,
				    ax->key, ax->nvalues, ax->line);
			goto out;
		}
		first = first < 0 ? found : first;
		nzip++;
	}
	if (nzip == 1) {
		rc = fb_fail(err, -FB_ECONFIG,
			     "%s:%d: [sweep] zip names one key; it needs two or more swept keys",
			     src, line);
		goto out;
	}
	/* Two positions of the zipped lists with the same values would run one point twice. */
	for (int v = 0; first >= 0 && v < p->axes[first].nvalues; v++)
		for (int w = 0; w < v; w++) {
			bool same = true;

			for (int a = 0; a < p->naxes; a++)
				same &= !p->axes[a].zipped ||
					strcmp(p->axes[a].canon[v], p->axes[a].canon[w]) == 0;
			if (same) {
				rc = fb_fail(
				    err, -FB_ECONFIG,
				    "%s:%d: [sweep] zip: values %d and %d of the zipped keys "
				    "are the same point",
				    src, line, w + 1, v + 1);
				goto out;
			}
		}
out:
	free(copy);
	return rc;
}

/* The sweep's identity: the config hash (output and sweep excluded), every swept key with its
 * canonical values, and the repetitions. --resume refuses a sweep whose identity changed. */
static void sweep_plan_hash(struct sweep_plan *p, const struct config *cfg)
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];
	char base[65], line[64];

	cfg_hash(cfg, base);
	sha256_init(&ctx);
	sha256_update(&ctx, 64, (const uint8_t *)base);
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++) {
			const struct sweep_axis *ax = &p->axes[a];

			if (ax->order != o)
				continue;
			sha256_update(&ctx, strlen(ax->key), (const uint8_t *)ax->key);
			for (int v = 0; v < ax->nvalues; v++) {
				sha256_update(&ctx, 1, (const uint8_t *)(v ? "," : "="));
				sha256_update(&ctx, strlen(ax->canon[v]),
					      (const uint8_t *)ax->canon[v]);
			}
			sha256_update(&ctx, 1, (const uint8_t *)"\n");
		}
	/* Zipped keys make other points of the same values: part of the identity (a sweep
	 * without zip keeps the hash it always had). */
	for (int o = 0; o < p->naxes; o++)
		for (int a = 0; a < p->naxes; a++)
			if (p->axes[a].order == o && p->axes[a].zipped) {
				sha256_update(&ctx, 4, (const uint8_t *)"zip=");
				sha256_update(&ctx, strlen(p->axes[a].key),
					      (const uint8_t *)p->axes[a].key);
				sha256_update(&ctx, 1, (const uint8_t *)"\n");
			}
	snprintf(line, sizeof(line), "repetitions=%d\n", p->repetitions);
	sha256_update(&ctx, strlen(line), (const uint8_t *)line);
	sha256_digest(&ctx, sizeof(digest), digest);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(p->hash + 2 * i, 3, "%02x", digest[i]);
}

int sweep_apply_point(const struct sweep_plan *p, long i, struct config *c, struct fb_errbuf *err)
{
	char set[CFG_NAME_MAX + SWEEP_VALUE_MAX + 2];

	for (int a = 0; a < p->naxes; a++) {
		sweep_point_set(p, i, a, set, sizeof(set));
		if (cfg_set(c, set, err) < 0)
			return -FB_ECONFIG;
	}
	return 0;
}

int sweep_plan_build(struct sweep_plan *p, const struct config *cfg, int nranks, bool disk,
		     struct fb_errbuf *err)
{
	struct config *scratch = malloc(sizeof(*scratch));
	char label[512];
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!scratch)
		return fb_fail(err, -ENOMEM, "out of memory");
	p->optimise = cfg->sweep.optimise;
	p->repetitions = (int)cfg->output.repetitions;
	if (cfg->sweep.nkeys == 0) {
		rc = fb_fail(err, -FB_ECONFIG, "%s: no [sweep] keys to sweep",
			     cfg->source[0] ? cfg->source : "config");
		goto out_free;
	}
	for (int s = 0; s < cfg->sweep.nkeys; s++) {
		struct sweep_axis *ax = &p->axes[p->naxes++];

		ax->order = s;
		rc = sweep_axis_build(ax, &cfg->sweep.keys[s], cfg, scratch, err);
		if (rc < 0)
			goto out_free;
	}
	if ((rc = sweep_zip(p, cfg, err)) < 0 || (rc = sweep_check_repeats(p, cfg, err)) < 0)
		goto out_free;
	sweep_order_axes(p);
	p->npoints = 1;
	for (int d = 0; d < p->ndims; d++) {
		p->npoints *= p->dim_nvalues[d];
		if (p->npoints > SWEEP_MAX_POINTS) {
			rc = fb_fail(err, -FB_ECONFIG,
				     "%s:%d: [sweep] has more than %d points; split the sweep",
				     cfg->source, p->axes[p->naxes - 1].line, SWEEP_MAX_POINTS);
			goto out_free;
		}
	}
	sweep_plan_hash(p, cfg);
	/* Every point is checked before anything runs: an impossible combination found at
	 * point 37 of 40 would otherwise cost the 36 before it. */
	for (long i = 0; i < p->npoints; i++) {
		struct fb_errbuf e;

		fb_errbuf_init(&e);
		memcpy(scratch, cfg, sizeof(*scratch));
		if (sweep_apply_point(p, i, scratch, &e) < 0 ||
		    (disk ? run_preflight(scratch, nranks, NULL, &e)
			  : cfg_validate(scratch, nranks, &e)) < 0) {
			sweep_point_label(p, i, -1, label, sizeof(label));
			rc = fb_fail(err, e.code < 0 ? e.code : -FB_ECONFIG,
				     "sweep point %ld (%s): %s", i + 1, label, e.msg);
			goto out_free;
		}
	}
out_free:
	free(scratch);
	if (rc < 0)
		sweep_plan_free(p);
	return rc;
}

void sweep_point_index(const struct sweep_plan *p, long i, int idx[CFG_MAX_SWEEP])
{
	int didx[CFG_MAX_SWEEP];

	for (int d = p->ndims - 1; d >= 0; d--) {
		didx[d] = (int)(i % p->dim_nvalues[d]);
		i /= p->dim_nvalues[d];
	}
	for (int a = 0; a < p->naxes; a++)
		idx[a] = didx[p->axes[a].dim];
}

void sweep_point_set(const struct sweep_plan *p, long i, int a, char *buf, size_t len)
{
	int idx[CFG_MAX_SWEEP];

	sweep_point_index(p, i, idx);
	snprintf(buf, len, "%s=%s", p->axes[a].key, p->axes[a].values[idx[a]]);
}

int sweep_axis_at(const struct sweep_plan *p, int o)
{
	for (int a = 0; a < p->naxes; a++)
		if (p->axes[a].order == o)
			return a;
	return 0;
}

void sweep_point_label(const struct sweep_plan *p, long i, int skip_axis, char *buf, size_t len)
{
	int idx[CFG_MAX_SWEEP];
	size_t used = 0;

	sweep_point_index(p, i, idx);
	buf[0] = '\0';
	for (int o = 0; o < p->naxes; o++) {
		int a = sweep_axis_at(p, o);

		if (a == skip_axis)
			continue;
		int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
				 p->axes[a].name, p->axes[a].values[idx[a]]);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

void sweep_point_dir(const struct sweep_plan *p, long i, char *buf, size_t len)
{
	char label[512];
	int digits = 3;
	size_t n;

	for (long m = 1000; m <= p->npoints; m *= 10)
		digits++;
	sweep_point_label(p, i, -1, label, sizeof(label));
	n = (size_t)snprintf(buf, len, "point-%0*ld-", digits, i + 1);
	for (const char *s = label; *s && n + 1 < len && n < 160; s++)
		buf[n++] = (isalnum((unsigned char)*s) || strchr("._+=-", *s)) ? *s
			   : *s == ' '					       ? '-'
									       : '_';
	buf[n < len ? n : len - 1] = '\0';
}

bool sweep_point_new_dataset(const struct sweep_plan *p, long i)
{
	int a_idx[CFG_MAX_SWEEP], b_idx[CFG_MAX_SWEEP];

	if (i == 0)
		return true;
	sweep_point_index(p, i, a_idx);
	sweep_point_index(p, i - 1, b_idx);
	for (int a = 0; a < p->naxes; a++)
		if (p->axes[a].dataset && a_idx[a] != b_idx[a])
			return true;
	return false;
}

/* ---- small helpers ------------------------------------------------------------------- */

void sweep_fmt_duration(double s, char *buf, size_t len)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* Latencies are stored in seconds and shown in µs (metric_table's scale). */
static double sweep_metric_scale(int m)
{
	return metric_of((enum sweep_metric)m)->scale;
}

void sweep_fmt_stat(const struct summary_stat *s, int m, char *buf, size_t len)
{
	char a[32], b[32];

	if (s->n == 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	outputs_format_number(s->mean * sweep_metric_scale(m), a, sizeof(a));
	if (s->n == 1) {
		snprintf(buf, len, "%s", a);
		return;
	}
	outputs_format_number(s->stddev * sweep_metric_scale(m), b, sizeof(b));
	snprintf(buf, len, "%s ± %s", a, b);
}
