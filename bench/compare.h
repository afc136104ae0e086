/* Regression comparison of results: `feedbench compare`, saved baselines and the history of
 * runs (bench/compare.c, compare_load.c, compare_stats.c, baseline.c).
 *
 * A side of a comparison is a list of points, each one run (one summary.json) with the values
 * of every metric per repetition. Points are paired by config hash, or by swept values when
 * both sides are sweeps; a pair is comparable only when the workload, rank and node counts,
 * file system and accelerator are the same and neither result is cache-resident.
 *
 * The pure parts (statistics, verdicts, loading, pairing) take no MPI and print nothing, so
 * tests/unit/test_compare.c exercises them directly.
 */
#ifndef FEEDBENCH_COMPARE_H
#define FEEDBENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "decide.h"
#include "sweep.h"

#define CMP_MAX_REPS	   1000 /* [output] repetitions allows up to 1000 */
#define CMP_MAX_REASONS	   16
#define CMP_REASON_LEN	   512
#define CMP_DEFAULT_TOL	   10.0 /* % */
#define CMP_DEFAULT_TOL_PT 5.0	/* percentage points (AU) */
#define CMP_DEFAULT_ALPH   0.05

/* Exit status of `feedbench compare`. */
enum cmp_exit {
	CMP_EXIT_OK = 0,
	CMP_EXIT_REGRESSED = 1,
	CMP_EXIT_USAGE = 2,
	CMP_EXIT_INCOMPARABLE = 3,
	CMP_EXIT_INCONCLUSIVE = 4 /* no regression, but a metric could not be decided */
};

/* ---- metrics ---------------------------------------------------------------------------- */

/* The metrics compared: metric_table of bench/metrics.h. */

/* ---- statistics ---------------------------------------------------------------------------- */

/* Regularised incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
double cmp_betainc(double a, double b, double x);
/* Two-sided tail of Student's t: P(|T| >= |t|) with df degrees of freedom (df > 0). */
double cmp_t_two_sided(double t, double df);
/* Quantile of Student's t: the t with P(T <= t) = p, 0.5 <= p < 1. */
double cmp_t_quantile(double p, double df);

/* Welch's unequal-variance t-test of mean(b) - mean(a). */
struct cmp_welch {
	double diff;   /* mean(b) - mean(a) */
	double se;     /* standard error of the difference */
	double t, df;  /* NAN when se == 0 */
	double p;      /* two-sided; 0 or 1 when se == 0 (the means differ or not) */
	double lo, hi; /* (1 - alpha) confidence interval of diff */
};
/* Needs na >= 2 and nb >= 2; returns -EINVAL otherwise. */
int cmp_welch_test(const double *a, int na, const double *b, int nb, double alpha,
		   struct cmp_welch *w);
/* The same with a run-to-run noise term: each side's mean is taken to move by a further
 * run_noise x mean (standard deviation, a fraction) from one run to the next, which the
 * repetitions of one run cannot show. That variance is assumed, not estimated: it widens the
 * standard error but adds no uncertainty to the degrees of freedom (Welch-Satterthwaite over
 * the estimated parts only). */
int cmp_welch_test_run_noise(const double *a, int na, const double *b, int nb, double alpha,
			     double run_noise, struct cmp_welch *w);

/* ---- verdicts ---------------------------------------------------------------------------- */

/* The outcomes of bench/decide.h as compare names them: ok is "no reliable difference". */
#define CMP_VERDICTS(X)                                                                            \
	X(CMP_OK, "ok")                                                                            \
	X(CMP_INCONCLUSIVE, "inconclusive")                                                        \
	X(CMP_IMPROVED, "improved")                                                                \
	X(CMP_REGRESSED, "regressed")                                                              \
	X(CMP_MISSING, "n/a")

enum cmp_verdict {
#define CMP_X_ENUM(name, text) name,
	CMP_VERDICTS(CMP_X_ENUM)
#undef CMP_X_ENUM
};
const char *cmp_verdict_name(enum cmp_verdict v);

/* One metric of one pair of points. Means are in the stored unit (not scaled). */
struct cmp_outcome {
	struct summary_stat base, cur;
	double change_pct; /* (cur - base) / base x 100; +-INFINITY from a zero baseline */
	double p;	   /* Welch p-value; NAN without a spread to test against */
	double t, df;	   /* NAN when not computed */
	double ci_lo_pct, ci_hi_pct; /* confidence interval of the change, % of the baseline */
	bool low_confidence;	     /* one value on a side: its spread borrowed or assumed */
	bool by_runs;		     /* judged over run means */
	bool points;		     /* decided in percentage points (AU), d.change in points */
	enum cmp_verdict verdict;
	struct decide_result d; /* the decision: change, MDE, repetitions needed, why */
};

/* Judges one metric (bench/decide.h): NAN values are left out (a metric a side did not
 * record: CMP_MISSING). */
