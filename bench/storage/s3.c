/* S3 back-end: the dataset, checkpoints and IOR files as objects of an S3 bucket (AWS, Ceph's
 * radosgw, MinIO), over libcurl with SigV4 (the requests: s3_http.c). A path is
 * "s3://bucket/key" ([dataset] data_dir = s3://bucket/prefix) or, with [storage.s3] bucket,
 * a key of that bucket.
 *
 * Reads are ranged GETs (a sample inside a shard) on one connection per thread, reused from
 * request to request; with queued reads ([storage] io_depth) a reader thread keeps that many
 * GETs in flight through libcurl's multi interface on up to [storage.s3] connections
 * connections. Opening an object sends nothing: the first GET finds a missing object (404).
 *
 * Writes go front to back (every format and workload writes so): the bytes are kept until
 * part_size of them are there, then each part goes up as a part of a multipart upload; close
 * sends what is left as one PUT (small objects) or the last part and completes the upload.
 * An object appears under its key whole or not at all: a failure, or a run that failed
 * meanwhile, aborts the upload instead of completing it. sync has nothing to flush (S3 has
 * no durable state short of a completed object) and is a no-op.
 *
 * One object written by every rank (created with STORAGE_O_SHARED by every rank of run->comm:
 * IOR's shared file): one multipart upload whose part n holds bytes [(n-1) * part_size,
 * n * part_size). Creating it is collective: rank 0 starts the upload and broadcasts its id.
 * Each rank keeps the parts it writes (any order inside them) and sends each once full; closing
 * is collective too: the parts left go up (the object's short last one), every rank's part
 * numbers, sizes and ETags are gathered on rank 0, which completes the upload when they cover
 * the object without a gap, and aborts it when any rank failed.
 *
 * The namespace: HEAD (stat), DELETE (unlink), ListObjectsV2 with '/' as delimiter and its
 * pages of [storage.s3] list_page_size keys (list_dir), CopyObject + DELETE (rename). Folders do
 * not exist in S3: mkdir and rmdir succeed without a request, and a "folder" is there when a key
 * begins with it.
 */
#include "storage.h"

#include "build_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../agree.h"
#include "../run.h"

#include <mpi.h>

extern const struct storage_ops s3_storage;

#if FEEDBENCH_HAVE_S3
#include "s3_http.h"

/* One part of a multipart upload that went up (gathered on rank 0 for a shared object). */
struct s3_part {
	uint64_t len;
	uint32_t num;
	char etag[124];
};

/* A part of a shared object this rank is filling: its bytes [0, hi), filled of them written. */
struct s3_open_part {
	uint32_t num;
	uint64_t filled, hi;
	char *buf;
};

struct sfile {
	struct sfile_base base;
	struct run *run;
	char bucket[64];
	const char *key; /* in base.path */
	uint64_t size;	 /* from a HEAD or a Content-Range; have_size */
	bool have_size;
	/* writing */
	char *wbuf;
	size_t wlen;
	uint64_t wend;	      /* bytes written so far: the next write's offset */
	char upload[512];     /* multipart upload id, "" before the first part */
	struct s3_part *part; /* the parts sent, in the order sent */
	unsigned parts, etcap;
	int werr;
	/* an object every rank writes (STORAGE_O_SHARED): the parts being filled */
	bool shared;
	struct s3_open_part *open;
	unsigned nopen;
};

static const struct s3_conf *s3_conf_of(const struct run *run)
{
	return run->storage_priv;
}

static int s3_run_setup(struct run *run)
{
	struct s3_conf *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	if (s3_global_init() < 0) {
		free(c);
		return run_fail(run, -EIO, "libcurl cannot start (curl_global_init)");
	}
	rc = s3_conf_load(c, run);
	if (rc < 0) {
		free(c);
		return rc;
	}
	run->storage_priv = c;
	return 0;
}

static void s3_run_teardown(struct run *run)
{
	(void)run;
	s3_thread_release(); /* the main thread's connection */
}

static void s3_thread_teardown(struct io *io)
{
	(void)io;
	s3_thread_release();
}

/* A request on bucket/key of path; -EINVAL (recorded) when the path names no bucket. */
static int s3_req_for(struct run *run, const char *path, struct s3_req *r, char *bucket,
		      size_t blen)
{
	const struct s3_conf *c = s3_conf_of(run);

	memset(r, 0, sizeof(*r));
	if (s3_split(c, path, bucket, blen, &r->key) < 0)
		return run_fail(run, -EINVAL,
				"'%s' names no S3 bucket: use s3://bucket/key, or set "
				"[storage.s3] bucket",
				path);
	r->bucket = bucket;
	return 0;
}

