#include "errors.h"

#include <stdio.h>
#include <string.h>

static const struct {
	int exit;
	const char *text;
} fb_error_table[] = {
#define FB_X_TABLE(name, exit, text) [name - FB_EBASE] = {exit, text},
    FB_ERRORS(FB_X_TABLE)
#undef FB_X_TABLE
};

const char *fb_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err > FB_EBASE && err < FB_ELAST)
		return fb_error_table[err - FB_EBASE].text;
	return strerror(err);
}

int fb_exit_status(int err)
{
	if (err == 0)
		return 0;
	if (err < 0)
		err = -err;
	if (err > FB_EBASE && err < FB_ELAST)
		return fb_error_table[err - FB_EBASE].exit;
	return 1;
}

void fb_errbuf_init(struct fb_errbuf *e)
{
	pthread_mutex_init(&e->lock, NULL);
	e->code = 0;
	e->msg[0] = '\0';
}

int fb_vfail(struct fb_errbuf *e, int code, const char *fmt, va_list ap)
{
	if (code == 0)
		code = -FB_EINTERNAL;
	pthread_mutex_lock(&e->lock);
	if (e->code == 0) {
		e->code = code;
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	}
	pthread_mutex_unlock(&e->lock);
	return code;
}

int fb_fail(struct fb_errbuf *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	code = fb_vfail(e, code, fmt, ap);
	va_end(ap);
	return code;
}

void fb_errbuf_clear(struct fb_errbuf *e)
{
	pthread_mutex_lock(&e->lock);
	e->code = 0;
	e->msg[0] = '\0';
	pthread_mutex_unlock(&e->lock);
}
