/* What the MLPerf results writers (mlperf_results.c for training, mlperf_results_ckpt.c for
 * checkpointing) share: a CSV cell of a JSON value and the atomic, safe write of a file of the
 * submission folder. */
#include "mlperf.h"

#include <errno.h>
#include <stdlib.h>

#include "safefile.h"
#include "util.h"

void mlperf_csv_cell(FILE *f, json_t *v)
{
	if (json_is_string(v))
		util_csv_field(f, json_string_value(v));
	else if (json_is_real(v))
		fprintf(f, "%.6g", json_real_value(v));
	else if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "true" : "false", f);
}

int mlperf_write_text(const char *dir, const char *name, char *text, size_t len)
{
	char path[4200];
	int rc = -ENOMEM;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		rc = -ENAMETOOLONG;
	else if (text)
		rc = safe_write_atomic(path, text, len);
	free(text);
	return rc;
}

int mlperf_write_stream(const char *dir, const char *name, FILE *f, char **text, size_t *len)
{
	/* fclose sets *text and *len: read them only after it */
	if (fclose(f) != 0) {
		free(*text);
		return -ENOMEM;
	}
	return mlperf_write_text(dir, name, *text, *len);
}