static int s3_open(struct sfile **out, const char *path, int flags, struct run *run)
{
	struct sfile *f = calloc(1, sizeof(*f));
	struct s3_req r;
	int rc;

	if (!f)
		return -ENOMEM;
	f->base.ops = &s3_storage;
	f->base.flags = flags;
	f->run = run;
	snprintf(f->base.path, sizeof(f->base.path), "%s", path);
	rc = s3_req_for(run, f->base.path, &r, f->bucket, sizeof(f->bucket));
	if (rc < 0) {
		free(f);
		return rc;
	}
	f->key = r.key;
	*out = f;
	return 0;
}

/* What a ranged GET of len bytes at off answered, as pread returns it: the bytes, 0 past the
 * end of the object (416), or a failure recorded naming the object, status and rank. rc is
 * s3_perform's (or the multi interface's) code, with 416 and 200 left unrecorded. */
static ssize_t s3_get_result(struct sfile *f, struct s3_req *r, uint64_t off, int rc)
{
	const struct s3_conf *c = s3_conf_of(f->run);

	if (r->cc == CURLE_WRITE_ERROR && r->overflow && r->status == 200 && off == 0)
		rc = 0; /* the whole object came: its first len bytes are the range */
	if (rc == -ERANGE && r->status == 416)
		return 0; /* at or past the end of the object */
	if (r->status == 200 && off > 0) {
		r->overflow = true; /* the server ignored the range */
		return s3_req_fail(f->run, c, r, -EPROTO);
	}
	if (rc < 0)
		return f->run->err.code ? rc : s3_req_fail(f->run, c, r, rc);
	if (r->total) {
		f->size = r->total;
		f->have_size = true;
	}
	return (ssize_t)r->len;
}

/* The GET of len bytes at off into buf, set up in r (range: its text's room). */
static void s3_get_req(struct sfile *f, struct s3_req *r, char *range, size_t rlen, void *buf,
		       size_t len, uint64_t off)
{
	memset(r, 0, sizeof(*r));
	r->method = "GET";
	r->bucket = f->bucket;
	r->key = f->key;
	snprintf(range, rlen, "%llu-%llu", (unsigned long long)off,
		 (unsigned long long)(off + len - 1));
	r->range = range;
	r->buf = buf;
	r->cap = len;
}

static _Thread_local uint64_t s3_pread_ttfb; /* ns: this thread's last GET (s3_pread_ttfb_ns) */

static ssize_t s3_pread(struct sfile *f, void *buf, size_t len, uint64_t off)
{
	static const long quiet[] = {416, 200, 0};
	struct s3_req r;
	char range[64];
	ssize_t n;

	s3_pread_ttfb = 0;
	if (len == 0 || (f->have_size && off >= f->size))
		return 0;
	s3_get_req(f, &r, range, sizeof(range), buf, len, off);
	n = s3_get_result(f, &r, off, s3_perform(f->run, s3_conf_of(f->run), &r, quiet));
	if (n > 0 && r.ttfb_us > 0)
		s3_pread_ttfb = (uint64_t)r.ttfb_us * 1000;
	return n;
}

static uint64_t s3_pread_ttfb_ns(void)
{
	return s3_pread_ttfb;
}

/* HEAD of bucket/key: 0 with the size, -ENOENT (not recorded) when there is none. */
static int s3_head(struct run *run, const char *bucket, const char *key, uint64_t *size)
{
	static const long quiet[] = {404, 0};
	struct s3_req r = {.method = "HEAD", .bucket = bucket, .key = key};
	int rc = s3_perform(run, s3_conf_of(run), &r, quiet);

	if (rc == 0)
		*size = r.clen;
	return rc;
}

