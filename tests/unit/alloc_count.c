/* The allocation counters of alloc_count.h: wrappers that the linker puts in place of malloc,
 * calloc, realloc and free (--wrap), each calling the real function and counting usable bytes. */
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc_count.h"

int64_t alloc_live, alloc_peak;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static void *alloc_count(void *p)
{
	if (p) {
		alloc_live += (int64_t)malloc_usable_size(p);
		if (alloc_live > alloc_peak)
			alloc_peak = alloc_live;
	}
	return p;
}

void *__wrap_malloc(size_t n)
{
	return alloc_count(__real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n)
{
	return alloc_count(__real_calloc(k, n));
}

void *__wrap_realloc(void *p, size_t n)
{
	if (p)
		alloc_live -= (int64_t)malloc_usable_size(p);
	return alloc_count(__real_realloc(p, n));
}

void __wrap_free(void *p)
{
	if (p)
		alloc_live -= (int64_t)malloc_usable_size(p);
	__real_free(p);
}
