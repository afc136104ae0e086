/* Composite (progressive, PFL) layouts on Lustre: one key, [storage] stripe_layout =
 * "2GiB:1, 4GiB:4, eof:16", is what `lfs setstripe -E 2G -c 1 -E 4G -c 4 -E -1 -c 16` sets:
 * the first 2 GiB of a file on one OST, up to 4 GiB on four, the rest on sixteen.
 *
 * Components are built with liblustreapi's layout API (llapi_layout_alloc, _comp_add,
 * _comp_extent_set, _stripe_count_set, _stripe_size_set) and given to a new file with
 * llapi_layout_file_create, or to the data folder with llapi_layout_file_open (files created
 * in it inherit it). The library is loaded at run time (stripe.c); without it a composite
 * layout cannot be set and the run stops with a configuration error, since the plain
 * LL_IOC_LOV_SETSTRIPE path stripes only plain layouts. CephFS and local file systems have no
 * composite layouts: stripe.c refuses the key there. Read-back walks the components with
 * llapi_layout_comp_use and records each one.
 */
#include "fs.h"
#include "fs_sys.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run.h"
#include "../../formats/format.h"

#define PFL_ALIGN 65536ull

/* ---- parsing ---------------------------------------------------------------------------- */

static char *pfl_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* One "END:COUNT[:SIZE]" item into c; prev_end is the end of the component before it. */
static int pfl_parse_item(char *item, int idx, uint64_t prev_end, struct stripe_comp *c, char *why,
			  size_t whylen)
{
	char *end_s = pfl_trim(item), *count_s, *size_s, sub[160];
	char *count_end;

	count_s = strchr(end_s, ':');
	if (!count_s) {
		snprintf(why, whylen, "component %d (\"%s\"): expected END:COUNT[:SIZE]", idx,
			 end_s);
		return -1;
	}
	*count_s++ = '\0';
	size_s = strchr(count_s, ':');
	if (size_s)
		*size_s++ = '\0';
	end_s = pfl_trim(end_s);
	count_s = pfl_trim(count_s);
	c->start = prev_end;
	c->size = 0;
	if (strcmp(end_s, "eof") == 0 || strcmp(end_s, "EOF") == 0 || strcmp(end_s, "-1") == 0) {
		c->end = UINT64_MAX;
	} else if (cfg_parse_size(end_s, &c->end, sub, sizeof(sub)) != 0) {
		snprintf(why, whylen, "component %d: end \"%s\": %s", idx, end_s, sub);
		return -1;
	}
	errno = 0;
	c->count = strtoll(count_s, &count_end, 10);
	if (errno || count_end == count_s || *count_end || c->count < 1 || c->count > 65535) {
		snprintf(why, whylen,
			 "component %d: stripe count \"%s\" must be a whole number from 1 to 65535",
			 idx, count_s);
		return -1;
	}
	if (size_s && cfg_parse_size(pfl_trim(size_s), &c->size, sub, sizeof(sub)) != 0) {
		snprintf(why, whylen, "component %d: stripe size \"%s\": %s", idx, size_s, sub);
		return -1;
	}
	if (c->size % PFL_ALIGN) {
		snprintf(why, whylen,
			 "component %d: stripe size %" PRIu64 " is not a multiple of 64 KiB", idx,
			 c->size);
		return -1;
	}
	if (c->end != UINT64_MAX && (c->end <= prev_end || c->end % PFL_ALIGN)) {
		snprintf(why, whylen,
			 c->end <= prev_end ? "component %d: end %" PRIu64
					      " is not after the previous end %" PRIu64
					    : "component %d: end %" PRIu64
					      " is not a multiple of 64 KiB",
			 idx, c->end, prev_end);
		return -1;
	}
	if (c->end != UINT64_MAX && c->size && c->end % c->size) {
		snprintf(why, whylen,
			 "component %d: end %" PRIu64
			 " is not a multiple of its stripe size %" PRIu64,
			 idx, c->end, c->size);
		return -1;
	}
	return 0;
}

int stripe_layout_parse(const char *text, struct stripe_comp *c, int max, char *why, size_t whylen)
{
	char buf[512], *save = NULL, *item;
	uint64_t prev = 0;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf)) {
		snprintf(why, whylen, "longer than %zu characters", sizeof(buf) - 1);
		return -1;
	}
	if (!pfl_trim(buf)[0])
		return 0;
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (n > 0 && c[n - 1].end == UINT64_MAX) {
			snprintf(why, whylen,
				 "component %d follows one that ends at eof: eof must be last",
				 n + 1);
			return -1;
		}
		if (n == max) {
			snprintf(why, whylen, "more than %d components", max);
			return -1;
		}
		if (pfl_parse_item(item, n + 1, prev, &c[n], why, whylen))
			return -1;
		prev = c[n++].end;
	}
	if (n == 0 || c[n - 1].end != UINT64_MAX) {
		snprintf(why, whylen,
			 "the last component must end at eof (e.g. \"eof:16\"), so that every "
			 "byte of a file has a layout");
		return -1;
	}
	return n;
}