static int s3_size(struct sfile *f, uint64_t *size)
{
	int rc;

	if (f->base.flags & STORAGE_O_WRITE) {
		*size = f->wend;
		return 0;
	}
	if (!f->have_size) {
		rc = s3_head(f->run, f->bucket, f->key, &f->size);
		if (rc < 0)
			return rc == -ENOENT ? run_fail(f->run, rc,
							"s3 HEAD of '%s/%s' failed on rank %d: "
							"HTTP 404 (no such object)",
							f->bucket, f->key, s3_conf_of(f->run)->rank)
					     : rc;
		f->have_size = true;
	}
	*size = f->size;
	return 0;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* The id of a new multipart upload of f's key. */
static int s3_mpu_start(struct sfile *f)
{
	struct s3_req r = {.method = "POST", .bucket = f->bucket, .key = f->key};
	const char *from;
	int rc;

	r.query = "uploads=";
	r.grow = true;
	rc = s3_perform(f->run, s3_conf_of(f->run), &r, NULL);
	from = r.buf ? r.buf : "";
	if (rc == 0 && !s3_xml_next(from, "UploadId", &from, f->upload, sizeof(f->upload)))
		rc = run_fail(f->run, -EPROTO,
			      "s3 POST ?uploads of '%s/%s' on rank %d: no UploadId in the answer",
			      f->bucket, f->key, f->run->rank);
	free(r.buf);
	return rc;
}

/* Uploads len bytes of buf as part num of f's upload and keeps its ETag. */
static int s3_mpu_put(struct sfile *f, uint32_t num, const void *buf, uint64_t len)
{
	struct s3_req r = {.method = "PUT", .bucket = f->bucket, .key = f->key};
	char q[1200], id[1024];
	int rc;

	if (f->parts == f->etcap) {
		unsigned cap = f->etcap ? f->etcap * 2 : 16;
		void *n = realloc(f->part, cap * sizeof(*f->part));
		if (!n)
			return run_fail(f->run, -ENOMEM,
					"out of memory for multipart upload parts");
		f->part = n;
		f->etcap = cap;
	}
	s3_encode(f->upload, true, id, sizeof(id));
	snprintf(q, sizeof(q), "partNumber=%u&uploadId=%s", (unsigned)num, id);
	r.query = q;
	r.body = buf;
	r.blen = (size_t)len;
	rc = s3_perform(f->run, s3_conf_of(f->run), &r, NULL);
	if (rc < 0)
		return rc;
	f->part[f->parts++] = (struct s3_part){.len = len, .num = num};
	snprintf(f->part[f->parts - 1].etag, sizeof(f->part[0].etag), "%s", r.etag);
	return 0;
}

/* Uploads wbuf as the next part (starting the upload first). */
static int s3_mpu_part(struct sfile *f)
{
	int rc;

	if (!f->upload[0] && (rc = s3_mpu_start(f)) < 0)
		return rc;
	if ((rc = s3_mpu_put(f, f->parts + 1, f->wbuf, f->wlen)) < 0)
		return rc;
	f->wlen = 0;
	return 0;
}

/* CompleteMultipartUpload with the n parts of part (in increasing part numbers); an <Error>
 * in a 200 answer is a failure. */
static int s3_mpu_complete(struct sfile *f, const struct s3_part *part, unsigned n)
{
	struct s3_req r = {.method = "POST", .bucket = f->bucket, .key = f->key};
	size_t cap = 128 + (size_t)n * 200, at;
	char *xml = malloc(cap), q[1100], id[1024];
	int rc;

	if (!xml)
		return run_fail(f->run, -ENOMEM, "out of memory completing an upload");
	at = (size_t)snprintf(xml, cap, "<CompleteMultipartUpload>");
	for (unsigned i = 0; i < n; i++)
		at += (size_t)snprintf(xml + at, cap - at,
				       "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
				       (unsigned)part[i].num, part[i].etag);
	at += (size_t)snprintf(xml + at, cap - at, "</CompleteMultipartUpload>");
	s3_encode(f->upload, true, id, sizeof(id));
	snprintf(q, sizeof(q), "uploadId=%s", id);
	r.query = q;
	r.body = xml;
	r.blen = at;
	r.grow = true;
	rc = s3_perform(f->run, s3_conf_of(f->run), &r, NULL);
	if (rc == 0 && r.buf && strstr(r.buf, "<Error>")) {
		const char *from = r.buf;
		s3_xml_next(r.buf, "Code", &from, r.code, sizeof(r.code));
		rc = s3_req_fail(f->run, s3_conf_of(f->run), &r, -EIO);
	}
	free(r.buf);
	free(xml);
	return rc;
}

/* AbortMultipartUpload: the parts go, no object appears. Best effort (the failure that led
 * here is the one reported). */
static void s3_mpu_abort(struct sfile *f)
{
	struct s3_req r = {.method = "DELETE", .bucket = f->bucket, .key = f->key};
	char q[1100], id[1024];
	CURL *h = s3_thread_handle();

	if (!f->upload[0])
		return;
	s3_encode(f->upload, true, id, sizeof(id));
	snprintf(q, sizeof(q), "uploadId=%s", id);
	r.query = q;
	/* performed without recording: the run's first failure stays the one it reports */
	if (h && s3_req_setup(h, s3_conf_of(f->run), &r) == 0) {
		r.cc = curl_easy_perform(h);
		s3_req_done(h, &r);
	}
	f->upload[0] = '\0';
}

/* ---- one object written by every rank (STORAGE_O_SHARED) --------------------------------- */

/* Creates an object every rank of run->comm writes: rank 0 starts the multipart upload and
 * broadcasts its id; a failure on any rank fails the create on every rank (the upload
 * aborted), so that all of them, or none, reach the collective close. */
static int s3_create(struct sfile **out, const char *path, int flags, struct run *run)
{
	struct sfile *f = NULL;
	int rc, all;

	if (!(flags & STORAGE_O_SHARED))
		return s3_open(out, path, flags, run);
	rc = s3_open(&f, path, flags, run);
	if (rc == 0 && run->rank == 0)
		rc = s3_mpu_start(f);
	char id[sizeof(f->upload)] = "";
	if (rc == 0 && run->rank == 0)
		snprintf(id, sizeof(id), "%s", f->upload);
	MPI_Bcast(id, (int)sizeof(id), MPI_CHAR, 0, run->comm);
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, run->comm);
	if (all < 0 || !id[0]) {
		if (f && run->rank == 0)
			s3_mpu_abort(f);
		free(f);
		return rc < 0 ? rc
			      : run_fail(run, -FB_EPEER,
					 "another rank could not start the upload of '%s'", path);
	}
	snprintf(f->upload, sizeof(f->upload), "%s", id);
	f->shared = true;
	*out = f;
	return 0;
}

