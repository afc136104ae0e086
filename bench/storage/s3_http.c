/* One S3 request over libcurl (see s3_http.h). libcurl signs with SigV4 itself; what it needs
 * around that (each seen failing against radosgw as 403 SignatureDoesNotMatch or 411):
 * x-amz-content-sha256: UNSIGNED-PAYLOAD on every request, the query sorted by name with its
 * values percent-encoded, every byte of a key percent-encoded but '/', no "Expect:" header of
 * our own (signed, never sent) and the size of every PUT given (else chunked encoding).
 */
#include "build_config.h"

#if FEEDBENCH_HAVE_S3
#include "s3_http.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../config.h"
#include "../run.h"

static pthread_once_t s3_once = PTHREAD_ONCE_INIT;
static CURLcode s3_global_rc;
static pthread_key_t s3_key;

static void s3_handle_free(void *h)
{
	curl_easy_cleanup(h);
}

static void s3_global(void)
{
	s3_global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_key_create(&s3_key, s3_handle_free);
}

int s3_global_init(void)
{
	pthread_once(&s3_once, s3_global);
	return s3_global_rc == CURLE_OK ? 0 : -EIO;
}

CURL *s3_thread_handle(void)
{
	CURL *h;

	if (s3_global_init() < 0)
		return NULL;
	h = pthread_getspecific(s3_key);
	if (!h && (h = curl_easy_init()) != NULL)
		pthread_setspecific(s3_key, h);
	return h;
}

void s3_thread_release(void)
{
	CURL *h;

	if (s3_global_init() < 0)
		return;
	h = pthread_getspecific(s3_key);
	pthread_setspecific(s3_key, NULL);
	if (h)
		curl_easy_cleanup(h);
}

/* ---- credentials ----------------------------------------------------------------------- */

/* The value of key in section [sect] of an INI file (the AWS shared files), into out. */
static bool s3_ini_get(const char *file, const char *sect, const char *key, char *out, size_t len)
{
	FILE *fp = fopen(file, "r");
	char line[2400], cur[128] = "";
	bool found = false;

	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *s = line, *e;
		while (isspace((unsigned char)*s))
			s++;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (*s == '[' && e > s && e[-1] == ']') {
			e[-1] = '\0';
			snprintf(cur, sizeof(cur), "%s", s + 1);
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq || strcmp(cur, sect) != 0)
			continue;
		char *k = s, *ke = eq, *v = eq + 1;
		while (ke > k && isspace((unsigned char)ke[-1]))
			ke--;
		while (isspace((unsigned char)*v))
			v++;
		if ((size_t)(ke - k) == strlen(key) && strncmp(k, key, (size_t)(ke - k)) == 0) {
			snprintf(out, len, "%s", v);
			found = true;
		}
	}
	fclose(fp);
	return found;
}

static void s3_home_file(const char *env, const char *name, char *out, size_t len)
{
	const char *set = getenv(env), *home = getenv("HOME");

	if (set && set[0])
		snprintf(out, len, "%s", set);
	else
		snprintf(out, len, "%s/.aws/%s", home ? home : "", name);
}

/* Keys from the environment, else from the shared credentials file's [profile]. */
static int s3_credentials(struct s3_conf *c, const char *profile, struct run *run)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *tok = getenv("AWS_SESSION_TOKEN");
	char file[1024], a[128] = "", s[128] = "", t[2048] = "";

	if (ak && ak[0] && sk && sk[0]) {
		snprintf(a, sizeof(a), "%s", ak);
		snprintf(s, sizeof(s), "%s", sk);
		if (tok)
			snprintf(t, sizeof(t), "%s", tok);
	} else {
		s3_home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials", file, sizeof(file));
		if (!s3_ini_get(file, profile, "aws_access_key_id", a, sizeof(a)) ||
		    !s3_ini_get(file, profile, "aws_secret_access_key", s, sizeof(s)))
			return run_fail(run, -FB_ECONFIG,
					"no S3 credentials: set AWS_ACCESS_KEY_ID and "
					"AWS_SECRET_ACCESS_KEY, or profile '%s' in '%s'",
					profile, file);
		s3_ini_get(file, profile, "aws_session_token", t, sizeof(t));
	}
	if (strchr(a, ':'))
		return run_fail(run, -FB_ECONFIG, "the S3 access key id has a ':' in it");
	snprintf(c->userpwd, sizeof(c->userpwd), "%s:%s", a, s);
	if (t[0])
		snprintf(c->token_hdr, sizeof(c->token_hdr), "x-amz-security-token: %s", t);
	return 0;
}

