/* SPDX-License-Identifier: BSD-3-Clause */
/* Taking the control socket's path: directory, lock, stale or live
 * socket, bind with the configured mode, listen. Internal to
 * control/ctl/server.c (the rules are described in server.h).
 *
 * Threads: the control thread.
 */
#ifndef MLV_CTL_LISTEN_H
#define MLV_CTL_LISTEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "control/base/error.h"

/* Longest socket path: sun_path holds it with its NUL. */
#define MLV_CTL_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* How long a start waits for the lock of an instance that is exiting
 * (killed, still releasing its memory) before it gives up. */
#define MLV_CTL_LOCK_WAIT_MS 10000u

struct mlv_ctl_listener {
	int fd;               /* listening, non-blocking, close-on-exec */
	int lock_fd;          /* holds flock on "<path>.lock" */
	int dir_fd;           /* the socket's checked directory */
	dev_t dev;            /* the socket file we bound, to remove */
	ino_t ino;            /* only that one at shutdown */
	char path[MLV_CTL_PATH_MAX + 1];
	char name[MLV_CTL_PATH_MAX + 1];   /* the last component of path */
	/* /proc/self/fd/<dir_fd>/<name>: path through the directory fd */
	char at[MLV_CTL_PATH_MAX + 1];
};

/* Take path for a listening socket with permissions mode and group gid
 * (0: the process's). Its directory is created 0750 (group gid) when
 * missing, and must be writable only by its owner, root or maglevd's
 * user. Returns MLV_OK and fills *l, or an error (see
 * mlv_ctl_server_create) with a sentence in err; nothing is left open or
 * created on error except the socket's directory and lock file. */
enum mlv_err mlv_ctl_listen(const char *path, uint32_t mode, uint32_t gid,
			    struct mlv_ctl_listener *l, char *err,
			    size_t err_len);

/* Close the socket, remove its file if it is still ours, drop the lock.
 * Safe on a listener whose fds are -1. */
void mlv_ctl_unlisten(struct mlv_ctl_listener *l);

#endif
