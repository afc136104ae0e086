/* The only place that knows which workloads exist. One row per workload: the row declares its
 * ops, puts them in the registry and its name into the choices of [workload] type. */
#include "workload.h"

#include <string.h>

#include "../bench/config.h"

#define FEEDBENCH_WORKLOADS(X) X(train) X(checkpoint) X(ior) X(metadata)

#define WORKLOAD_DECLARE(name) extern const struct workload_ops name##_workload;
FEEDBENCH_WORKLOADS(WORKLOAD_DECLARE)
#undef WORKLOAD_DECLARE

#define WORKLOAD_ENTRY(name) &name##_workload,
const struct workload_ops *const workload_registry[] = {FEEDBENCH_WORKLOADS(WORKLOAD_ENTRY) NULL};
#undef WORKLOAD_ENTRY

#define WORKLOAD_NAME(name) #name,
const char *const workload_choices[] = {FEEDBENCH_WORKLOADS(WORKLOAD_NAME) NULL};
#undef WORKLOAD_NAME

const struct workload_ops *workload_find(const char *name)
{
	for (size_t i = 0; workload_registry[i]; i++)
		if (strcmp(workload_registry[i]->name, name) == 0)
			return workload_registry[i];
	return NULL;
}

const struct workload_ops *workload_of(const struct config *cfg)
{
	size_t n = sizeof(workload_registry) / sizeof(workload_registry[0]) - 1;

	if (cfg->workload.type < 0 || (size_t)cfg->workload.type >= n)
		return NULL;
	return workload_registry[cfg->workload.type];
}
