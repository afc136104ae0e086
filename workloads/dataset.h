/* The dataset: its files and samples, as generated (sizes derived from the config) or as
 * found on disk (bring your own data: sizes probed by the format).
 */
#ifndef FEEDBENCH_DATASET_H
#define FEEDBENCH_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "../bench/dsfile.h"

struct run;

/* Builds the file list of a generated dataset: names "<data_dir>/<format>_<index>_of_<n><ext>"
 * (or per-sample layout for formats that store one sample per file). */
int dataset_layout(struct run *run, struct dataset *ds);
/* Finds an existing dataset written by other tools and probes each file (generate = never,
 * verify = false). */
int dataset_discover(struct run *run, struct dataset *ds);
void dataset_free(struct run *run, struct dataset *ds);

#endif
