/* SPDX-License-Identifier: BSD-3-Clause */
/* Reloading when the config file changes: inotify on the file's
 * directory, not on the file, because editors and deployment tools save
 * by writing a new file and renaming it over the old one (the old inode,
 * and a watch on it, would never see another write). Events for the
 * file's name that finish a change (IN_CLOSE_WRITE after writing in
 * place, IN_MOVED_TO after a rename) start a debounce timer; the reload
 * happens when it fires, so a burst of saves reloads once. When the path
 * leads through symbolic links (an `ln -sfn` deployment, a Kubernetes
 * ConfigMap: maglevd.yaml -> ..data/maglevd.yaml, ..data -> a dated
 * directory), the name of every link on the way and the file at its end
 * are watched, and the chain is resolved again after each event on it:
 * a link swapped is a change, and the new target is watched from then
 * on.
 *
 * Two fds go into the control loop's epoll: the inotify fd and the
 * debounce timerfd (both EPOLLIN, non-blocking).
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_CONFIG_WATCH_H
#define MLV_DAEMON_CONFIG_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/config/config.h"

#define MLV_CONFIG_WATCH_DEBOUNCE_MS 100u
/* A file rewritten without pause (a log-like writer) still reloads this
 * long after the first change. */
#define MLV_CONFIG_WATCH_MAX_DELAY_MS 1000u
/* Links followed on the way to the config file, at most. */
#define MLV_CONFIG_WATCH_MAX_LINKS 8u
/* The file, each link on its way and the file they lead to, then one per
 * `include:` pattern. */
#define MLV_CONFIG_WATCH_MAX_DIRS \
	(2 + MLV_CONFIG_WATCH_MAX_LINKS + MLV_CONFIG_MAX_INCLUDES)

struct mlv_config_watch {
	int inotify_fd;              /* -1 when closed */
	int timer_fd;
	char path[PATH_MAX];         /* the config file, as given */
	uint32_t n;                  /* watched (directory, name) pairs */
	uint32_t n_file;             /* of which the config file's chain */
	struct {
		int wd;
		char name[MLV_CONFIG_MAX_INCLUDE_LEN];   /* a file name, or a
							  glob of names */
		bool pattern;
	} dirs[MLV_CONFIG_WATCH_MAX_DIRS];
	/* the include patterns watched now, as the config wrote them */
	uint32_t n_includes;
	char includes[MLV_CONFIG_MAX_INCLUDES][MLV_CONFIG_MAX_INCLUDE_LEN];
	bool pending;                /* a change waits for the timer */
	uint64_t first_ms;           /* CLOCK_MONOTONIC of the first change */
	uint64_t changes;            /* events that armed the timer, for logs */
};

/* Start watching path's directory (and the links on its way). Returns
 * MLV_OK, or MLV_E_IO with a sentence in err (errno kept) when inotify
 * or the timer cannot be set up; then nothing stays open. */
enum mlv_err mlv_config_watch_open(const char *path, struct mlv_config_watch *w,
				   char *err, size_t err_len);

/* Watch the directories of the config's `include:` patterns (relative
 * ones against the config file's directory) for names the pattern's last
 * component matches, in place of the patterns watched so far; nothing to
 * do when they are the same. A pattern whose directory part is itself a
 * glob, or whose directory cannot be watched, is logged and skipped (a
 * SIGHUP still reloads). Control thread. */
void mlv_config_watch_includes(struct mlv_config_watch *w, const char *path,
			       char *const *includes, uint32_t n);

/* Stop watching. Safe on a closed or zeroed-and-closed watch. */
void mlv_config_watch_close(struct mlv_config_watch *w);

/* The inotify fd is readable: read every event; a change to the file
 * (re)arms the debounce timer. Returns whether one was seen. */
bool mlv_config_watch_on_inotify(struct mlv_config_watch *w);

/* The timer fd is readable: returns true when the reload is due (and
 * clears the pending state). */
bool mlv_config_watch_on_timer(struct mlv_config_watch *w);

#endif