/* The part of a shared object that holds part number num, opened when it is not yet. */
static struct s3_open_part *s3_part_of(struct sfile *f, uint32_t num, uint64_t size)
{
	for (unsigned i = 0; i < f->nopen; i++)
		if (f->open[i].num == num)
			return &f->open[i];
	void *n = realloc(f->open, (f->nopen + 1) * sizeof(*f->open));
	if (!n)
		return NULL;
	f->open = n;
	f->open[f->nopen] = (struct s3_open_part){.num = num, .buf = malloc(size)};
	return f->open[f->nopen].buf ? &f->open[f->nopen++] : NULL;
}

/* Sends open part i and forgets it. */
static int s3_part_send(struct sfile *f, unsigned i)
{
	struct s3_open_part p = f->open[i];
	int rc;

	if (p.filled != p.hi)
		return run_fail(f->run, -EIO,
				"'%s': part %u of the shared object has %llu of its first %llu "
				"bytes written: the object would have a hole",
				f->base.path, (unsigned)p.num, (unsigned long long)p.filled,
				(unsigned long long)p.hi);
	rc = s3_mpu_put(f, p.num, p.buf, p.hi);
	free(p.buf);
	f->open[i] = f->open[--f->nopen];
	return rc;
}

/* A write into a shared object: into the parts its bytes fall in; a part goes up once
 * part_size of its bytes were written. */
static ssize_t s3_shared_write(struct sfile *f, const char *buf, size_t len, uint64_t off)
{
	const uint64_t ps = s3_conf_of(f->run)->part_size;
	size_t done = 0;

	while (done < len) {
		uint64_t at = (off + done) % ps, n = ps - at;
		uint64_t num = (off + done) / ps + 1;
		struct s3_open_part *p;
		if (num > 10000)
			return f->werr =
				   run_fail(f->run, -EFBIG,
					    "'%s': a write at offset %llu needs part %llu; S3 "
					    "has at most 10000 parts of part_size bytes",
					    f->base.path, (unsigned long long)(off + done),
					    (unsigned long long)num);
		if (!(p = s3_part_of(f, (uint32_t)num, ps)))
			return f->werr =
				   run_fail(f->run, -ENOMEM, "out of memory for a %llu-byte part",
					    (unsigned long long)ps);
		if (n > len - done)
			n = len - done;
		memcpy(p->buf + at, buf + done, n);
		p->filled += n;
		if (at + n > p->hi)
			p->hi = at + n;
		done += n;
		if (p->filled == ps) {
			int rc = s3_part_send(f, (unsigned)(p - f->open));
			if (rc < 0)
				return f->werr = rc;
		}
	}
	f->wend = off + len > f->wend ? off + len : f->wend;
	return (ssize_t)len;
}

static int s3_part_cmp(const void *a, const void *b)
{
	const struct s3_part *x = a, *y = b;

	return x->num < y->num ? -1 : x->num > y->num;
}

/* Rank 0: whether the gathered parts (sorted) are 1..n without a gap, each part_size bytes
 * but the last; 0, or the failure recorded. */
static int s3_parts_whole(struct sfile *f, const struct s3_part *part, unsigned n)
{
	const uint64_t ps = s3_conf_of(f->run)->part_size;

	for (unsigned i = 0; i < n; i++)
		if (part[i].num != i + 1 || (i + 1 < n && part[i].len != ps))
			return run_fail(f->run, -EIO,
					"'%s': the ranks wrote %u parts, and part %u is %s: the "
					"object would have a hole, so its upload is aborted",
					f->base.path, n, i + 1,
					part[i].num != i + 1 ? "missing" : "short");
	return n ? 0 : run_fail(f->run, -EIO, "'%s': no rank wrote a byte of it", f->base.path);
}

