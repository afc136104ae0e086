/* CephFS layouts: the striping back-end beside Lustre (stripe.c dispatches here).
 *
 * A CephFS file is cut into RADOS objects of object_size bytes; stripe_unit-sized blocks are
 * dealt round-robin over stripe_count objects at a time. The layout is a virtual xattr,
 * settable only while the file is empty (ENOTEMPTY otherwise) or on a folder as the default of
 * files created in it later. feedbench sets the whole layout in one setxattr of
 * "ceph.file.layout" ("stripe_unit=1048576 stripe_count=4 object_size=4194304"): the MDS
 * validates the result once, so the order of the fields cannot make a valid layout fail on
 * the way (setting stripe_unit to 8 MiB before object_size would).
 *
 * Before any data is written the layout is tried on an empty probe file in the data folder:
 * what CephFS refuses (stripe_unit not a multiple of 64 KiB, object_size not a multiple of
 * stripe_unit) is a configuration error with the file system's own answer.
 *
 * Which OSDs hold a file: its objects are "<inode hex>.<object number as 8 hex digits>" in the
 * layout's pool, and `ceph osd map POOL OBJECT` names each one's OSDs. One ceph CLI process
 * answers them all (commands on its stdin), on rank 0, after generation, outside the timed
 * part. Without the CLI or a cluster configuration the servers are recorded as unknown, with
 * the reason, never guessed.
 */
#include "fs.h"
#include "fs_sys.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run.h"
#include "../../formats/format.h"

#define CEPH_XATTR_FILE "ceph.file.layout"
#define CEPH_XATTR_DIR	"ceph.dir.layout"
/* Objects asked of `ceph osd map` per run: about a millisecond each. */
#define CEPH_MAX_MAPPED_OBJECTS 20000
/* Files listed one by one in summary.json (the summary figures cover all of them). */
#define CEPH_MAX_LISTED_FILES 256
/* Objects of the first file whose OSDs are listed one by one (object_servers). */
#define CEPH_MAX_OBJECT_SERVERS 64
#define CEPH_CLI_TIMEOUT_S	300.0

struct ceph_layout {
	uint64_t stripe_unit;
	int64_t stripe_count;
	uint64_t object_size;
	char pool[128];
};

struct ceph_file {
	uint64_t ino, size, nobjects;
	struct ceph_layout layout;
	int *osd;     /* primary OSD of each object; -1 = no answer */
	bool mapped;  /* its objects were asked */
	int nservers; /* distinct OSDs */
};

bool ceph_uses_dir_layout(const struct run *run)
{
	/* Formats whose library creates (HDF5) or renames (libzip) the file: a layout given to
	 * an empty file first would be lost, so the folder's default layout is set instead. */
	return run->format && (run->format->caps & (FORMAT_CAP_OWNS_IO | FORMAT_CAP_RENAMES));
}

/* The xattr value: only the fields asked for; the others keep the folder's defaults. */
void ceph_layout_value(const struct stripe_layout *l, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (l->size)
		n += (size_t)snprintf(buf + n, len - n, "stripe_unit=%" PRIu64, l->size);
	if (l->count > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%sstripe_count=%" PRId64, n ? " " : "",
				      l->count);
	if (l->object_size && n < len)
		snprintf(buf + n, len - n, "%sobject_size=%" PRIu64, n ? " " : "", l->object_size);
}

/* Parses "stripe_unit=4194304 stripe_count=1 object_size=4194304 pool=cephfs_data". */
int ceph_layout_parse(const char *text, struct ceph_layout *out)
{
	const char *p = text;
	int seen = 0;

	memset(out, 0, sizeof(*out));
	while (*p) {
		char key[32], val[160];
		int used = 0;

		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (sscanf(p, "%31[^= ]=%159s%n", key, val, &used) != 2)
			return -EPROTO;
		p += used;
		if (strcmp(key, "stripe_unit") == 0)
			out->stripe_unit = strtoull(val, NULL, 10), seen |= 1;
		else if (strcmp(key, "stripe_count") == 0)
			out->stripe_count = strtoll(val, NULL, 10), seen |= 2;
		else if (strcmp(key, "object_size") == 0)
			out->object_size = strtoull(val, NULL, 10), seen |= 4;
		else if (strcmp(key, "pool") == 0)
			snprintf(out->pool, sizeof(out->pool), "%s", val), seen |= 8;
	}
	return seen == 15 ? 0 : -EPROTO;
}