json_t *pfl_json(const struct stripe_comp *c, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++) {
		json_t *o = json_pack("{s:I}", "start", (json_int_t)c[i].start);

		json_object_set_new(o, "end",
				    c[i].end == UINT64_MAX ? json_string("eof")
							   : json_integer((json_int_t)c[i].end));
		json_object_set_new(o, "count", json_integer((json_int_t)c[i].count));
		json_object_set_new(o, "size", json_integer((json_int_t)c[i].size));
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- the layout API ----------------------------------------------------------------------- */

struct pfl_api {
	llapi_layout_alloc_fn alloc;
	llapi_layout_free_fn free;
	llapi_layout_comp_add_fn comp_add;
	llapi_layout_comp_extent_set_fn extent_set;
	llapi_layout_comp_extent_get_fn extent_get;
	llapi_layout_set_u64_fn count_set, size_set;
	llapi_layout_get_u64_fn count_get, size_get;
	llapi_layout_comp_use_fn comp_use;
	llapi_layout_file_create_fn file_create;
	llapi_layout_file_open_fn file_open;
	llapi_layout_is_composite_fn is_composite;
	llapi_layout_get_by_path_fn get_by_path;
	llapi_layout_ost_index_get_fn ost_index_get;
};

#define PFL_SYM(api, sys, lib, field, name)                                                        \
	((api)->field = (__typeof__((api)->field))(sys)->dlsym(lib, name))

/* Resolves the calls; the name of the first one missing, or NULL when all are there. */
static const char *pfl_resolve(const struct fs_sys *sys, void *lib, struct pfl_api *api)
{
	memset(api, 0, sizeof(*api));
	if (!PFL_SYM(api, sys, lib, alloc, "llapi_layout_alloc"))
		return "llapi_layout_alloc";
	if (!PFL_SYM(api, sys, lib, free, "llapi_layout_free"))
		return "llapi_layout_free";
	if (!PFL_SYM(api, sys, lib, comp_add, "llapi_layout_comp_add"))
		return "llapi_layout_comp_add";
	if (!PFL_SYM(api, sys, lib, extent_set, "llapi_layout_comp_extent_set"))
		return "llapi_layout_comp_extent_set";
	if (!PFL_SYM(api, sys, lib, extent_get, "llapi_layout_comp_extent_get"))
		return "llapi_layout_comp_extent_get";
	if (!PFL_SYM(api, sys, lib, count_set, "llapi_layout_stripe_count_set"))
		return "llapi_layout_stripe_count_set";
	if (!PFL_SYM(api, sys, lib, size_set, "llapi_layout_stripe_size_set"))
		return "llapi_layout_stripe_size_set";
	if (!PFL_SYM(api, sys, lib, count_get, "llapi_layout_stripe_count_get"))
		return "llapi_layout_stripe_count_get";
	if (!PFL_SYM(api, sys, lib, size_get, "llapi_layout_stripe_size_get"))
		return "llapi_layout_stripe_size_get";
	if (!PFL_SYM(api, sys, lib, comp_use, "llapi_layout_comp_use"))
		return "llapi_layout_comp_use";
	if (!PFL_SYM(api, sys, lib, file_create, "llapi_layout_file_create"))
		return "llapi_layout_file_create";
	if (!PFL_SYM(api, sys, lib, file_open, "llapi_layout_file_open"))
		return "llapi_layout_file_open";
	if (!PFL_SYM(api, sys, lib, is_composite, "llapi_layout_is_composite"))
		return "llapi_layout_is_composite";
	if (!PFL_SYM(api, sys, lib, get_by_path, "llapi_layout_get_by_path"))
		return "llapi_layout_get_by_path";
	PFL_SYM(api, sys, lib, ost_index_get, "llapi_layout_ost_index_get"); /* optional */
	return NULL;
}

/* Builds the composite layout; NULL with errno set on failure. */
static void *pfl_build(const struct pfl_api *api, const struct stripe_comp *c, int n,
		       uint64_t default_size)
{
	void *layout = api->alloc();

	if (!layout)
		return NULL;
	for (int i = 0; i < n; i++) {
		uint64_t size = c[i].size ? c[i].size : default_size;

		if ((i > 0 && api->comp_add(layout) != 0) ||
		    api->extent_set(layout, c[i].start,
				    c[i].end == UINT64_MAX ? LUSTRE_EOF : c[i].end) != 0 ||
		    api->count_set(layout, (uint64_t)c[i].count) != 0 ||
		    (size && api->size_set(layout, size) != 0)) {
			int e = errno ? errno : EINVAL;

			api->free(layout);
			errno = e;
			return NULL;
		}
	}
	return layout;
}

static void pfl_describe(const char *text, char *buf, size_t len)
{
	snprintf(buf, len, "the composite layout \"%s\"", text);
}

/* Loads the library and its calls, or fails with the configuration error that says why. */
static int pfl_open_api(struct run *run, void **lib, struct pfl_api *api)
{
	const struct fs_sys *sys = fs_sys_of(run);
	const char *missing;

	*lib = sys->dlopen(LUSTREAPI_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!*lib)
		return run_fail(run, -FB_ECONFIG,
				"[storage] stripe_layout: composite layouts are set through "
				"liblustreapi, and %s cannot be loaded (install the Lustre client "
				"tools, or use stripe_count)",
				LUSTREAPI_SONAME);
	missing = pfl_resolve(sys, *lib, api);
	if (missing) {
		sys->dlclose(*lib);
		return run_fail(run, -FB_ECONFIG,
				"[storage] stripe_layout: %s has no %s (composite layouts need "
				"Lustre 2.10 or later)",
				LUSTREAPI_SONAME, missing);
	}
	return 0;
}

/* Sets the layout on the data folder (open(O_RDONLY) + the layout's xattr, as `lfs setstripe
 * -E ... DIR` does) and removes files of an earlier generation so they inherit it. */
static int pfl_set_dir(struct run *run, const struct pfl_api *api, void *layout, const char *what)
{
	const struct fs_sys *sys = fs_sys_of(run);
	const char *dir = run->cfg.dataset.data_dir;
	int fd, rc;

	rc = fs_sys_mkdir_p(sys, dir);
	if (rc)
		return run_fail(run, rc, "cannot create the data folder '%s': %s", dir,
				fb_strerror(rc));
	fd = api->file_open(dir, O_RDONLY, 0, layout);
	if (fd < 0) {
		rc = errno ? -errno : -EIO;
		return run_fail(run, rc, "cannot set %s on '%s' (llapi_layout_file_open): %s", what,
				dir, fb_strerror(rc));
	}
	sys->close(fd);
	for (uint32_t i = 0; i < run->ds.nfiles; i++) {
		char pbuf[CFG_PATH_MAX + 64];
		const char *path = dataset_path(&run->ds, i, pbuf, sizeof(pbuf));

		if (path && sys->unlink(path) != 0 && errno != ENOENT) {
			rc = -errno;
			return run_fail(run, rc, "cannot remove '%s' to re-create it striped: %s",
					path, fb_strerror(rc));
		}
	}
	return 0;
}

int pfl_prepare(struct run *run, const struct stripe_comp *c, int n)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct pfl_api api;
	char what[400];
	void *lib, *layout;
	int rc;

	/* Every rank checks the library: each one may create shared files. */
	rc = pfl_open_api(run, &lib, &api);
	if (rc)
		return rc;
	pfl_describe(run->cfg.storage.stripe_layout, what, sizeof(what));
	if (run->rank != 0 || (run->cfg.dataset.file_access == FILE_ACCESS_SHARED &&
			       !(run->format && (run->format->caps & FORMAT_CAP_RENAMES)))) {
		sys->dlclose(lib);
		return 0;
	}
	layout = pfl_build(&api, c, n, run->cfg.storage.stripe_size);
	if (!layout) {
		rc = -errno;
		run_fail(run, rc, "cannot build %s: %s", what, fb_strerror(rc));
	} else {
		rc = pfl_set_dir(run, &api, layout, what);
		api.free(layout);
	}
	sys->dlclose(lib);
	return rc;
}