/* Rank 0: completes the upload with every rank's parts, or aborts it after any failure (own:
 * rank 0's own outcome, failed: whether any rank failed). */
static int s3_shared_complete(struct sfile *f, int own, int failed, unsigned total,
			      struct s3_part *all)
{
	int rc = own < 0 ? own : failed ? -FB_EPEER : 0;

	if (rc == 0) {
		qsort(all, total, sizeof(*all), s3_part_cmp);
		rc = s3_parts_whole(f, all, total);
	}
	if (rc == 0)
		rc = s3_mpu_complete(f, all, total);
	if (rc < 0)
		s3_mpu_abort(f);
	if (rc == -FB_EPEER && own == 0)
		rc = run_fail(f->run, -FB_EPEER, "'%s': another rank failed: upload aborted",
			      f->base.path);
	return rc;
}

/* Closing a shared object (collective): the parts left go up, rank 0 gathers every rank's
 * parts and completes (or aborts) the upload; every rank returns its outcome. */
static int s3_shared_finish(struct sfile *f)
{
	struct run *run = f->run;
	int rc = f->werr, failed, *counts = NULL, *displs = NULL;
	struct s3_part *all = NULL;
	unsigned total = 0;

	if (rc == 0 && run->err.code)
		rc = -ECANCELED;
	while (rc == 0 && f->nopen)
		rc = s3_part_send(f, f->nopen - 1);
	int mine = rc < 0 ? 1 : 0, n = (int)f->parts * (int)sizeof(struct s3_part);
	/* the ranks still writing keep the watchdog quiet while this one waits */
	agree_allreduce(run, &mine, &failed, 1, MPI_INT, MPI_MAX);
	if (run->rank == 0) {
		counts = calloc((size_t)run->nranks, sizeof(int));
		displs = calloc((size_t)run->nranks, sizeof(int));
	}
	MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, run->comm);
	if (run->rank == 0 && counts && displs) {
		for (int r = 0; r < run->nranks; r++) {
			displs[r] = (int)(total * sizeof(struct s3_part));
			total += (unsigned)counts[r] / sizeof(struct s3_part);
		}
		all = malloc((total ? total : 1) * sizeof(*all));
	}
	MPI_Gatherv(f->part, n, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, run->comm);
	int out = rc;
	if (run->rank == 0)
		out = all ? s3_shared_complete(f, rc, failed, total, all)
			  : run_fail(run, -ENOMEM, "out of memory completing an upload");
	MPI_Bcast(&out, 1, MPI_INT, 0, run->comm);
	if (run->rank != 0 && rc == 0 && out < 0)
		rc = run_fail(run, -FB_EPEER, "'%s': the upload was not completed on rank 0",
			      f->base.path);
	free(all);
	free(counts);
	free(displs);
	return run->rank == 0 ? out : rc;
}

static ssize_t s3_pwrite(struct sfile *f, const void *buf, size_t len, uint64_t off)
{
	const struct s3_conf *c = s3_conf_of(f->run);
	size_t done = 0;

	if (!(f->base.flags & STORAGE_O_WRITE))
		return -EBADF;
	if (f->werr)
		return f->werr;
	if (f->shared)
		return s3_shared_write(f, buf, len, off);
	if (off != f->wend)
		return f->werr = run_fail(f->run, -ESPIPE,
					  "'%s': S3 objects are written front to back; a write at "
					  "offset %llu after %llu bytes cannot be sent",
					  f->base.path, (unsigned long long)off,
					  (unsigned long long)f->wend);
	if (!f->wbuf && !(f->wbuf = malloc(c->part_size)))
		return f->werr = run_fail(f->run, -ENOMEM, "out of memory for a %llu-byte part",
					  (unsigned long long)c->part_size);
	while (done < len) {
		size_t n = c->part_size - f->wlen;
		if (n > len - done)
			n = len - done;
		memcpy(f->wbuf + f->wlen, (const char *)buf + done, n);
		f->wlen += n;
		done += n;
		if (f->wlen == c->part_size && done < len) {
			int rc = s3_mpu_part(f);
			if (rc < 0)
				return f->werr = rc;
		}
	}
	f->wend += len;
	return (ssize_t)len;
}

static int s3_sync(struct sfile *f)
{
	return f->werr;
}

/* The end of a write: one PUT, or the last part and the completion; an abort after any
 * failure of this object or of the run. */