void cmp_judge(const double *base, int nb, const double *cur, int nc, const struct decide_spec *s,
	       struct cmp_outcome *o);

/* ---- sides: what was measured ------------------------------------------------------------ */

struct cmp_point {
	char path[4096];    /* the summary.json */
	char label[512];    /* swept values "stripe_count=2 file_access=shared"; "" for a run */
	char workload[128]; /* workload name */
	char run_id[256];
	char start[40]; /* ISO-8601 UTC */
	char config_hash[65];
	char fs_type[32];
	char accel[16];	     /* "cpu", "cuda" */
	char git_commit[96]; /* "" when not recorded; SHA-1 or SHA-256 hex */
	int num_ranks, num_nodes;
	bool cache_resident;
	bool has_direct; /* storage.direct */
	int nreps;
	double (*v)[SWM_COUNT]; /* nreps rows; NAN where a metric was not recorded */
	struct json_t *root;	/* the parsed summary.json (config and host for messages) */
	int group;		/* index of the first run of the side with this config (itself) */
	int nruns;		/* on that first run: how many runs the side has of this config */
};

struct cmp_side {
	char path[4096];  /* as given */
	const char *kind; /* "run", "sweep", "summary", "runs" (a folder of several runs) */
	bool sweep;
	int npoints;
	struct cmp_point *points;
	struct json_t *fingerprint; /* fingerprint.json of a saved baseline, or NULL */
	int nwarnings;		    /* points of a sweep not done */
	char warnings[CMP_MAX_REASONS][CMP_REASON_LEN];
};

/* Reads a run folder, a sweep folder, a summary.json, or a folder holding several run folders
 * (every summary.json below it: repeated runs of one config, which measure the run-to-run
 * noise, and a saved baseline of them). Runs of the same config hash form a group (group,
 * nruns); points are paired by group. what ("baseline", "current") starts the message. Returns 0;
 * -ENOENT when the path or a file it needs is not there; -FB_EFORMAT when one is not a complete
 * feedbench result (message names the file). */
int cmp_side_load(struct cmp_side *s, const char *path, const char *what, char *why, size_t len);
void cmp_side_free(struct cmp_side *s);
/* True when two points are the same run (a copy of it: same run id, start and config hash). */
bool cmp_same_run(const struct cmp_point *a, const struct cmp_point *b);
/* What is read from a summary.json must be possible: a known schema number, and every measured
 * figure (repetitions, epochs, metric, ranks) finite, not negative, a percentage at most 100,
 * bandwidth at most 1e9 MiB/s and other rates at most 1e12/s, and a stated bandwidth or IOPS
 * equal to its bytes (operations) over its seconds. Returns 0, or -FB_EIMPOSSIBLE (exit 3) with
 * "cannot compare PATH: FIELD = VALUE is impossible" in why. */
int cmp_summary_check(struct json_t *root, const char *path, char *why, size_t len);
/* One summary.json as a point (used for sides and for history). */
/* Lets cmp_point_load read runs a signal stopped ("interrupted": true; refused by default). */
void cmp_allow_unfinished(bool on);
int cmp_point_load(struct cmp_point *p, const char *path, char *why, size_t len);
void cmp_point_free(struct cmp_point *p);

/* A pair of points to compare. */
struct cmp_pair {
	int b, c; /* indices into the baseline's and the current side's points */
};

struct cmp_match {
	int npairs;
	struct cmp_pair *pairs;
	int nreasons; /* reasons the sides are incomparable; 0: comparable */
	char reasons[CMP_MAX_REASONS][CMP_REASON_LEN];
	int nnotes; /* points without a partner, fault injection, ... */
	char notes[CMP_MAX_REASONS][CMP_REASON_LEN];
};

/* Pairs the points and checks every pair. allow_cached lifts the cache-resident refusal.
 * Returns 0 (see m->nreasons) or -ENOMEM. */
int cmp_match_sides(const struct cmp_side *base, const struct cmp_side *cur, bool allow_cached,
		    struct cmp_match *m);
void cmp_match_free(struct cmp_match *m);

/* ---- commands ---------------------------------------------------------------------------- */

int compare_main(int argc, char **argv);  /* feedbench compare */
int baseline_main(int argc, char **argv); /* feedbench baseline save|list */
int history_main(int argc, char **argv);  /* feedbench history */

/* Where saved baselines live by default. */
#define CMP_BASELINES_DIR "results/baselines"
/* Path of baseline NAME under dir; -EINVAL for a name that is not a plain file name. */
int baseline_path(const char *dir, const char *name, char *out, size_t len);
/* Differences between a baseline's fingerprint and the host of a current point, as text
 * ("cpu_model 'A' vs 'B'; memory_bytes ..."); 0 when they match or cannot be told. */
int baseline_fingerprint_diff(struct json_t *fingerprint, const struct cmp_point *cur, char *out,
			      size_t len);

#endif
