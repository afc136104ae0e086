/* Sweeps: the [sweep] section expanded into points, the points run one after another under one
 * MPI job, and their results gathered into one table and a recommendation (bench/sweep.c).
 *
 * The pure parts (expansion, ordering, naming, reading results, the table, the recommendation)
 * take no communicator, so the unit tests exercise them without MPI runs.
 */
#ifndef FEEDBENCH_SWEEP_H
#define FEEDBENCH_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "metrics.h"
#include "decide.h"
#include "storage/fs.h"
#include "stats.h"

#define SWEEP_MAX_VALUES 256   /* values of one key */
#define SWEEP_MAX_POINTS 10000 /* points of one sweep */
#define SWEEP_VALUE_MAX	 256

/* One swept key. Values are kept as written (ranges expanded) and in canonical form (as
 * cfg_format_value() prints them), which is what the default is compared against. */
struct sweep_axis {
	char key[CFG_NAME_MAX]; /* "storage.stripe_count" */
	const char *name;	/* "stripe_count": points into key */
	const struct cfg_key *k;
	int line;  /* config line of the [sweep] entry */
	int order; /* position in the config's [sweep] section */
	int nvalues;
	char (*values)[SWEEP_VALUE_MAX]; /* as given: "1MiB" */
	char (*canon)[SWEEP_VALUE_MAX];	 /* canonical: "1048576" */
	double *num;			 /* numeric value (numeric keys) */
	char def[SWEEP_VALUE_MAX];	 /* canonical value without the sweep */
	int def_index;			 /* index of the default among values, -1: not swept */
	bool dataset;			 /* CFG_F_DATASET: changing it regenerates the dataset */
	bool numeric;			 /* int, size, duration, double */
	bool zipped;			 /* named by [sweep] zip: walks its list with the others */
	int dim;			 /* the dimension it walks; zipped axes share one */
};

/* The expanded sweep. Axes are ordered so that dataset keys vary slowest: consecutive points
 * share a dataset whenever possible, and the generator runs as rarely as it can. */
struct sweep_plan {
	int naxes;
	struct sweep_axis axes[CFG_MAX_SWEEP];
	/* The points are the cartesian product of the dimensions: one per axis, except that the
	 * axes named by [sweep] zip share one (their i-th values go together). */
	int ndims;
	int dim_nvalues[CFG_MAX_SWEEP];
	long npoints;
	int optimise;	 /* SWEEP_OPT_* */
	int repetitions; /* [output] repetitions of every point */
	char hash[65];	 /* config hash + swept values + repetitions */
};

/* Expands one [sweep] value list for key k: "1, 2, 4", "1..16*2", "1..4", "1..16+4",
 * "64KiB..1MiB*4". Ranges need an integer or size key. Returns the number of values (> 0) or
 * -FB_ECONFIG with the reason in why. out may be NULL to count only. */
int sweep_expand(const char *text, const struct cfg_key *k, char (*out)[SWEEP_VALUE_MAX], int max,
		 char *why, size_t len);
/* s without its leading and trailing spaces (cut in place). */
char *sweep_trim(char *s);
/* sweep_expand; dups_ok for a zipped key, whose list may repeat a value (its neighbours in the
 * zip tell the points apart). */
int sweep_expand_list(const char *text, const struct cfg_key *k, char (*out)[SWEEP_VALUE_MAX],
		      int max, bool dups_ok, char *why, size_t len);

/* Builds the plan from a parsed config (its [sweep] keys and zip, with the other sections as
 * the default). Each value is applied with cfg_set() to a copy of the config, so a value of the
 * wrong type names its config line; every point is then checked for nranks ranks with
 * run_preflight() (disk: the checks of the data folder too, read-only) or cfg_validate().
 * Errors are the code the run would fail with (-FB_ECONFIG mostly), the message in err. */
int sweep_plan_build(struct sweep_plan *p, const struct config *cfg, int nranks, bool disk,
		     struct fb_errbuf *err);
void sweep_plan_free(struct sweep_plan *p);

/* Value index of every axis for point i (0-based; the last dimension varies fastest, zipped
 * axes share their index). */
void sweep_point_index(const struct sweep_plan *p, long i, int idx[CFG_MAX_SWEEP]);
/* The index of the axis at config position o (the order of the [sweep] keys). */
int sweep_axis_at(const struct sweep_plan *p, int o);
/* "section.key=value" of axis a at point i. */
void sweep_point_set(const struct sweep_plan *p, long i, int a, char *buf, size_t len);
/* Folder name "point-003-format=npy-stripe_count=4" (file-name safe). */
void sweep_point_dir(const struct sweep_plan *p, long i, char *buf, size_t len);
/* Label "format=npy stripe_count=4" (axes in config order); skip_axis (-1: none) is left out. */
void sweep_point_label(const struct sweep_plan *p, long i, int skip_axis, char *buf, size_t len);
/* True when points i and i-1 differ in a dataset key (i = 0: true). */
bool sweep_point_new_dataset(const struct sweep_plan *p, long i);

/* Applies the values of point i to c (cfg_set: messages for --set). 0 or -FB_ECONFIG. */
int sweep_apply_point(const struct sweep_plan *p, long i, struct config *c, struct fb_errbuf *err);
/* "1:02" or "1:02:03". */
void sweep_fmt_duration(double s, char *buf, size_t len);
/* The dry run on rank 0 (bench/sweep_dry.c): the plan was built and every point checked. */
int sweep_dry_run(const struct sweep_plan *p, const struct config *cfg, int nranks);

/* Metrics of the sweep table (mean and stddev over repetitions): bench/metrics.h. */

