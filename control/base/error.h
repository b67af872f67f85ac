/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevd's one error enum. Every fallible function in maglevd returns
 * enum mlv_err (MLV_OK == 0), so callers can test `if (err)` and print
 * mlv_strerror(err). Defined once as an X-macro. */
#ifndef MLV_ERROR_H
#define MLV_ERROR_H

#include <stddef.h>

#define MLV_ERRORS(X)                                   \
	X(OK,        "success")                         \
	X(NOMEM,     "out of memory")                   \
	X(INVAL,     "invalid argument")                \
	X(IO,        "input/output error")              \
	X(CONFIG,    "invalid configuration")           \
	X(NOT_FOUND, "not found")                       \
	X(EXISTS,    "already exists")                  \
	X(RANGE,     "value out of range")              \
	X(LIMIT,     "limit exceeded")                  \
	X(DPDK,      "DPDK call failed")                \
	X(BUSY,      "resource busy")                   \
	X(PROTO,     "protocol error")                  \
	X(PERM,      "permission denied")

enum mlv_err {
#define MLV_ERR_ENUM(name, text) MLV_E_##name,
	MLV_ERRORS(MLV_ERR_ENUM)
#undef MLV_ERR_ENUM
	MLV_E__COUNT
};
#define MLV_OK MLV_E_OK

/* Human-readable text for err; never NULL (unknown values give
 * "unknown error"). Any thread; returns a static string. */
const char *mlv_strerror(enum mlv_err err);

/* The enum value for an errno (EPERM/EACCES -> PERM, ENOENT -> NOT_FOUND,
 * EBUSY/EEXIST -> BUSY, ENOMEM -> NOMEM, E2BIG/ENOSPC -> LIMIT, EINVAL ->
 * INVAL, anything else -> IO). Accepts negative values (libbpf style).
 * Any thread; pure. */
enum mlv_err mlv_err_from_errno(int e);

/* Format a message into buf (if buf and len are non-zero) and return err,
 * so a failure path reads `return mlv_err_msg(buf, len, MLV_E_IO, "...")`.
 * Any thread. */
enum mlv_err mlv_err_msg(char *buf, size_t len, enum mlv_err err,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
