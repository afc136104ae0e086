/* The rule checker's shared pieces (bench/mlperf_check.c: loading, training rules;
 * bench/mlperf_check_ckpt.c: checkpointing rules). */
#ifndef FEEDBENCH_MLPERF_CHECK_H
#define FEEDBENCH_MLPERF_CHECK_H

#include <jansson.h>

#define MCK_MAX_RUNS 64

enum mck_level { MCK_PASS, MCK_NOTE, MCK_OPEN, MCK_INVALID };

struct mck_run {
	char dir[4096];
	json_t *s;     /* summary.json */
	json_t *drops; /* cache_drop of mlperf_run.json's phase (NULL: unknown) */
	int warmup;    /* 1 yes, 0 no, -1 unknown (run folders listed: the first is taken) */
};

struct mck {
	struct mck_run runs[MCK_MAX_RUNS];
	int n;
	int worst;
	char reasons[8192];
};

/* Prints one finding and keeps the worst level; OPEN and INVALID reasons go to the verdict. */
void mck_finding(struct mck *c, enum mck_level lv, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* s.a, s.a.b or s.a.b.k (b, k may be NULL): a number (NAN when not) or a string ("" when not). */
double mck_num(json_t *s, const char *a, const char *b, const char *k);
const char *mck_str(json_t *s, const char *a, const char *b, const char *k);
/* The last component of a folder's path. */
const char *mck_base(const char *dir);
/* "2026-12-02T12:42:58Z" as seconds; NAN when unreadable. */
double mck_iso_seconds(const char *t);
/* The checkpointing rules over c's invocations (bench/mlperf_check_ckpt.c). */
void mck_checkpointing(struct mck *c);

#endif
