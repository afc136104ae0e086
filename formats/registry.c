/* The only place that knows which formats exist. One line per format. */
#include "format.h"

#include <string.h>

extern const struct format_ops raw_format;

const struct format_ops *const format_registry[] = {
	&raw_format,
	NULL,
};

const struct format_ops *format_find(const char *name)
{
	for (size_t i = 0; format_registry[i]; i++)
		if (strcmp(format_registry[i]->name, name) == 0)
			return format_registry[i];
	return NULL;
}