/* Reads a file's (or, dir, a folder's) layout. -ENODATA: a folder without its own layout. */
static int ceph_layout_get(const struct fs_sys *sys, const char *path, bool dir,
			   struct ceph_layout *out)
{
	char text[512];
	ssize_t n =
	    sys->getxattr(path, dir ? CEPH_XATTR_DIR : CEPH_XATTR_FILE, text, sizeof(text) - 1);

	if (n < 0)
		return -errno;
	text[n] = '\0';
	return ceph_layout_parse(text, out);
}

/* Objects of a file of `size` bytes: blocks of stripe_unit go round-robin over stripe_count
 * objects; a set of stripe_count objects holds object_size / stripe_unit rounds. Objects are
 * numbered from 0 and a file's objects are 0 .. n-1 (only the last set can be partial). */
uint64_t ceph_object_count(uint64_t size, uint64_t stripe_unit, uint64_t stripe_count,
			   uint64_t object_size)
{
	uint64_t blocks, per_set, full, rest;

	if (!size || !stripe_unit || !stripe_count || object_size < stripe_unit)
		return 0;
	blocks = (size + stripe_unit - 1) / stripe_unit;
	per_set = stripe_count * (object_size / stripe_unit);
	full = blocks / per_set;
	rest = blocks % per_set;
	return full * stripe_count + (rest < stripe_count ? rest : stripe_count);
}

static void ceph_describe(const struct ceph_layout *l, char *buf, size_t len)
{
	snprintf(buf, len,
		 "stripe_unit %" PRIu64 ", stripe_count %" PRId64 ", object_size %" PRIu64,
		 l->stripe_unit, l->stripe_count, l->object_size);
}

/* The ceph CLI's command line. Unless CEPH_CONF says where the cluster is, it is pointed at
 * the configuration and client name of the ceph-fuse process that serves `path` (a file or
 * folder on the mount): the cluster that client talks to is the one holding the files. */
struct ceph_cli {
	char conf[PATH_MAX], name[160];
	char *argv[16];
};

static void ceph_cli_init(struct run *run, const char *path, struct ceph_cli *c, char *const *tail)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct stat st;
	int n = 0;

	c->conf[0] = c->name[0] = '\0';
	if (!getenv("CEPH_CONF") && sys->ceph_fuse_args && sys->stat && sys->stat(path, &st) == 0 &&
	    sys->ceph_fuse_args(st.st_dev, c->conf, sizeof(c->conf), c->name, sizeof(c->name)) != 0)
		c->conf[0] = c->name[0] = '\0';
	c->argv[n++] = "ceph";
	if (c->conf[0]) {
		c->argv[n++] = "-c";
		c->argv[n++] = c->conf;
	}
	if (c->name[0]) {
		c->argv[n++] = "--name";
		c->argv[n++] = c->name;
	}
	c->argv[n++] = "--connect-timeout";
	c->argv[n++] = "30";
	c->argv[n++] = "--format";
	c->argv[n++] = "json";
	while (tail && *tail && n < 15)
		c->argv[n++] = *tail++;
	c->argv[n] = NULL;
}

/* Creates `path` empty (a new inode) and sets its layout. */
static int ceph_create_with_layout(const struct fs_sys *sys, const char *path, const char *value)
{
	int fd, rc = 0;

	if (sys->unlink(path) != 0 && errno != ENOENT)
		return -errno;
	fd = sys->open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0)
		return -errno;
	if (sys->close(fd) != 0)
		rc = -errno;
	if (!rc && sys->setxattr(path, CEPH_XATTR_FILE, value, strlen(value), 0) != 0)
		rc = -errno;
	return rc;
}