static int s3_finish_write(struct sfile *f)
{
	struct s3_req r = {.method = "PUT", .bucket = f->bucket, .key = f->key};
	int rc = f->werr;

	if (rc == 0 && f->run->err.code)
		rc = -ECANCELED; /* the run failed: no object from it */
	if (rc == 0 && !f->upload[0]) {
		r.body = f->wbuf;
		r.blen = f->wlen;
		return s3_perform(f->run, s3_conf_of(f->run), &r, NULL);
	}
	if (rc == 0 && f->wlen)
		rc = s3_mpu_part(f);
	if (rc == 0)
		rc = s3_mpu_complete(f, f->part, f->parts);
	if (rc < 0)
		s3_mpu_abort(f);
	return rc;
}

static int s3_close(struct sfile *f)
{
	int rc = 0;

	if (f->shared)
		rc = s3_shared_finish(f);
	else if (f->base.flags & STORAGE_O_WRITE)
		rc = s3_finish_write(f);
	free(f->wbuf);
	free(f->part);
	for (unsigned i = 0; i < f->nopen; i++)
		free(f->open[i].buf);
	free(f->open);
	free(f);
	return rc;
}

/* ---- namespace --------------------------------------------------------------------------- */

static int s3_mkdir(const char *path, unsigned mode, struct run *run)
{
	(void)path;
	(void)mode;
	(void)run;
	return 0; /* no folders in S3: a key's prefix is its folder */
}

static int s3_rmdir(const char *path, struct run *run)
{
	(void)path;
	(void)run;
	return 0;
}

static int s3_sync_dir(const char *path, struct run *run)
{
	(void)path;
	(void)run;
	return 0;
}

static int s3_unlink(const char *path, struct run *run)
{
	struct s3_req r;
	char bucket[64];
	int rc = s3_req_for(run, path, &r, bucket, sizeof(bucket));

	if (rc < 0)
		return rc;
	r.method = "DELETE";
	return s3_perform(run, s3_conf_of(run), &r, NULL);
}

/* One page of ListObjectsV2 under prefix (delimiter '/'): fn(name) for each key and common
 * prefix, the prefix taken off. token: in, the page to ask for ("" first); out, the next. */
static int s3_list_page(struct run *run, struct s3_req *r, const char *prefix, char *token,
			size_t tlen, storage_dir_fn fn, void *arg)
{
	char q[3000], ep[2100], et[1100], item[1100];
	const char *from;
	size_t plen = strlen(prefix);
	int rc;

	s3_encode(prefix, true, ep, sizeof(ep));
	s3_encode(token, true, et, sizeof(et));
	snprintf(q, sizeof(q), "%s%s%sdelimiter=%%2F&list-type=2&max-keys=%d&prefix=%s",
		 token[0] ? "continuation-token=" : "", token[0] ? et : "", token[0] ? "&" : "",
		 (int)run->cfg.s3.list_page_size, ep);
	r->method = "GET";
	r->key = "";
	r->query = q;
	r->grow = true;
	r->len = 0;
	if ((rc = s3_perform(run, s3_conf_of(run), r, NULL)) < 0)
		return rc;
	static const char *const tags[] = {"Key", "Prefix"};
	for (int t = 0; t < 2 && r->buf; t++) {
		from = t == 0 ? r->buf : strstr(r->buf, "<CommonPrefixes>");
		if (!from)
			break;
		while (s3_xml_next(r->buf, tags[t], &from, item, sizeof(item))) {
			size_t n = strlen(item);
			if (n <= plen || strncmp(item, prefix, plen) != 0)
				continue;
			if (item[n - 1] == '/')
				item[n - 1] = '\0';
			if ((rc = fn(item + plen, arg)) != 0)
				return rc;
		}
	}
	token[0] = '\0';
	from = r->buf ? r->buf : "";
	if (r->buf && strstr(r->buf, "<IsTruncated>true</IsTruncated>"))
		s3_xml_next(r->buf, "NextContinuationToken", &from, token, tlen);
	return 0;
}

static int s3_list_dir(const char *path, storage_dir_fn fn, void *arg, struct run *run)
{
	struct s3_req r;
	char bucket[64], prefix[2048], token[1024] = "";
	int rc = s3_req_for(run, path, &r, bucket, sizeof(bucket));

	if (rc < 0)
		return rc;
	snprintf(prefix, sizeof(prefix), "%s%s", r.key, r.key[0] ? "/" : "");
	do {
		struct s3_req page = {.bucket = bucket};
		rc = s3_list_page(run, &page, prefix, token, sizeof(token), fn, arg);
		free(page.buf);
	} while (rc == 0 && token[0]);
	return rc;
}

