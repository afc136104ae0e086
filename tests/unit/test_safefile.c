/* safe_json_load (bench/safefile.c):
 * - a summary.json is read with a few read() calls, not one per byte (jansson's json_loadfd
 *   reads a byte at a time: ~10 000 calls for a summary);
 * - the parsed value is the file's, errors name the file, a FIFO is refused without blocking;
 * - safe_json_load_at(nofollow) refuses a symbolic link that safe_json_load follows.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/safefile.h"

/* Every read() of the process, counted while counting is set (the library's calls included). */
static int counting;
static long reads;

ssize_t read(int fd, void *buf, size_t len)
{
	static ssize_t (*real_read)(int, void *, size_t);

	if (!real_read)
		real_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (counting)
		reads++;
	return real_read(fd, buf, len);
}

static char dir[] = "/tmp/fb_safefile_XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void few_reads(void **state)
{
	char path[256], *text;
	size_t cap = 64 * 1024, len = 0;
	json_error_t err;
	json_t *j;

	(void)state;
	text = malloc(cap);
	len += (size_t)snprintf(text + len, cap - len, "{\"values\": [");
	for (int i = 0; i < 2000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s%d", i ? ", " : "", i);
	snprintf(text + len, cap - len, "], \"name\": \"x\"}\n");
	snprintf(path, sizeof(path), "%s/summary.json", dir);
	write_file(path, text);
	reads = 0;
	counting = 1;
	j = safe_json_load(path, 0, &err);
	counting = 0;
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "values")), 2000);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "values"), 1999)),
			 1999);
	/* Over 10 000 bytes: one read per byte would be > 10 000 calls. */
	assert_true(strlen(text) > 10000);
	assert_true(reads >= 1);
	assert_true(reads <= 4);
	json_decref(j);
	free(text);
}

static void errors_name_the_file(void **state)
{
	char path[256], fifo[256];
	json_error_t err;

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	write_file(path, "{\"a\": 1,");
	assert_null(safe_json_load(path, 0, &err));
	assert_string_equal(err.source, path);
	assert_true(err.line >= 1);

	snprintf(path, sizeof(path), "%s/missing.json", dir);
	assert_null(safe_json_load(path, 0, &err));
	assert_non_null(strstr(err.text, "missing.json"));

	snprintf(fifo, sizeof(fifo), "%s/fifo.json", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(safe_json_load(fifo, 0, &err)); /* returns: never blocks on a FIFO */
	assert_non_null(strstr(err.text, "not a regular file"));

	snprintf(path, sizeof(path), "%s/empty.json", dir);
	write_file(path, "");
	assert_null(safe_json_load(path, 0, &err));
}

static void nofollow(void **state)
{
	char path[256], link[256];
	json_error_t err;
	json_t *j;

	(void)state;
	snprintf(path, sizeof(path), "%s/target.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	write_file(path, "{\"a\": 1}");
	assert_int_equal(symlink(path, link), 0);
	j = safe_json_load(link, 0, &err); /* a user's path: links are followed */
	assert_non_null(j);
	json_decref(j);
	assert_null(safe_json_load_at(link, 0, true, &err)); /* inside our folders: refused */
	assert_non_null(strstr(err.text, "link.json"));
	assert_non_null(strstr(err.text, "not a regular file"));
	j = safe_json_load_at(path, 0, true, &err);
	assert_non_null(j);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(few_reads),
	    cmocka_unit_test(errors_name_the_file),
	    cmocka_unit_test(nofollow),
	};
	char cmd[300];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