int pfl_create_file(struct run *run, const char *path, const struct stripe_comp *c, int n)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct pfl_api api;
	char what[400];
	void *lib, *layout;
	int fd, rc = 0;

	rc = pfl_open_api(run, &lib, &api);
	if (rc)
		return rc;
	pfl_describe(run->cfg.storage.stripe_layout, what, sizeof(what));
	if (sys->unlink(path) != 0 && errno != ENOENT) {
		rc = -errno;
		run_fail(run, rc, "cannot remove '%s' to re-create it striped: %s", path,
			 fb_strerror(rc));
		goto out_close;
	}
	layout = pfl_build(&api, c, n, run->cfg.storage.stripe_size);
	if (!layout) {
		rc = -errno;
		run_fail(run, rc, "cannot build %s: %s", what, fb_strerror(rc));
		goto out_close;
	}
	fd = api.file_create(path, O_WRONLY, 0644, layout);
	if (fd < 0) {
		rc = fd < -1 ? fd : (errno ? -errno : -EIO);
		run_fail(run, rc, "cannot create '%s' with %s (llapi_layout_file_create): %s", path,
			 what, fb_strerror(rc));
	} else {
		sys->close(fd);
	}
	api.free(layout);
out_close:
	sys->dlclose(lib);
	return rc;
}