/* Repetitions of a point kept for the recommendation's tests (the table's mean and stddev use
 * every one). */
#define SWEEP_KEEP_REPS 100
/* The metrics a sweep can optimise ([sweep] optimise), in the order of SWEEP_OPT_*. */
#define SWEEP_NOPT 3

struct sweep_result {
	bool done; /* summary.json complete */
	int repetitions;
	struct summary_stat m[SWM_COUNT];
	/* Values of the optimisable metrics per repetition (NAN: none), the first
	 * SWEEP_KEEP_REPS: opt[k] for sweep_opt_metric(k). */
	double opt[SWEEP_NOPT][SWEEP_KEEP_REPS];
	int nopt;
	/* Set by sweep_recommend: this point against its group's best (-1: not judged). */
	int vs_best; /* enum decide_outcome */
	double vs_best_change, vs_best_p;
	bool cache_resident;
	bool au_pass;
	char verdict[32];
	char stripe_effective[128];
	char fs_type[32];
	int nwarnings;
};

/* Reads one point's summary.json. Returns 0, or a negative code with the reason in why
 * (-ENOENT: not there; -FB_EFORMAT: unreadable or incomplete). */
int sweep_read_summary(const char *path, struct sweep_result *r, char *why, size_t len);

/* Values of every metric for each repetition of a parsed summary.json (a jansson json_t):
 * from repetitions[], completed from epochs[], or one repetition from "metric" in an older
 * summary. NAN where the summary has no value. Returns the number of repetitions (<= max). */
struct json_t;
int summary_repetition_values(struct json_t *root, double (*v)[SWM_COUNT], int max);
/* Readers of summary.json and sweep files: the number at a dotted path
 * ("latency_seconds.p99", NAN when missing), a string member (def when missing). */
double summary_num(struct json_t *obj, const char *dotted);
const char *summary_str(struct json_t *obj, const char *key, const char *def);
/* Any scalar member as text (the effective config keeps numbers as numbers); "?" when missing. */
const char *summary_text(struct json_t *obj, const char *key, char *buf, size_t len);

enum sweep_reco_kind {
	RECO_NONE,	     /* no completed point in the group */
	RECO_PLATEAU,	     /* pick: the smallest value not reliably worse than the best */
	RECO_ONE_POINT,	     /* the group is one point (zipped keys): nothing to choose */
	RECO_NOT_APPLICABLE, /* every swept numeric key is a stripe key where nothing stripes */
	RECO_COMPUTE_BOUND   /* every point at or above the AU threshold: the compute sets it */
};

/* A comparison of the pick against a reference point (bench/decide.h). */
struct sweep_gain {
	long ref; /* the reference point, -1: not swept */
	struct decide_result d;
};

/* The recommendation of one group: the points that share every non-numeric value. */
struct sweep_reco {
	int group_idx[CFG_MAX_SWEEP]; /* value index of each non-numeric axis (-1 for numeric) */
	enum sweep_reco_kind kind;
	long best; /* point with the best mean of the optimised metric */
	long pick; /* plateau rule: the smallest values not reliably worse */
	struct decide_result pick_vs_best; /* pick against the best (DECIDE_SAME... not WORSE) */
	struct sweep_gain over_def;	   /* pick against the config's values */
	struct sweep_gain over_fs;	   /* pick against the folder's default layout */
	long def;     /* point with every numeric key at the config's value, -1 */
	long npoints; /* points of the plan in the group (done or not) */
	char fs[32];  /* RECO_NOT_APPLICABLE: the file system that cannot stripe */
};

/* Groups, best points and the plateau pick for the plan's optimise metric; fills every done
 * point's vs_best (its decision against its group's best). folder: the data folder's own
 * layout (NULL: unknown). Points not done are ignored. Returns the number of groups (>= 0) and
 * fills *out (malloc'd) or a negative errno. */
int sweep_recommend(const struct sweep_plan *p, struct sweep_result *r,
		    const struct fs_dir_layout *folder, struct sweep_reco **out);
/* "110.0 ± 10.0" of metric m (its display scale), "n/a" without a value. */
void sweep_fmt_stat(const struct summary_stat *s, int m, char *buf, size_t len);
/* The metric that [sweep] optimise names. */
enum sweep_metric sweep_optimised_metric(const struct sweep_plan *p);
/* True for a key that sets a file's striping (storage.stripe_count, stripe_size, ...). */
bool sweep_stripe_key(const char *key);
/* The recommendation as sentences (one per group, then the overall line) and the groups for
 * sweep_results.json (bench/sweep_reco.c). */
struct json_t *sweep_reco_lines(const struct sweep_plan *p, const struct sweep_result *r,
				const struct sweep_reco *reco, int ngroups,
				const struct fs_dir_layout *folder);
struct json_t *sweep_reco_groups(const struct sweep_plan *p, const struct sweep_result *r,
				 const struct sweep_reco *reco, int ngroups,
				 const struct fs_dir_layout *folder);

/* Writes sweep.csv, sweep.md and sweep_results.json into dir and prints the table to term
 * (NULL: not printed). Returns 0 or a negative errno (message in err). */
int sweep_write_tables(const char *dir, const struct sweep_plan *p, const struct sweep_result *r,
		       const struct sweep_reco *reco, int ngroups,
		       const struct fs_dir_layout *folder, const char *workload, FILE *term,
		       struct fb_errbuf *err);

/* report.md of a sweep folder from its sweep_results.json (bench/report.c); report_write()
 * also rewrites its points' reports. */
int report_write_sweep(const char *sweep_dir);

#endif