/* The region: the key, the environment, the profile's in the shared config file, us-east-1. */
static void s3_region(struct s3_conf *c, const struct config *cfg, const char *profile)
{
	const char *env = getenv("AWS_REGION");
	char file[1024], sect[96];

	if (!env || !env[0])
		env = getenv("AWS_DEFAULT_REGION");
	if (cfg->s3.region[0]) {
		snprintf(c->region, sizeof(c->region), "%s", cfg->s3.region);
		return;
	}
	if (env && env[0]) {
		snprintf(c->region, sizeof(c->region), "%s", env);
		return;
	}
	s3_home_file("AWS_CONFIG_FILE", "config", file, sizeof(file));
	if (strcmp(profile, "default") == 0)
		snprintf(sect, sizeof(sect), "default");
	else
		snprintf(sect, sizeof(sect), "profile %s", profile);
	if (!s3_ini_get(file, sect, "region", c->region, sizeof(c->region)))
		snprintf(c->region, sizeof(c->region), "us-east-1");
}

int s3_conf_load(struct s3_conf *c, struct run *run)
{
	const struct config *cfg = &run->cfg;
	const char *profile = cfg->s3.profile[0] ? cfg->s3.profile : getenv("AWS_PROFILE");
	size_t n;

	memset(c, 0, sizeof(*c));
	if (!profile || !profile[0])
		profile = "default";
	s3_region(c, cfg, profile);
	if (cfg->s3.endpoint[0])
		snprintf(c->endpoint, sizeof(c->endpoint), "%s", cfg->s3.endpoint);
	else
		snprintf(c->endpoint, sizeof(c->endpoint), "https://s3.%s.amazonaws.com",
			 c->region);
	n = strlen(c->endpoint);
	while (n > 0 && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	if (strncmp(c->endpoint, "http://", 7) != 0 && strncmp(c->endpoint, "https://", 8) != 0)
		return run_fail(run, -FB_ECONFIG,
				"[storage.s3] endpoint '%s' is not an http:// or https:// URL",
				c->endpoint);
	snprintf(c->bucket, sizeof(c->bucket), "%s", cfg->s3.bucket);
	c->vhost = cfg->s3.addressing == S3_ADDR_VIRTUAL;
	c->verify_tls = cfg->s3.verify_tls;
	c->timeout_ms = (long)(cfg->s3.request_timeout * 1000.0);
	c->retries = (int)cfg->s3.retries;
	c->part_size = cfg->s3.part_size;
	c->connections = (int)cfg->s3.connections;
	c->rank = run->rank;
	snprintf(c->sigv4, sizeof(c->sigv4), "aws:amz:%s:s3", c->region);
	return s3_credentials(c, profile, run);
}

int s3_split(const struct s3_conf *c, const char *path, char *bucket, size_t blen, const char **key)
{
	if (strncmp(path, "s3://", 5) == 0) {
		const char *b = path + 5, *slash = strchr(b, '/');
		size_t n = slash ? (size_t)(slash - b) : strlen(b);
		if (n == 0 || n >= blen)
			return -EINVAL;
		memcpy(bucket, b, n);
		bucket[n] = '\0';
		*key = slash ? slash + 1 : b + n;
	} else {
		if (!c->bucket[0])
			return -EINVAL;
		snprintf(bucket, blen, "%s", c->bucket);
		while (path[0] == '/' || (path[0] == '.' && path[1] == '/'))
			path++;
		*key = path;
	}
	while (**key == '/')
		(*key)++;
	return 0;
}

/* ---- one request ----------------------------------------------------------------------- */

void s3_encode(const char *s, bool slash, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char ch = (unsigned char)*s;
		if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' ||
		    (ch == '/' && !slash)) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	if (len)
		out[o < len ? o : len - 1] = '\0';
}

static size_t s3_on_body(char *data, size_t size, size_t n, void *arg)
{
	struct s3_req *r = arg;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 300) { /* an error's XML: kept apart from the object's bytes */
		size_t fit = sizeof(r->ebody) - 1 - r->elen;
		fit = len < fit ? len : fit;
		memcpy(r->ebody + r->elen, data, fit);
		r->elen += fit;
		r->ebody[r->elen] = '\0';
		return len;
	}
	if (r->grow && r->len + len + 1 > r->cap) {
		size_t cap = (r->len + len + 1) * 2;
		char *nb = realloc(r->buf, cap);
		if (!nb)
			return 0;
		r->buf = nb;
		r->cap = cap;
	}
	if (r->len + len > r->cap) {
		/* more than asked for: keep what fits, stop the transfer */
		size_t fit = r->cap - r->len;
		memcpy(r->buf + r->len, data, fit);
		r->len += fit;
		r->overflow = true;
		return 0;
	}
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	if (r->grow)
		r->buf[r->len] = '\0';
	return len;
}

