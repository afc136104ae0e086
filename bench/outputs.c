/* One writer for every workload's table.md, report.md and CSV files (bench/outputs.h): the
 * workload describes sections, rows and columns as data, this file renders them from
 * summary.json.
 */
#include "outputs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "errors.h"

#define OUT_PATH_MAX 160

enum out_agg { AGG_NONE, AGG_MIN, AGG_MAX, AGG_MEAN, AGG_SUM, AGG_COUNT };

/* One parsed field of a template: {source[*k|/k][=text][:conv | ?a|b]}. */
struct out_field {
	char path[OUT_PATH_MAX];
	enum out_agg agg;
	double factor; /* 1 unless *k or /k */
	bool scaled;
	const char *eq; /* "=text": compared with the value as text (eq_len bytes) */
	size_t eq_len;
	char conv[24];	      /* a printf conversion ("%10.2f"), or "" */
	const char *yes, *no; /* "?yes|no" (yes_len, no_len bytes), or NULL */
	size_t yes_len, no_len;
};

void outputs_format_number(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1000 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 0.1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* ---- looking values up ------------------------------------------------------------------ */

/* The member at path (dots, numbers index arrays) under obj, or NULL. */
static json_t *out_get(json_t *obj, const char *path)
{
	char seg[OUT_PATH_MAX];

	while (obj && *path) {
		size_t n = strcspn(path, ".");
		char *end;

		snprintf(seg, sizeof(seg), "%.*s", (int)n, path);
		if (json_is_array(obj)) {
			long i = strtol(seg, &end, 10);
			obj = (*seg && !*end && i >= 0) ? json_array_get(obj, (size_t)i) : NULL;
		} else {
			obj = json_object_get(obj, seg);
		}
		path += n;
		if (*path == '.')
			path++;
	}
	return json_is_null(obj) ? NULL : obj;
}

struct out_acc {
	double min, max, sum;
	size_t n;
};

/* Every number at path under obj, an array on the way mapping over its elements. */
static void out_collect(json_t *obj, const char *path, struct out_acc *a)
{
	char seg[OUT_PATH_MAX];
	size_t n, i;
	json_t *v;

	if (json_is_array(obj) && *path && !isdigit((unsigned char)*path)) {
		json_array_foreach(obj, i, v)
		{
			out_collect(v, path, a);
		}
		return;
	}
	if (!*path && json_is_array(obj)) {
		json_array_foreach(obj, i, v)
		{
			out_collect(v, "", a);
		}
		return;
	}
	if (!*path) {
		if (!json_is_number(obj))
			return;
		double x = json_number_value(obj);
		a->min = a->n ? fmin(a->min, x) : x;
		a->max = a->n ? fmax(a->max, x) : x;
		a->sum += x;
		a->n++;
		return;
	}
	n = strcspn(path, ".");
	snprintf(seg, sizeof(seg), "%.*s", (int)n, path);
	obj = json_is_array(obj) ? json_array_get(obj, strtoul(seg, NULL, 10))
				 : json_object_get(obj, seg);
	if (obj)
		out_collect(obj, path[n] == '.' ? path + n + 1 : path + n, a);
}

/* ---- parsing a field -------------------------------------------------------------------- */

static const char *const out_agg_names[] = {"", "min(", "max(", "mean(", "sum(", "count("};

/* A printf conversion: '%', flags, width, precision, one of d f e g s. */
static bool out_conv_ok(const char *c, size_t n)
{
	size_t i = 1;

	if (n < 2 || n >= 20 || c[0] != '%')
		return false;
	while (i < n - 1 && strchr("-+ 0#", c[i]))
		i++;
	while (i < n - 1 && isdigit((unsigned char)c[i]))
		i++;
	if (i < n - 1 && c[i] == '.') {
		i++;
		while (i < n - 1 && isdigit((unsigned char)c[i]))
			i++;
	}
	return i == n - 1 && c[i] && strchr("dfegs", c[i]);
}

static int out_parse(const char *s, size_t len, struct out_field *fl)
{
	const char *end = s + len;
	size_t n;

	memset(fl, 0, sizeof(*fl));
	fl->factor = 1;
	for (int a = AGG_MIN; a <= AGG_COUNT; a++) {
		size_t k = strlen(out_agg_names[a]);
		if (len > k && strncmp(s, out_agg_names[a], k) == 0) {
			fl->agg = (enum out_agg)a;
			s += k;
			break;
		}
	}
	if (fl->agg) {
		const char *rp = memchr(s, ')', (size_t)(end - s));
		if (!rp)
			return -FB_EFORMAT;
		n = (size_t)(rp - s);
	} else {
		n = strcspn(s + (*s == '/'), "*/=:?") + (*s == '/');
	}
	if (n == 0 || n >= sizeof(fl->path) || s + n > end)
		return -FB_EFORMAT;
	snprintf(fl->path, sizeof(fl->path), "%.*s", (int)n, s);
	s += n + (fl->agg ? 1 : 0);
	if (s < end && (*s == '*' || *s == '/')) {
		char *e;
		double k = strtod(s + 1, &e);
		if (e == s + 1 || e > end || k == 0)
			return -FB_EFORMAT;
		fl->factor = *s == '*' ? k : 1 / k;
		fl->scaled = true;
		s = e;
	}
	if (s < end && *s == '=') {
		const char *q = memchr(s, '?', (size_t)(end - s));
		if (!q)
			return -FB_EFORMAT;
		fl->eq = s + 1;
		fl->eq_len = (size_t)(q - s - 1);
		s = q;
	}
	if (s < end && *s == ':') {
		if (!out_conv_ok(s + 1, (size_t)(end - s - 1)))
			return -FB_EFORMAT;
		snprintf(fl->conv, sizeof(fl->conv), "%.*s", (int)(end - s - 1), s + 1);
		s = end;
	} else if (s < end && *s == '?') {
		const char *bar = memchr(s, '|', (size_t)(end - s));
		if (!bar)
			return -FB_EFORMAT;
		fl->yes = s + 1;
		fl->yes_len = (size_t)(bar - s - 1);
		fl->no = bar + 1;
		fl->no_len = (size_t)(end - bar - 1);
		s = end;
	}
	return s == end && (!fl->eq || fl->yes) ? 0 : -FB_EFORMAT;
}

/* ---- rendering a field ------------------------------------------------------------------ */

enum out_mode { MODE_MD, MODE_CSV };

/* A string value: in Markdown '|' would end a table cell and a newline the row. */
static void out_put_str(FILE *f, const char *s, enum out_mode mode)
{
	bool quote = mode == MODE_CSV && strpbrk(s, ",\"\n");

	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		if (mode == MODE_MD && *s == '|')
			fputs("\\|", f);
		else if (mode == MODE_MD && (*s == '\n' || *s == '\r'))
			fputc(' ', f);
		else if (quote && *s == '"')
			fputs("\"\"", f);
		else
			fputc(*s, f);
	}
	if (quote)
		fputc('"', f);
}

