/* The only place that knows which formats exist. One line per format. */
#include "format.h"

#include <string.h>

extern const struct format_ops raw_format;
extern const struct format_ops npy_format;
extern const struct format_ops npz_format;
extern const struct format_ops wds_format;
extern const struct format_ops hdf5_format;
extern const struct format_ops tfrecord_format;

const struct format_ops *const format_registry[] = {
    &raw_format, &npy_format, &npz_format, &wds_format, &hdf5_format, &tfrecord_format, NULL,
};

const struct format_ops *format_find(const char *name)
{
	for (size_t i = 0; format_registry[i]; i++)
		if (strcmp(format_registry[i]->name, name) == 0)
			return format_registry[i];
	return NULL;
}