static size_t s3_on_send(char *out, size_t size, size_t n, void *arg)
{
	struct s3_req *r = arg;
	size_t len = size * n, left = r->blen - r->sent;

	if (len > left)
		len = left;
	memcpy(out, (const char *)r->body + r->sent, len);
	r->sent += len;
	return len;
}

static bool s3_header_is(const char *h, size_t n, const char *name, const char **val)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(h, name, k) != 0 || h[k] != ':')
		return false;
	*val = h + k + 1;
	while (**val == ' ')
		(*val)++;
	return true;
}

static size_t s3_on_header(char *h, size_t size, size_t n, void *arg)
{
	struct s3_req *r = arg;
	size_t len = size * n;
	char line[512];
	const char *v;

	if (len >= sizeof(line))
		return len;
	memcpy(line, h, len);
	line[len] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) { /* a new answer (after a redirect or 100) */
		r->have_clen = false;
		r->etag[0] = '\0';
		r->retry_after = 0;
	} else if (s3_header_is(line, len, "content-length", &v)) {
		r->clen = strtoull(v, NULL, 10);
		r->have_clen = true;
	} else if (s3_header_is(line, len, "etag", &v)) {
		snprintf(r->etag, sizeof(r->etag), "%s", v);
	} else if (s3_header_is(line, len, "retry-after", &v)) {
		r->retry_after = strtod(v, NULL);
	} else if (s3_header_is(line, len, "content-range", &v)) {
		const char *slash = strchr(v, '/');
		if (slash && slash[1] != '*')
			r->total = strtoull(slash + 1, NULL, 10);
	}
	return len;
}

static void s3_url(const struct s3_conf *c, const struct s3_req *r, char *url, size_t len)
{
	char ekey[3200];
	const char *q = r->query && r->query[0] ? r->query : NULL;

	s3_encode(r->key ? r->key : "", false, ekey, sizeof(ekey));
	if (c->vhost) {
		const char *host = strstr(c->endpoint, "://") + 3;
		snprintf(url, len, "%.*s%s.%s/%s%s%s", (int)(host - c->endpoint), c->endpoint,
			 r->bucket, host, ekey, q ? "?" : "", q ? q : "");
	} else {
		snprintf(url, len, "%s/%s/%s%s%s", c->endpoint, r->bucket, ekey, q ? "?" : "",
			 q ? q : "");
	}
}

int s3_req_setup(CURL *h, const struct s3_conf *c, struct s3_req *r)
{
	char url[4096];
	const char *m = r->method;

	curl_easy_reset(h);
	s3_url(c, r, url, sizeof(url));
	r->len = 0;
	r->sent = 0;
	r->overflow = false;
	r->status = 0;
	r->have_clen = false;
	r->total = 0;
	r->etag[0] = r->code[0] = r->cerr[0] = '\0';
	r->retry_after = 0;
	r->elen = 0;
	r->ebody[0] = '\0';
	r->h = h;
	r->hdrs = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	if (c->token_hdr[0])
		r->hdrs = curl_slist_append(r->hdrs, c->token_hdr);
	if (strcmp(m, "POST") == 0)
		r->hdrs = curl_slist_append(r->hdrs, "Content-Type: application/xml");
	if (r->extra_hdr)
		r->hdrs = curl_slist_append(r->hdrs, r->extra_hdr);
	if (!r->hdrs)
		return -ENOMEM;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
	curl_easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->verify_tls ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->verify_tls ? 2L : 0L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
	/* no byte for timeout: the request fails (a server that stops answering) */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (c->timeout_ms + 999) / 1000);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->cerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, s3_on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, s3_on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(h, CURLOPT_PRIVATE, r);
	if (r->range)
		curl_easy_setopt(h, CURLOPT_RANGE, r->range);
	if (strcmp(m, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (strcmp(m, "PUT") == 0) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, s3_on_send);
		curl_easy_setopt(h, CURLOPT_READDATA, r);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->blen);
	} else if (strcmp(m, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->blen);
	} else if (strcmp(m, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
	}
	return 0;
}

void s3_req_done(CURL *h, struct s3_req *r)
{
	long status = 0;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	r->status = status;
	curl_easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &r->ttfb_us);
	curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &r->total_us);
	if (r->status >= 300) {
		const char *from = r->ebody;
		s3_xml_next(r->ebody, "Code", &from, r->code, sizeof(r->code));
	}
	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
}