/* The value as text without a conversion (also what "=text" compares with). */
static void out_text(const json_t *v, double x, bool use_x, char *buf, size_t len)
{
	if (use_x && x == nearbyint(x) && fabs(x) < 1e15) /* a count, or µs from seconds */
		snprintf(buf, len, "%.0f", x);
	else if (use_x)
		outputs_format_number(x, buf, len);
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		outputs_format_number(json_real_value(v), buf, len);
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, len, "%s", json_is_object(v) ? "(object)" : "(array)");
}

/* "n/a" (empty in a CSV) in the conversion's width. */
static void out_missing(FILE *f, const struct out_field *fl, enum out_mode mode)
{
	char c[24];
	const char *p = fl->conv + 1;

	if (mode == MODE_CSV)
		return;
	if (!fl->conv[0]) {
		fputs("n/a", f);
		return;
	}
	int width = atoi(p + strspn(p, "-+ 0#"));
	if (width <= 3) {
		fputs("n/a", f);
		return;
	}
	snprintf(c, sizeof(c), "%%%s%ds", *p == '-' ? "-" : "", width);
	fprintf(f, c, "n/a");
}

/* Writes one field; returns 1 when its value is missing, else 0. */
static int out_field(FILE *f, const struct out_field *fl, json_t *obj, json_t *root,
		     enum out_mode mode)
{
	json_t *v = NULL;
	double x = NAN;
	bool num = false;
	char text[512];

