/* The S3 back-end's requests (bench/storage/s3.c): one S3 call over libcurl, signed with AWS
 * Signature Version 4 by libcurl itself (CURLOPT_AWS_SIGV4), with the retries S3 asks for
 * (429, 500, 502, 503, 504: backoff, or the server's Retry-After) and the errors turned into
 * one message naming the object, the HTTP status and the rank. Private to the s3 plug-in.
 */
#ifndef FEEDBENCH_S3_HTTP_H
#define FEEDBENCH_S3_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

struct run;

/* What every request of a run needs: the run's [storage.s3] keys resolved, with the
 * credentials. Lives in run->storage_priv (one allocation, freed by the runner); the secret
 * is kept here only, never printed. */
struct s3_conf {
	char endpoint[256]; /* scheme://host[:port], no trailing slash */
	char region[64];
	char bucket[64]; /* [storage.s3] bucket: for paths without s3:// */
	bool vhost;	 /* virtual-host addressing: scheme://bucket.host/key */
	bool verify_tls;
	long timeout_ms; /* connect, and the longest time without a byte */
	int retries;
	uint64_t part_size;
	int connections;
	char sigv4[96];	      /* "aws:amz:REGION:s3" */
	char userpwd[256];    /* access key id ":" secret */
	char token_hdr[2200]; /* "x-amz-security-token: ..." or "" */
	int rank;
};

/* One request. In: method, bucket, key (not encoded), query (encoded, sorted by name), range
 * ("a-b"), the body to send, and where the response body goes (buf of cap bytes; grow: a
 * malloc'ed buffer that grows, for XML answers). Out: status, headers, bytes received. */
struct s3_req {
	const char *method; /* GET PUT HEAD DELETE POST */
	const char *bucket;
	const char *key;
	const char *query;
	const char *range;
	const char *extra_hdr; /* one more header ("x-amz-copy-source: ...") or NULL */
	const void *body;
	size_t blen, sent;
	char *buf;
	size_t cap, len;
	bool grow;
	bool overflow; /* the server sent more than cap (a GET that ignored its range) */
	/* out */
	long status;
	uint64_t clen; /* Content-Length of the answer; have_clen when given */
	bool have_clen;
	uint64_t total; /* object size from Content-Range "bytes a-b/total" (0: none) */
	char etag[128];
	double retry_after;	      /* seconds, from Retry-After; 0: none */
	char code[64];		      /* <Code> of an error answer */
	curl_off_t ttfb_us, total_us; /* curl's start-transfer and total times of the request */
	int attempts;
	CURLcode cc;
	char cerr[CURL_ERROR_SIZE];
	char ebody[1024]; /* the start of an error answer's body (XML) */
	size_t elen;
	struct curl_slist *hdrs;
	CURL *h;
};

/* Once per process (the runner's run_setup): curl_global_init. */
int s3_global_init(void);
/* Resolves the run's keys and credentials into c (environment, then the AWS shared files).
 * 0, or a negative code with the reason recorded. */
int s3_conf_load(struct s3_conf *c, struct run *run);
/* Splits path into bucket and key: "s3://bucket/key" or, with [storage.s3] bucket, the path
 * itself less its leading "/" and "./". -EINVAL when neither names a bucket. */
int s3_split(const struct s3_conf *c, const char *path, char *bucket, size_t blen,
	     const char **key);
/* The calling thread's easy handle (kept for the thread's life: its connections are reused). */
CURL *s3_thread_handle(void);
void s3_thread_release(void);
/* Sets h up for req (URL, signature, headers, callbacks); s3_req_done frees what it set. */
int s3_req_setup(CURL *h, const struct s3_conf *c, struct s3_req *r);
void s3_req_done(CURL *h, struct s3_req *r);
/* Performs req on the thread's handle with retries; 0 when the answer is 2xx (or 206), else a
 * negative code. Records the failure in run (naming the object, the status and the rank)
 * unless the status is in quiet (a list of statuses ending with 0, e.g. 404 for a stat). */
int s3_perform(struct run *run, const struct s3_conf *c, struct s3_req *r, const long *quiet);
/* Whether a finished attempt should be tried again (and how long to wait first, in s). */
bool s3_retryable(const struct s3_req *r, int attempt, double *wait_s);
/* The negative errno of a finished request (0 when it succeeded). */
int s3_req_errno(const struct s3_req *r);
/* Records r's failure in run: "s3 GET of 'bucket/key' failed on rank R: HTTP 404 NoSuchKey". */
int s3_req_fail(struct run *run, const struct s3_conf *c, const struct s3_req *r, int rc);
/* The text between <tag> and </tag> after *from in xml, XML entities decoded, into out; the
 * position after it in *from. false when there is none. */
bool s3_xml_next(const char *xml, const char *tag, const char **from, char *out, size_t len);
/* Percent-encodes s (every byte but unreserved ones; '/' too when slash) into out. */
void s3_encode(const char *s, bool slash, char *out, size_t len);

#endif