int s3_req_errno(const struct s3_req *r)
{
	if (r->cc == CURLE_WRITE_ERROR && r->overflow)
		return r->status == 200 || r->status == 206 ? -EPROTO : -EIO;
	switch (r->cc) {
	case CURLE_OK:
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
	if (r->status >= 200 && r->status < 300)
		return 0;
	switch (r->status) {
	case 404:
		return -ENOENT;
	case 401:
	case 403:
		return -EACCES;
	case 416:
		return -ERANGE;
	default:
		return -EIO;
	}
}

bool s3_retryable(const struct s3_req *r, int attempt, double *wait_s)
{
	bool again = r->cc == CURLE_COULDNT_CONNECT || r->cc == CURLE_SEND_ERROR ||
		     r->cc == CURLE_RECV_ERROR || r->cc == CURLE_GOT_NOTHING;

	if (r->cc == CURLE_OK)
		again = r->status == 429 || r->status == 500 || r->status == 502 ||
			r->status == 503 || r->status == 504;
	/* exponential backoff from 50 ms, at most 5 s, or what the server asks (at most 30 s) */
	*wait_s = 0.05 * (double)(1u << (attempt < 7 ? attempt : 7));
	if (*wait_s > 5)
		*wait_s = 5;
	if (r->retry_after > 0)
		*wait_s = r->retry_after < 30 ? r->retry_after : 30;
	return again;
}

int s3_req_fail(struct run *run, const struct s3_conf *c, const struct s3_req *r, int rc)
{
	char what[160] = "", range[64] = "";

	if (r->range)
		snprintf(range, sizeof(range), " (bytes %s)", r->range);
	if (r->cc != CURLE_OK && !(r->cc == CURLE_WRITE_ERROR && r->overflow))
		snprintf(what, sizeof(what), "%s",
			 r->cerr[0] ? r->cerr : curl_easy_strerror(r->cc));
	else if (r->overflow)
		snprintf(what, sizeof(what), "HTTP %ld with more bytes than asked for", r->status);
	else
		snprintf(what, sizeof(what), "HTTP %ld%s%s", r->status, r->code[0] ? " " : "",
			 r->code);
	return run_fail(run, rc, "s3 %s of '%s/%s'%s at %s failed on rank %d: %s%s%s", r->method,
			r->bucket, r->key ? r->key : "", range, c->endpoint, c->rank, what,
			r->attempts > 1 ? " (after retries)" : "",
			r->cc == CURLE_PEER_FAILED_VERIFICATION
			    ? " (the server's certificate is not trusted; [storage.s3] verify_tls "
			      "= false skips the check, for a test server only)"
			    : "");
}

static void s3_sleep(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	nanosleep(&ts, NULL);
}

int s3_perform(struct run *run, const struct s3_conf *c, struct s3_req *r, const long *quiet)
{
	CURL *h = s3_thread_handle();
	int rc;

	if (!h)
		return run_fail(run, -ENOMEM, "cannot start an S3 connection (libcurl)");
	for (r->attempts = 1;; r->attempts++) {
		double wait;
		if ((rc = s3_req_setup(h, c, r)) < 0)
			return run_fail(run, rc, "out of memory for an S3 request");
		r->cc = curl_easy_perform(h);
		s3_req_done(h, r);
		if (r->attempts > c->retries || !s3_retryable(r, r->attempts - 1, &wait))
			break;
		if (run->stop && *run->stop)
			break;
		s3_sleep(wait);
	}
	rc = s3_req_errno(r);
	for (const long *q = quiet; rc < 0 && (r->cc == CURLE_OK || r->overflow) && q && *q; q++)
		if (*q == r->status)
			return rc;
	return rc < 0 ? s3_req_fail(run, c, r, rc) : 0;
}

bool s3_xml_next(const char *xml, const char *tag, const char **from, char *out, size_t len)
{
	char open[80], close[80];
	const char *a, *b;
	size_t o = 0;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if (!(a = strstr(*from, open)))
		return false;
	a += strlen(open);
	if (!(b = strstr(a, close)))
		return false;
	static const struct {
		const char *ent;
		char ch;
	} ents[] = {
	    {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	while (a < b && o + 1 < len) {
		char ch = *a++;
		for (size_t i = 0; ch == '&' && i < sizeof(ents) / sizeof(ents[0]); i++)
			if (strncmp(a - 1, ents[i].ent, strlen(ents[i].ent)) == 0) {
				ch = ents[i].ch;
				a += strlen(ents[i].ent) - 1;
				break;
			}
		out[o++] = ch;
	}
	if (len)
		out[o] = '\0';
	(void)xml;
	*from = b + strlen(close);
	return true;
}

#endif