	if (fl->agg) {
		struct out_acc a = {0};
		const char *p = fl->path[0] == '/' ? fl->path + 1 : fl->path;
		json_t *from = fl->path[0] == '/' ? root : obj;
		if (fl->agg == AGG_COUNT) {
			json_t *arr = out_get(from, p);
			a.n = json_is_array(arr) ? json_array_size(arr) : 0;
			x = json_is_array(arr) ? (double)a.n : NAN;
		} else {
			out_collect(from, p, &a);
			x = !a.n		  ? NAN
			    : fl->agg == AGG_MIN  ? a.min
			    : fl->agg == AGG_MAX  ? a.max
			    : fl->agg == AGG_MEAN ? a.sum / (double)a.n
						  : a.sum;
		}
		num = !isnan(x);
	} else {
		v = fl->path[0] == '/' ? out_get(root, fl->path + 1) : out_get(obj, fl->path);
		if (json_is_number(v)) {
			x = json_number_value(v);
			num = true;
		}
	}
	if (!num && (!v || json_is_object(v) || json_is_array(v))) {
		out_missing(f, fl, mode);
		return 1;
	}
	if (fl->scaled || (fl->conv[0] && !strchr("s", fl->conv[strlen(fl->conv) - 1]))) {
		if (!num) {
			out_missing(f, fl, mode);
			return 1;
		}
		x *= fl->factor;
	}
	if (fl->yes) {
		bool on;
		if (fl->eq) {
			out_text(v, x, num && (fl->agg || fl->scaled), text, sizeof(text));
			on = strlen(text) == fl->eq_len && strncmp(text, fl->eq, fl->eq_len) == 0;
		} else {
			on = num ? x != 0 : json_is_true(v);
		}
		fwrite(on ? fl->yes : fl->no, 1, on ? fl->yes_len : fl->no_len, f);
		return 0;
	}
	if (fl->conv[0]) {
		char c = fl->conv[strlen(fl->conv) - 1], conv[32];
		if (c == 'd') {
			snprintf(conv, sizeof(conv), "%.*slld", (int)strlen(fl->conv) - 1,
				 fl->conv);
			if (json_is_integer(v) && !fl->scaled && !fl->agg)
				fprintf(f, conv, (long long)json_integer_value(v));
			else
				fprintf(f, conv, llround(x));
		} else if (c == 's') {
			out_text(v, x, num && (fl->agg || fl->scaled), text, sizeof(text));
			fprintf(f, fl->conv, text);
		} else {
			fprintf(f, fl->conv, x);
		}
		return 0;
	}
	out_text(v, x, num && (fl->agg || fl->scaled), text, sizeof(text));
	if (json_is_string(v) && !fl->agg)
		out_put_str(f, text, mode);
	else
		fputs(text, f);
	return 0;
}

static int out_template(FILE *f, const char *tpl, json_t *obj, json_t *root, enum out_mode mode)
{
	char spec[OUT_PATH_MAX + 96];
	int missing = 0;

	while (*tpl) {
		const char *close;
		struct out_field fl;

		if ((tpl[0] == '{' && tpl[1] == '{') || (tpl[0] == '}' && tpl[1] == '}')) {
			fputc(*tpl, f);
			tpl += 2;
			continue;
		}
		if (*tpl != '{') {
			fputc(*tpl++, f);
			continue;
		}
		close = strchr(tpl, '}');
		if (!close || (size_t)(close - tpl) >= sizeof(spec))
			return -FB_EFORMAT;
		snprintf(spec, sizeof(spec), "%.*s", (int)(close - tpl - 1), tpl + 1);
		if (out_parse(spec, strlen(spec), &fl) < 0)
			return -FB_EFORMAT;
		missing += out_field(f, &fl, obj, root, mode);
		tpl = close + 1;
	}
	return missing;
}