/* The OST indices of the current component (instantiated stripes only). */
static json_t *pfl_servers(const struct pfl_api *api, void *layout, int64_t count)
{
	json_t *a = json_array();
	uint64_t idx;

	for (int64_t i = 0; api->ost_index_get && i < count; i++) {
		if (api->ost_index_get(layout, (int)i, &idx) != 0 || idx == LLAPI_LAYOUT_DEFAULT)
			break;
		json_array_append_new(a, json_integer((json_int_t)idx));
	}
	return a;
}

/* Warns when the components read back are not the ones asked for. */
static void pfl_compare(struct run *run, json_t *got)
{
	struct stripe_comp want[STRIPE_MAX_COMPS];
	char why[256];
	int n = stripe_layout_parse(run->cfg.storage.stripe_layout, want, STRIPE_MAX_COMPS, why,
				    sizeof(why));
	bool same = n == (int)json_array_size(got);

	for (int i = 0; same && i < n; i++) {
		json_t *g = json_array_get(got, (size_t)i);
		json_t *e = json_object_get(g, "end");
		uint64_t size = want[i].size ? want[i].size : run->cfg.storage.stripe_size;

		same =
		    json_integer_value(json_object_get(g, "start")) == (json_int_t)want[i].start &&
		    (want[i].end == UINT64_MAX
			 ? json_is_string(e)
			 : json_integer_value(e) == (json_int_t)want[i].end) &&
		    json_integer_value(json_object_get(g, "count")) == want[i].count &&
		    (!size || json_integer_value(json_object_get(g, "size")) == (json_int_t)size);
	}
	if (n > 0 && !same)
		run_warn(run,
			 "composite layout differs from the request \"%s\": see "
			 "stripe_effective.components (check with lfs getstripe)",
			 run->cfg.storage.stripe_layout);
}

bool pfl_readback(struct run *run, void *lib, const char *path, int *rc)
{
	const struct fs_sys *sys = fs_sys_of(run);
	json_t *comps, *first;
	struct pfl_api api;
	void *layout;
	int pos;

	*rc = 0;
	if (pfl_resolve(sys, lib, &api))
		return false;
	layout = api.get_by_path(path, 0);
	if (!layout) {
		*rc = errno ? -errno : -EIO;
		return true;
	}
	if (!api.is_composite(layout)) {
		api.free(layout);
		return false;
	}
	comps = json_array();
	for (pos = api.comp_use(layout, LLAPI_LAYOUT_COMP_USE_FIRST); pos == 0;
	     pos = api.comp_use(layout, LLAPI_LAYOUT_COMP_USE_NEXT)) {
		uint64_t start = 0, end = 0, count = 0, size = 0;
		json_t *o;

		if (api.extent_get(layout, &start, &end) || api.count_get(layout, &count) ||
		    api.size_get(layout, &size)) {
			pos = -1;
			break;
		}
		o = json_pack("{s:I}", "start", (json_int_t)start);
		json_object_set_new(o, "end",
				    end == LUSTRE_EOF ? json_string("eof")
						      : json_integer((json_int_t)end));
		json_object_set_new(o, "count",
				    json_integer(count == LLAPI_LAYOUT_WIDE ? -1
						 : count == LLAPI_LAYOUT_DEFAULT
						     ? 0
						     : (json_int_t)count));
		json_object_set_new(
		    o, "size", json_integer(size == LLAPI_LAYOUT_DEFAULT ? 0 : (json_int_t)size));
		json_object_set_new(
		    o, "servers", pfl_servers(&api, layout, (int64_t)(count < 65536 ? count : 0)));
		json_array_append_new(comps, o);
	}
	api.free(layout);
	if (pos < 0) {
		json_decref(comps);
		*rc = errno ? -errno : -EIO;
		return true;
	}
	if (json_array_size(comps) == 0) {
		json_decref(comps);
		*rc = -EPROTO;
		return true;
	}
	first = json_array_get(comps, 0);
	json_object_set_new(run->info_storage, "stripe_effective",
			    json_pack("{s:b, s:O, s:O, s:o, s:s, s:s}", "composite", 1, "count",
				      json_object_get(first, "count"), "size",
				      json_object_get(first, "size"), "components", comps, "path",
				      path, "method", "llapi"));
	pfl_compare(run, comps);
	return true;
}