static int s3_has_child(const char *name, void *arg)
{
	(void)name;
	*(bool *)arg = true;
	return 1;
}

static int s3_stat(const char *path, struct storage_stat *st, struct run *run)
{
	struct s3_req r;
	char bucket[64];
	bool any = false;
	int rc = s3_req_for(run, path, &r, bucket, sizeof(bucket));

	if (rc < 0)
		return rc;
	if (r.key[0] && (rc = s3_head(run, bucket, r.key, &st->size)) == 0) {
		st->is_reg = true;
		st->mode = S_IFREG | 0644;
		return 0;
	}
	if (r.key[0] && rc != -ENOENT)
		return rc;
	/* a "folder": some key begins with path/ (the bucket itself always is one) */
	rc = r.key[0] ? s3_list_dir(path, s3_has_child, &any, run) : 1;
	if (rc < 0)
		return rc;
	if (!any && r.key[0])
		return -ENOENT;
	st->is_dir = true;
	st->mode = S_IFDIR | 0755;
	return 0;
}

/* Server-side copy, then DELETE of the source: S3 has no rename. */
static int s3_rename(const char *from, const char *to, struct run *run)
{
	struct s3_req src, dst;
	char sb[64], db[64], esrc[2200], hdr[2300];
	int rc;

	if ((rc = s3_req_for(run, from, &src, sb, sizeof(sb))) < 0 ||
	    (rc = s3_req_for(run, to, &dst, db, sizeof(db))) < 0)
		return rc;
	s3_encode(src.key, false, esrc, sizeof(esrc));
	snprintf(hdr, sizeof(hdr), "x-amz-copy-source: /%s/%s", sb, esrc);
	dst.method = "PUT";
	dst.extra_hdr = hdr;
	dst.grow = true;
	rc = s3_perform(run, s3_conf_of(run), &dst, NULL);
	if (rc == 0 && dst.buf && strstr(dst.buf, "<Error>"))
		rc = s3_req_fail(run, s3_conf_of(run), &dst, -EIO);
	free(dst.buf);
	if (rc < 0)
		return rc;
	src.method = "DELETE";
	return s3_perform(run, s3_conf_of(run), &src, NULL);
}

/* ---- queued reads: many GETs in flight per thread (libcurl's multi interface) ------------ */

struct s3_slot {
	struct s3_req r;
	char range[64];
	CURL *h;
	struct sfile *f;
	uint64_t off, tag;
	bool busy, sent;
};

struct io_queue {
	CURLM *m;
	struct run *run;
	unsigned depth, ndone;
	struct s3_slot *slots;
	struct io_completion *done;
};

static void s3_queue_close(struct io_queue *q)
{
	for (unsigned i = 0; q->slots && i < q->depth; i++) {
		if (q->slots[i].h) {
			if (q->slots[i].sent)
				curl_multi_remove_handle(q->m, q->slots[i].h);
			curl_slist_free_all(q->slots[i].r.hdrs);
			curl_easy_cleanup(q->slots[i].h);
		}
	}
	if (q->m)
		curl_multi_cleanup(q->m);
	free(q->slots);
	free(q->done);
	free(q);
}

static int s3_queue_open(struct io_queue **out, unsigned depth, struct run *run)
{
	struct io_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->run = run;
	q->depth = depth;
	q->m = curl_multi_init();
	q->slots = calloc(depth, sizeof(*q->slots));
	q->done = calloc(depth, sizeof(*q->done));
	for (unsigned i = 0; q->slots && i < depth; i++)
		if (!(q->slots[i].h = curl_easy_init()))
			break;
	if (!q->m || !q->slots || !q->done || !q->slots[depth - 1].h) {
		s3_queue_close(q);
		return -ENOMEM;
	}
	/* io_depth GETs share at most `connections` connections, reused from GET to GET */
	curl_multi_setopt(q->m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)s3_conf_of(run)->connections);
	*out = q;
	return 0;
}

static int s3_queue_read(struct io_queue *q, struct sfile *f, void *buf, size_t len, uint64_t off,
			 uint64_t tag)
{
	struct s3_slot *s = NULL;

	for (unsigned i = 0; i < q->depth && !s; i++)
		if (!q->slots[i].busy)
			s = &q->slots[i];
	if (!s)
		return -EBUSY;
	s->f = f;
	s->off = off;
	s->tag = tag;
	s->busy = true;
	s->sent = false;
	if (len == 0 || (f->have_size && off >= f->size)) {
		s->r.cap = 0; /* nothing to ask for: completes with 0 at the next reap */
		s->r.len = 0;
		return 0;
	}
	s3_get_req(f, &s->r, s->range, sizeof(s->range), buf, len, off);
	return 0;
}

