/* TEMPORARY until report.c / plot.c / sweep.c / fsdetect.c / stripe.c land. */
#include <stdio.h>
#include "report.h"
#include "run.h"
#include "storage/fs.h"
#include <string.h>
__attribute__((weak)) int report_write_run(const char *d) { (void)d; return 0; }
__attribute__((weak)) int plot_render(const char *d, char *w, size_t l) { (void)d; snprintf(w, l, "not yet"); return 1; }
__attribute__((weak)) int plot_main(int c, char **v) { (void)c; (void)v; return 2; }
__attribute__((weak)) int sweep_main(int c, char **v, void *m) { (void)c; (void)v; (void)m; return 2; }
__attribute__((weak)) int fs_detect(const char *d, struct fs_info *fs) { (void)d; memset(fs, 0, sizeof(*fs)); strcpy(fs->type, "unknown"); return 0; }
__attribute__((weak)) int stripe_prepare(struct run *r) { (void)r; return 0; }
__attribute__((weak)) int stripe_create_file(struct run *r, const char *p) { (void)r; (void)p; return 0; }
__attribute__((weak)) int stripe_readback(struct run *r, const char *p) { (void)r; (void)p; return 0; }