int outputs_template(FILE *f, const char *tpl, json_t *obj, json_t *root)
{
	return out_template(f, tpl, obj, root ? root : obj, MODE_MD);
}

/* ---- descriptions every workload shares ------------------------------------------------ */

const struct out_fact outputs_what_ran[] = {
    {"workload", "{workload} (type {workload_type})", NULL},
    {"description", "{description}", "description"},
    {"start, end (UTC)", "{start}, {end}", NULL},
    {"ranks, nodes",
     "{num_ranks} rank{num_ranks=1?|s} on {num_nodes} node{num_nodes=1?|s} (rank 0 on "
     "{hostname})",
     NULL},
    {"data folder", "`{config.dataset.data_dir}`", NULL},
    {"file system", "{storage.fs_type} at `{storage.mount}`", NULL},
    {"back-end", "{storage.backend}", NULL},
    {"stripe requested",
     "count {storage.stripe_requested.count}, size {storage.stripe_requested.size} bytes",
     "storage.stripe_requested.count"},
    {"stripe effective", "{storage.stripe_effective}", NULL},
    {"stripe effective",
     "count {storage.stripe_effective.count}, size {storage.stripe_effective.size} bytes", NULL},
    {"servers spanned", "{storage.stripe_effective.servers_spanned}", NULL},
    {"cache state", "direct {storage.direct}, page_cache {storage.page_cache}", NULL},
    {"feedbench", "{feedbench_version}, commit {git_commit}", NULL},
    {"config hash", "`{config_hash}`", NULL},
    {NULL, NULL, NULL}};

/* ---- files ------------------------------------------------------------------------------ */

/* Whether the member at path is there and true or a non-zero number (NULL path: always). */
static bool out_when(json_t *root, const char *path)
{
	json_t *v = path ? out_get(root, path) : root;

	if (!path)
		return true;
	if (json_is_number(v))
		return json_number_value(v) != 0;
	if (json_is_string(v))
		return *json_string_value(v) != '\0';
	return v && !json_is_false(v);
}

static bool out_exists(const char *dir, const char *name)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* "Files: `summary.json` (everything), `config.ini`, ...": those the folder holds (dir), or
 * those the description names (dir NULL: the folder is not written yet). */
static void out_files(FILE *f, const struct workload_outputs *o, const char *dir)
{
	const char *names[16] = {"config.ini", "table.md"};
	size_t n = 2;

	for (size_t i = 0; o && o->csvs && o->csvs[i].name && n < 16; i++)
		names[n++] = o->csvs[i].name;
	fprintf(f, "Files: `summary.json` (everything)");
	for (size_t i = 0; i < n; i++)
		if (!dir || out_exists(dir, names[i]))
			fprintf(f, ", `%s`", names[i]);
	fprintf(f, ".\n\n");
}

/* "| a | b |" and its rule: numbers right-aligned. */
static void out_header(FILE *f, const struct out_col *cols)
{
	fputc('|', f);
	for (size_t c = 0; cols[c].head; c++)
		fprintf(f, *cols[c].head ? " %s |" : " |", cols[c].head);
	fputs("\n|", f);
	for (size_t c = 0; cols[c].head; c++)
		fputs(cols[c].left ? "---|" : "---:|", f);
	fputc('\n', f);
}