/* The configuration error for a layout CephFS refused on the probe file. */
static int ceph_refused(struct run *run, const struct stripe_layout *l, const char *value,
			const struct ceph_layout *dflt, int rc)
{
	char rule[256] = "";

	if (rc == -EINVAL)
		snprintf(rule, sizeof(rule),
			 " (CephFS needs stripe_unit and object_size in multiples of 64 KiB and "
			 "object_size a multiple of stripe_unit; this folder's default is "
			 "stripe_unit %" PRIu64 ", object_size %" PRIu64 ")",
			 dflt->stripe_unit, dflt->object_size);
	return run_fail(run, -FB_ECONFIG,
			"[storage] stripe_count %" PRId64 ", stripe_size %" PRIu64
			", object_size %" PRIu64 ": cephfs refuses the layout \"%s\" on '%s': %s%s",
			l->count, l->size, l->object_size, value, run->cfg.dataset.data_dir,
			fb_strerror(rc), rule);
}

/* Tries the layout on an empty file in the data folder, then removes it. Rank 0. */
static int ceph_probe(struct run *run, const struct stripe_layout *l, const char *value)
{
	const struct fs_sys *sys = fs_sys_of(run);
	struct ceph_layout dflt = {0}, got;
	char probe[PATH_MAX];
	int fd, rc;

	if (snprintf(probe, sizeof(probe), "%s/.feedbench-layout-probe.%ld",
		     run->cfg.dataset.data_dir, (long)getpid()) >= (int)sizeof(probe))
		return run_fail(run, -ENAMETOOLONG, "data folder name too long: '%s'",
				run->cfg.dataset.data_dir);
	sys->unlink(probe);
	fd = sys->open(probe, O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (fd < 0) {
		rc = -errno;
		return run_fail(run, rc, "cannot create '%s' to try the layout: %s", probe,
				fb_strerror(rc));
	}
	sys->close(fd);
	ceph_layout_get(sys, probe, false, &dflt);
	rc = sys->setxattr(probe, CEPH_XATTR_FILE, value, strlen(value), 0) ? -errno : 0;
	if (!rc && (rc = ceph_layout_get(sys, probe, false, &got)) != 0)
		run_fail(run, rc, "cannot read back the layout of '%s' (%s): %s", probe,
			 CEPH_XATTR_FILE, fb_strerror(rc));
	else if (rc)
		ceph_refused(run, l, value, &dflt, rc);
	if (sys->unlink(probe) != 0 && !rc) {
		rc = -errno;
		run_fail(run, rc, "cannot remove the probe file '%s': %s", probe, fb_strerror(rc));
	}
	return rc ? run->err.code : 0;
}

/* Objects of one stripe on more OSDs than the cluster has would share OSDs: CephFS accepts
 * such a layout, but the stripe count asked for cannot be what the files get, so it is
 * refused. Without the ceph CLI or a reachable cluster nothing is checked here (the
 * read-back says why the servers are unknown). */
static int ceph_check_osds(struct run *run, const struct stripe_layout *l)
{
	const struct fs_sys *sys = fs_sys_of(run);
	char *tail[] = {"osd", "ls", NULL};
	char *out = NULL, *err = NULL;
	struct ceph_cli cli;
	json_t *ids = NULL;
	int rc, n = 0;

	if (l->count <= 1 || !sys->run_cmd)
		return 0;
	ceph_cli_init(run, run->cfg.dataset.data_dir, &cli, tail);
	rc = sys->run_cmd(cli.argv, NULL, CEPH_CLI_TIMEOUT_S, &out, &err);
	if (rc == 0 && out)
		ids = json_loads(out, JSON_DECODE_ANY, NULL);
	if (json_is_array(ids))
		n = (int)json_array_size(ids);
	json_decref(ids);
	free(out);
	free(err);
	if (n > 0 && l->count > n)
		return run_fail(
		    run, -FB_ECONFIG,
		    "[storage] stripe_count = %" PRId64
		    " is more than the %d OSDs of the cluster (ceph osd ls): objects of "
		    "one stripe would share OSDs; use at most %d",
		    l->count, n, n);
	return 0;
}

int ceph_prepare(struct run *run, const struct stripe_layout *l)
{
	const struct fs_sys *sys = fs_sys_of(run);
	char value[160];
	int rc;

	if (l->count < 0)
		return run_fail(run, -FB_ECONFIG,
				"[storage] stripe_count = -1 (every target) has no CephFS "
				"equivalent: give a count of objects to stripe over");
	if (l->offset >= 0)
		run_warn(run, "stripe_offset is ignored on cephfs: CRUSH places the objects");
	if (run->rank != 0)
		return 0;
	ceph_layout_value(l, value, sizeof(value));
	if (!value[0]) /* only stripe_offset: nothing to set */
		return 0;
	rc = fs_sys_mkdir_p(sys, run->cfg.dataset.data_dir);
	if (rc)
		return run_fail(run, rc, "cannot create the data folder '%s': %s",
				run->cfg.dataset.data_dir, fb_strerror(rc));
	rc = ceph_check_osds(run, l);
	if (rc)
		return rc;
	rc = ceph_probe(run, l, value);
	if (rc || !ceph_uses_dir_layout(run))
		return rc;
	if (sys->setxattr(run->cfg.dataset.data_dir, CEPH_XATTR_DIR, value, strlen(value), 0)) {
		rc = -errno;
		return run_fail(run, rc, "cannot set %s \"%s\" on '%s': %s", CEPH_XATTR_DIR, value,
				run->cfg.dataset.data_dir, fb_strerror(rc));
	}
	/* Files of an earlier generation keep their layout: remove them to re-create them. */
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

int ceph_create_file(struct run *run, const char *path, const struct stripe_layout *l)
{
	char value[160];
	int rc;

	if (ceph_uses_dir_layout(run))
		return 0;
	ceph_layout_value(l, value, sizeof(value));
	if (!value[0])
		return 0;
	rc = ceph_create_with_layout(fs_sys_of(run), path, value);
	if (rc)
		return run_fail(run, rc, "cannot create '%s' with the layout \"%s\" (%s): %s", path,
				value, CEPH_XATTR_FILE, fb_strerror(rc));
	return 0;
}

/* ---- which OSDs hold the objects ------------------------------------------------------- */

static int ceph_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Sorts and deduplicates v[0..n); returns the distinct count. */
static int ceph_distinct(int *v, int n)
{
	int k = 0;

	qsort(v, (size_t)n, sizeof(*v), ceph_cmp_int);
	for (int i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* The first line of a message, for a reason recorded in summary.json. */
static void ceph_first_line(const char *text, char *buf, size_t len)
{
	const char *p = text ? text : "";
	size_t n;

	while (*p == '\n' || *p == ' ')
		p++;
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

/* Fills f[i].osd from the CLI's answers: a stream of JSON objects, one per `osd map`, each
 * naming its object ("objname") and its primary ("acting_primary", where reads go). */
static int ceph_parse_answers(const char *out, struct ceph_file *f, uint32_t nfiles,
			      uint64_t *answered, int *nosds)
{
	size_t off = 0, len = out ? strlen(out) : 0;
	uint32_t hint = 0;

	*answered = 0;
	while (off < len) {
		json_error_t jerr;
		json_t *o;
		unsigned long long ino, objno;
		const char *name;
		json_t *prim;

		while (off < len && (out[off] == '\n' || out[off] == ' '))
			off++;
		if (off >= len)
			break;
		o = json_loadb(out + off, len - off, JSON_DISABLE_EOF_CHECK, &jerr);
		if (!o)
			return -EPROTO;
		off += jerr.position;
		if (json_is_array(o)) /* `osd ls`: the cluster's OSD ids */
			*nosds = (int)json_array_size(o);
		name = json_string_value(json_object_get(o, "objname"));
		prim = json_object_get(o, "acting_primary");
		if (!prim)
			prim = json_object_get(o, "up_primary");
		if (name && json_is_integer(prim) && sscanf(name, "%llx.%llx", &ino, &objno) == 2) {
			for (uint32_t k = 0; k < nfiles; k++) {
				uint32_t i = (hint + k) % nfiles;

				if (f[i].mapped && f[i].ino == ino && objno < f[i].nobjects) {
					if (f[i].osd[objno] < 0)
						(*answered)++;
					f[i].osd[objno] = (int)json_integer_value(prim);
					hint = i;
					break;
				}
			}
		}
		json_decref(o);
	}
	return 0;
}

/* Asks the cluster where the objects of the mapped files are. On failure, why holds the
 * reason and the servers stay unknown. */
static int ceph_osd_map(struct run *run, struct ceph_file *f, uint32_t nfiles, int *nosds,
			char *why, size_t whylen)
{
	const struct fs_sys *sys = fs_sys_of(run);
	char *input = NULL, *out = NULL, *err = NULL, line[512];
	struct ceph_cli cli;
	size_t inlen = 0;
	uint64_t asked = 0, answered = 0;
	FILE *mem;
	int rc;

	if (!sys->run_cmd) {
		snprintf(why, whylen, "no way to run the ceph CLI");
		return -ENOSYS;
	}
	mem = open_memstream(&input, &inlen);
	if (!mem)
		return -ENOMEM;
	fputs("osd ls\n", mem);
	for (uint32_t i = 0; i < nfiles; i++)
		for (uint64_t k = 0; f[i].mapped && k < f[i].nobjects; k++, asked++)
			fprintf(mem, "osd map %s %" PRIx64 ".%08" PRIx64 "\n", f[i].layout.pool,
				f[i].ino, k);
	if (fclose(mem) != 0) {
		free(input);
		return -ENOMEM;
	}
	char pbuf[CFG_PATH_MAX + 64];
	ceph_cli_init(run, dataset_path(&run->ds, 0, pbuf, sizeof(pbuf)), &cli, NULL);
	if (cli.conf[0])
		json_object_set_new(run->info_storage, "ceph_cli_conf",
				    json_sprintf("%s%s%s (from the ceph-fuse client of this mount)",
						 cli.conf, cli.name[0] ? ", " : "", cli.name));
	rc = sys->run_cmd(cli.argv, input, CEPH_CLI_TIMEOUT_S, &out, &err);
	free(input);
	if (rc == 127) {
		snprintf(why, whylen, "the ceph CLI is not installed (ceph-common)");
	} else if (rc == -ETIMEDOUT) {
		snprintf(why, whylen, "ceph osd map did not answer within %.0f s",
			 CEPH_CLI_TIMEOUT_S);
	} else if (rc < 0) {
		snprintf(why, whylen, "cannot run the ceph CLI: %s", fb_strerror(rc));
	} else {
		int prc = ceph_parse_answers(out, f, nfiles, &answered, nosds);

		ceph_first_line(err, line, sizeof(line));
		if (rc != 0)
			snprintf(why, whylen, "ceph osd map failed (exit %d): %s", rc,
				 line[0] ? line : "no message");
		else if (prc)
			snprintf(why, whylen, "ceph osd map answered something that is not JSON");
		else if (answered < asked)
			snprintf(why, whylen,
				 "ceph osd map placed %" PRIu64 " of %" PRIu64 " objects%s%s",
				 answered, asked, line[0] ? ": " : "", line);
		if (rc == 0 && !prc && answered == asked)
			rc = 0;
		else
			rc = rc ? rc : -EPROTO;
	}
	free(out);
	free(err);
	return rc == 0 ? 0 : (rc < 0 ? rc : -EIO);
}

/* ---- read-back ----------------------------------------------------------------------- */

static json_t *ceph_int_array(const int *v, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

/* Distinct OSDs of one file into servers (n objects at most); -1 when any is unknown. */
static int ceph_file_servers(const struct ceph_file *f, int *servers)
{
	for (uint64_t k = 0; k < f->nobjects; k++) {
		if (f->osd[k] < 0)
			return -1;
		servers[k] = f->osd[k];
	}
	return ceph_distinct(servers, (int)f->nobjects);
}

static void ceph_warn_differs(struct run *run, const struct stripe_layout *want,
			      const struct ceph_layout *got, const char *path, uint32_t ndiff)
{
	char g[128];

	ceph_describe(got, g, sizeof(g));
	run_warn(run,
		 "stripe layout differs from the request on %u file%s: requested stripe_count "
		 "%" PRId64 ", stripe_size %" PRIu64 ", object_size %" PRIu64
		 "; '%s' has %s (check with getfattr -n ceph.file.layout)",
		 ndiff, ndiff == 1 ? "" : "s", want->count, want->size, want->object_size, path, g);
}

static bool ceph_differs(const struct stripe_layout *want, const struct ceph_layout *got)
{
	return (want->count > 0 && got->stripe_count != want->count) ||
	       (want->size > 0 && got->stripe_unit != want->size) ||
	       (want->object_size > 0 && got->object_size != want->object_size);
}

/* Builds stripe_effective from the files read back and (when known) their OSDs. */
/* File i's entry of files[] (the first few files), and for file 0 the servers of the
 * effective layout: buf holds the n servers its objects span. */
static void ceph_file_json(struct run *run, json_t *eff, json_t *files, const struct ceph_file *f,
			   uint32_t i, const int *buf, int n)
{
	char pbuf[CFG_PATH_MAX + 64];
	json_t *jf;

	if (i < CEPH_MAX_LISTED_FILES) {
		jf = json_pack("{s:s, s:I, s:I, s:i}", "path",
			       dataset_path(&run->ds, i, pbuf, sizeof(pbuf)), "size_bytes",
			       (json_int_t)f->size, "objects", (json_int_t)f->nobjects,
			       "servers_spanned", n);
		json_object_set_new(jf, "servers", ceph_int_array(buf, n));
		json_array_append_new(files, jf);
	}
	if (i == 0) {
		json_object_set_new(eff, "servers_spanned", json_integer(n));
		json_object_set_new(eff, "servers", ceph_int_array(buf, n));
		/* The OSD of each object in order: two objects of one stripe on one OSD
		 * make that OSD the pace-setter, which servers_spanned alone hides. */
		if (f->nobjects <= CEPH_MAX_OBJECT_SERVERS)
			json_object_set_new(eff, "object_servers",
					    ceph_int_array(f->osd, (int)f->nobjects));
	}
}

static json_t *ceph_effective(struct run *run, const struct stripe_layout *want,
			      struct ceph_file *f, uint32_t nfiles, uint32_t ndiff, bool known,
			      const char *why)
{
	const struct ceph_layout *l0 = &f[0].layout;
	json_t *eff, *files = json_array();
	int *buf = NULL, *all = NULL, nall = 0, smin = INT_MAX, smax = 0;
	uint64_t maxobj = 0, totobj = 0;
	uint32_t mapped = 0;
	double ssum = 0;
	char value[160], pbuf[CFG_PATH_MAX + 64];
	const char *set_by;

	ceph_layout_value(want, value, sizeof(value));
	set_by = !value[0]		     ? "file-system default (nothing requested)"
		 : ceph_uses_dir_layout(run) ? "feedbench: ceph.dir.layout on the data folder"
					     : "feedbench: ceph.file.layout on each file before "
					       "its first write";
	eff = json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:I}", "count",
			(json_int_t)l0->stripe_count, "size", (json_int_t)l0->stripe_unit,
			"object_size", (json_int_t)l0->object_size, "pool", l0->pool, "path",
			dataset_path(&run->ds, 0, pbuf, sizeof(pbuf)), "method",
			"xattr " CEPH_XATTR_FILE, "set_by", set_by, "files_read_back",
			(json_int_t)nfiles, "files_differing", (json_int_t)ndiff);
	for (uint32_t i = 0; i < nfiles; i++) {
		if (f[i].nobjects > maxobj)
			maxobj = f[i].nobjects;
		totobj += f[i].mapped ? f[i].nobjects : 0;
	}
	json_object_set_new(eff, "objects", json_integer((json_int_t)f[0].nobjects));
	buf = malloc((maxobj ? maxobj : 1) * sizeof(int));
	all = malloc((totobj ? totobj : 1) * sizeof(int));
	if (!buf || !all)
		known = false;
	for (uint32_t i = 0; known && i < nfiles; i++) {
		int n;

		if (!f[i].mapped)
			continue;
		n = ceph_file_servers(&f[i], buf);
		if (n < 0) {
			known = false;
			break;
		}
		f[i].nservers = n;
		mapped++;
		smin = n < smin ? n : smin;
		smax = n > smax ? n : smax;
		ssum += n;
		memcpy(all + nall, buf, (size_t)n * sizeof(int));
		nall += n;
		ceph_file_json(run, eff, files, &f[i], i, buf, n);
	}
	if (known && mapped) {
		nall = ceph_distinct(all, nall);
		json_object_set_new(
		    eff, "servers_spanned_per_file",
		    json_pack("{s:i, s:f, s:i}", "min", smin, "mean", ssum / mapped, "max", smax));
		json_object_set_new(eff, "dataset_servers_spanned", json_integer(nall));
		json_object_set_new(eff, "dataset_servers", ceph_int_array(all, nall));
		json_object_set_new(eff, "files_mapped", json_integer(mapped));
		json_object_set_new(eff, "files", files);
		if (mapped < nfiles)
			run_warn(run,
				 "the OSDs of %u of %u files were looked up (at most %d objects "
				 "are asked of ceph osd map per run)",
				 mapped, nfiles, CEPH_MAX_MAPPED_OBJECTS);
	} else {
		char text[600];

		json_decref(files);
		snprintf(text, sizeof(text), "unknown (%s)", why[0] ? why : "no objects");
		json_object_set_new(eff, "servers_spanned", json_string("unknown"));
		json_object_set_new(eff, "servers", json_string(text));
	}
	free(buf);
	free(all);
	return eff;
}

int ceph_readback(struct run *run, const struct stripe_layout *want)
{
	const struct fs_sys *sys = fs_sys_of(run);
	uint32_t nfiles = run->ds.nfiles, ndiff = 0, first_diff = 0;
	uint64_t budget = CEPH_MAX_MAPPED_OBJECTS;
	struct ceph_file *f;
	char why[600] = "";
	bool known;
	int rc = 0, nosds = 0;
	json_t *eff;

	if (!nfiles)
		return 0;
	f = calloc(nfiles, sizeof(*f));
	if (!f)
		return run_fail(run, -ENOMEM, "out of memory reading back %u layouts", nfiles);
	for (uint32_t i = 0; i < nfiles; i++) {
		char pbuf[CFG_PATH_MAX + 64];
		const char *path = dataset_path(&run->ds, i, pbuf, sizeof(pbuf));
		struct stat st;

		rc = ceph_layout_get(sys, path, false, &f[i].layout);
		if (rc) {
			run_fail(run, rc, "cannot read the layout of '%s' (%s): %s", path,
				 CEPH_XATTR_FILE, fb_strerror(rc));
			goto out_free;
		}
		if (sys->stat(path, &st) != 0) {
			rc = -errno;
			run_fail(run, rc, "cannot stat '%s': %s", path, fb_strerror(rc));
			goto out_free;
		}
		f[i].ino = (uint64_t)st.st_ino;
		f[i].size = (uint64_t)st.st_size;
		f[i].nobjects =
		    ceph_object_count(f[i].size, f[i].layout.stripe_unit,
				      (uint64_t)f[i].layout.stripe_count, f[i].layout.object_size);
		if (ceph_differs(want, &f[i].layout) && ndiff++ == 0)
			first_diff = i;
		if (f[i].nobjects <= budget) {
			f[i].osd = malloc((f[i].nobjects ? f[i].nobjects : 1) * sizeof(int));
			if (!f[i].osd) {
				rc = run_fail(run, -ENOMEM, "out of memory");
				goto out_free;
			}
			for (uint64_t k = 0; k < f[i].nobjects; k++)
				f[i].osd[k] = -1;
			f[i].mapped = true;
			budget -= f[i].nobjects;
		} else {
			budget = 0;
		}
	}
	if (ndiff) {
		char pbuf[CFG_PATH_MAX + 64];
		ceph_warn_differs(run, want, &f[first_diff].layout,
				  dataset_path(&run->ds, first_diff, pbuf, sizeof(pbuf)), ndiff);
	}
	known = ceph_osd_map(run, f, nfiles, &nosds, why, sizeof(why)) == 0;
	if (!known)
		run_warn(run, "the OSDs holding the dataset are unknown: %s", why);
	eff = ceph_effective(run, want, f, nfiles, ndiff, known, why);
	if (nosds > 0) {
		json_object_set_new(eff, "cluster_osds", json_integer(nosds));
		if (f[0].layout.stripe_count > nosds)
			run_warn(run,
				 "stripe_count %" PRId64
				 " is more than the %d OSDs of the cluster: "
				 "objects of one stripe share OSDs",
				 f[0].layout.stripe_count, nosds);
	}
	json_object_set_new(run->info_storage, "stripe_effective", eff);
out_free:
	for (uint32_t i = 0; i < nfiles; i++)
		free(f[i].osd);
	free(f);
	return rc;
}
