/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static const char *const mlv_error_text[MLV_E__COUNT] = {
#define MLV_ERR_TEXT(name, text) [MLV_E_##name] = text,
	MLV_ERRORS(MLV_ERR_TEXT)
#undef MLV_ERR_TEXT
};

const char *mlv_strerror(enum mlv_err err)
{
	if ((unsigned)err >= MLV_E__COUNT)
		return "unknown error";
	return mlv_error_text[err];
}

enum mlv_err mlv_err_from_errno(int e)
{
	if (e < 0)
		e = -e;
	switch (e) {
	case 0:
		return MLV_OK;
	case EPERM:
	case EACCES:
		return MLV_E_PERM;
	case ENOENT:
		return MLV_E_NOT_FOUND;
	case EBUSY:
	case EEXIST:
		return MLV_E_BUSY;
	case ENOMEM:
		return MLV_E_NOMEM;
	case E2BIG:
	case ENOSPC:
		return MLV_E_LIMIT;
	case EINVAL:
		return MLV_E_INVAL;
	default:
		return MLV_E_IO;
	}
}

enum mlv_err mlv_err_msg(char *buf, size_t len, enum mlv_err err,
			 const char *fmt, ...)
{
	va_list ap;

	if (buf && len) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return err;
}