static void s3_queue_complete(struct io_queue *q, struct s3_slot *s, int64_t res)
{
	q->done[q->ndone].tag = s->tag;
	q->done[q->ndone].res = res;
	/* the GET's own time to first byte (its last attempt), for the ttfb histogram */
	q->done[q->ndone].ttfb_ns = res > 0 && s->r.ttfb_us > 0 ? (uint64_t)s->r.ttfb_us * 1000 : 0;
	q->ndone++;
	s->busy = s->sent = false;
}

static int s3_queue_send(struct io_queue *q, struct s3_slot *s)
{
	int rc;

	if (!s->r.cap) {
		s3_queue_complete(q, s, 0);
		return 0;
	}
	if ((rc = s3_req_setup(s->h, s3_conf_of(q->run), &s->r)) < 0)
		return rc;
	s->r.attempts++;
	if (curl_multi_add_handle(q->m, s->h) != CURLM_OK)
		return -EIO;
	s->sent = true;
	return 0;
}

/* A GET that finished: retried (after its wait) when S3 asks for it, else completed. */
static int s3_queue_finished(struct io_queue *q, CURL *h, CURLcode cc)
{
	const struct s3_conf *c = s3_conf_of(q->run);
	struct s3_slot *s = NULL;
	double wait;
	int rc;

	for (unsigned i = 0; i < q->depth && !s; i++)
		if (q->slots[i].h == h && q->slots[i].sent)
			s = &q->slots[i];
	if (!s)
		return 0;
	curl_multi_remove_handle(q->m, h);
	s->r.cc = cc;
	s3_req_done(h, &s->r);
	if (s->r.attempts <= c->retries && s3_retryable(&s->r, s->r.attempts - 1, &wait)) {
		struct timespec ts = {.tv_sec = (time_t)wait,
				      .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)};
		nanosleep(&ts, NULL);
		return s3_queue_send(q, s);
	}
	/* 416 and 200 are s3_get_result's to interpret; it records every other failure */
	rc = s3_req_errno(&s->r);
	s3_queue_complete(q, s, s3_get_result(s->f, &s->r, s->off, rc));
	return 0;
}

static int s3_queue_reap(struct io_queue *q, struct io_completion *out, unsigned max, unsigned min)
{
	int running = 0, rc;
	CURLMsg *msg;

	for (unsigned i = 0; i < q->depth; i++)
		if (q->slots[i].busy && !q->slots[i].sent &&
		    (rc = s3_queue_send(q, &q->slots[i])) < 0)
			return rc;
	while (q->ndone < min) {
		int left;
		if (curl_multi_perform(q->m, &running) != CURLM_OK)
			return -EIO;
		while ((msg = curl_multi_info_read(q->m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE &&
			    (rc = s3_queue_finished(q, msg->easy_handle, msg->data.result)) < 0)
				return rc;
		if (q->ndone < min && curl_multi_poll(q->m, NULL, 0, 1000, NULL) != CURLM_OK)
			return -EIO;
	}
	unsigned n = q->ndone < max ? q->ndone : max;
	memcpy(out, q->done, n * sizeof(*out));
	memmove(q->done, q->done + n, (q->ndone - n) * sizeof(*q->done));
	q->ndone -= n;
	return (int)n;
}

const struct storage_ops s3_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "s3",
    .caps = STORAGE_CAP_SHARED | STORAGE_CAP_OBJECT,
    .open = s3_open,
    .create = s3_create,
    .pread = s3_pread,
    .pwrite = s3_pwrite,
    .sync = s3_sync,
    .close = s3_close,
    .size = s3_size,
    .mkdir = s3_mkdir,
    .unlink = s3_unlink,
    .stat = s3_stat,
    .rmdir = s3_rmdir,
    .list_dir = s3_list_dir,
    .sync_dir = s3_sync_dir,
    .rename = s3_rename,
    .run_setup = s3_run_setup,
    .run_teardown = s3_run_teardown,
    .thread_teardown = s3_thread_teardown,
    .queue_open = s3_queue_open,
    .queue_read = s3_queue_read,
    .queue_reap = s3_queue_reap,
    .pread_ttfb_ns = s3_pread_ttfb_ns,
    .queue_close = s3_queue_close,
};

#else

const struct storage_ops s3_storage = {
    .version = STORAGE_OPS_VERSION,
    .name = "s3",
    .caps = STORAGE_CAP_OBJECT,
    .not_built = "libcurl with SigV4 (7.75 or later, Debian libcurl4-openssl-dev) not found",
};

#endif
