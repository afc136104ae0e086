/* The only place that knows which accelerator plug-ins exist and which were built. */
#include "compute.h"
#include "build_config.h"

extern const struct compute_ops cpu_compute;
#if FEEDBENCH_HAVE_CUDA
extern const struct compute_ops cuda_compute;
#endif

const struct compute_entry compute_registry[] = {
    {&cpu_compute, "cpu", NULL},
#if FEEDBENCH_HAVE_CUDA
    {&cuda_compute, "cuda", NULL},
#else
    {NULL, "cuda", FEEDBENCH_CUDA_WHY},
#endif
    {NULL, NULL, NULL},
};
