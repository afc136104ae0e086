/* The registry of accelerator plug-ins, generated from the one list in registry.h
 * (FEEDBENCH_ACCELERATORS), as are the enum ACCEL_* and the choices of [train] accelerator: a
 * plug-in is added there, nowhere else. A plug-in the build left out is listed with the reason. */
#include "compute.h"
#include "registry.h"

#include <stddef.h>

#include "build_config.h"

/* The CPU emulation is always built. */
#define FEEDBENCH_HAVE_CPU 1
#define FEEDBENCH_CPU_WHY  ""

#define COMPUTE_DECLARE(name, NAME) extern const struct compute_ops name##_compute;
FEEDBENCH_ACCELERATORS(COMPUTE_DECLARE)
#undef COMPUTE_DECLARE

/* A plug-in that is not built is not referenced: the condition is folded at compile time. */
#define COMPUTE_ENTRY(name, NAME)                                                                  \
	{FEEDBENCH_HAVE_##NAME ? &name##_compute : NULL, #name,                                    \
	 FEEDBENCH_HAVE_##NAME ? NULL : FEEDBENCH_##NAME##_WHY},
const struct compute_entry compute_registry[] = {FEEDBENCH_ACCELERATORS(COMPUTE_ENTRY){0}};
#undef COMPUTE_ENTRY