static int out_facts(FILE *f, const struct out_block *b, json_t *root)
{
	static const struct out_col two[] = {
	    {"", NULL, true}, {"", NULL, true}, {NULL, NULL, false}};
	char *buf = NULL;
	size_t len = 0;

	out_header(f, b->cols ? b->cols : two);
	for (size_t i = 0; b->facts[i].label; i++) {
		const struct out_fact *x = &b->facts[i];
		FILE *m;
		int miss;

		if (!out_when(root, x->when))
			continue;
		if (!(m = open_memstream(&buf, &len)))
			return -ENOMEM;
		miss = out_template(m, x->value, root, root, MODE_MD);
		fclose(m);
		if (miss == 0)
			fprintf(f, "| %s | %s |\n", x->label, buf);
		free(buf);
		buf = NULL;
		if (miss < 0)
			return miss;
	}
	return 0;
}

static int out_rows(FILE *f, const struct out_block *b, json_t *root)
{
	json_t *arr = out_get(root, b->rows), *v;
	size_t i;

	out_header(f, b->cols);
	json_array_foreach(arr, i, v)
	{
		fputc('|', f);
		for (size_t c = 0; b->cols[c].head; c++) {
			fputc(' ', f);
			if (out_template(f, b->cols[c].cell, v, root, MODE_MD) < 0)
				return -FB_EFORMAT;
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	return 0;
}

int outputs_render(FILE *f, const struct out_block *blocks, const struct workload_outputs *o,
		   json_t *summary, const char *dir)
{
	for (const struct out_block *b = blocks; b && (b->text || b->rows || b->facts || b->files);
	     b++) {
		int rc = 0;

		if (!out_when(summary, b->when) || (b->unless && out_when(summary, b->unless)))
			continue;
		if (b->text && out_template(f, b->text, summary, summary, MODE_MD) < 0)
			return -FB_EFORMAT;
		if (b->files)
			out_files(f, o, dir);
		if (b->facts)
			rc = out_facts(f, b, summary);
		else if (b->rows && b->cols)
			rc = out_rows(f, b, summary);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int outputs_csv(FILE *f, const struct out_csv *csv, json_t *summary)
{
	json_t *v;
	size_t i;

	for (size_t c = 0; csv->cols[c].head; c++)
		fprintf(f, "%s%s", c ? "," : "", csv->cols[c].head);
	fputc('\n', f);
	json_array_foreach(out_get(summary, csv->rows), i, v)
	{
		for (size_t c = 0; csv->cols[c].head; c++) {
			if (c)
				fputc(',', f);
			if (out_template(f, csv->cols[c].cell, v, summary, MODE_CSV) < 0)
				return -FB_EFORMAT;
		}
		fputc('\n', f);
	}
	return 0;
}

/* Pictures `feedbench plot` may have drawn into a run folder of any workload. */
static const char *const out_plots[][2] = {
    {"au.png", "Accelerator utilisation per epoch"},
    {"latency.png", "Read latency distribution"},
    {"timeline.png", "Per-rank timeline of reads and compute"},
};

int outputs_report(FILE *f, const struct workload_outputs *o, json_t *summary, const char *dir)
{
	json_t *w = json_object_get(summary, "warnings"), *v;
	bool plots = false;
	size_t i;
	int rc;

	if (out_template(f, "# feedbench run: {workload}\n\n", summary, summary, MODE_MD) < 0 ||
	    (rc = outputs_render(f, o->report, o, summary, dir)) < 0)
		return -FB_EFORMAT;
	for (i = 0; dir && i < sizeof(out_plots) / sizeof(out_plots[0]); i++) {
		if (!out_exists(dir, out_plots[i][0]))
			continue;
		if (!plots)
			fprintf(f, "## Plots\n\n");
		plots = true;
		fprintf(f, "### %s\n\n![%s](%s)\n\n", out_plots[i][1], out_plots[i][1],
			out_plots[i][0]);
	}
	if (json_array_size(w))
		fprintf(f, "## Warnings\n\n");
	json_array_foreach(w, i, v)
	{
		fputs("- ", f);
		out_put_str(f, json_is_string(v) ? json_string_value(v) : "(not text)", MODE_MD);
		fputc('\n', f);
	}
	return 0;
}
