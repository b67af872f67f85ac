/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/config_watch.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/base/log.h"

/* A file written or renamed into place (`ln -sfn` and a ConfigMap's
 * ..data swap rename a new link into place too); for fragments also one
 * removed or renamed away (a VIP's file deleted is a change of the
 * config, the main file's own removal is not). */
#define WATCH_MASK (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
#define GONE_MASK (IN_DELETE | IN_MOVED_FROM)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Split path into its directory and last component (dirname/basename
 * modify their argument or return static storage; this does neither). */
static bool split(const char *path, char *dir, size_t dir_len, char *name,
		  size_t name_len)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (!slash) {
		n = snprintf(dir, dir_len, ".");
		if (snprintf(name, name_len, "%s", path) >= (int)name_len)
			return false;
	} else {
		n = snprintf(dir, dir_len, "%.*s",
			     slash == path ? 1 : (int)(slash - path), path);
		if (snprintf(name, name_len, "%s", slash + 1) >= (int)name_len)
			return false;
	}
	return n > 0 && (size_t)n < dir_len && name[0];
}

static bool wd_in_use(const struct mlv_config_watch *w, int wd)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->dirs[i].wd == wd)
			return true;
	return false;
}

static bool watched(const struct mlv_config_watch *w, int wd,
		    const char *name)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->dirs[i].wd == wd && !w->dirs[i].pattern &&
		    strcmp(w->dirs[i].name, name) == 0)
			return true;
	return false;
}

/* Watch path's directory for path's last component (once). */
static enum mlv_err add(struct mlv_config_watch *w, const char *path,
			char *err, size_t err_len)
{
	char dir[PATH_MAX];
	int wd;

	if (w->n == MLV_CONFIG_WATCH_MAX_DIRS)
		return MLV_OK;
	if (!split(path, dir, sizeof(dir), w->dirs[w->n].name,
		   sizeof(w->dirs[w->n].name))) {
		snprintf(err, err_len, "config watch: cannot split path %s", path);
		errno = ENAMETOOLONG;
		return MLV_E_IO;
	}
	wd = inotify_add_watch(w->inotify_fd, dir, WATCH_MASK);
	if (wd < 0) {
		snprintf(err, err_len, "config watch: inotify on %s: %s", dir,
			 strerror(errno));
		return MLV_E_IO;
	}
	/* the same directory twice gives the same wd: one entry per name */
	if (!watched(w, wd, w->dirs[w->n].name)) {
		w->dirs[w->n].pattern = false;
		w->dirs[w->n++].wd = wd;
	}
	return MLV_OK;
}

/* The first symbolic link on the way to path (a prefix of it, or path
 * itself): its end in path (the index of the '/' after it, or of the
 * NUL) and its target in target. False when there is none. */
static bool first_link(const char *path, size_t *end, char *target,
		       size_t len)
{
	char prefix[PATH_MAX];
	struct stat st;

	for (size_t i = 1; ; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (i < sizeof(prefix)) {
			memcpy(prefix, path, i);
			prefix[i] = '\0';
			if (lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode)) {
				ssize_t n = readlink(prefix, target, len - 1);

				if (n > 0) {
					target[n] = '\0';
					*end = i;
					return true;
				}
			}
		}
		if (!path[i])
			return false;
	}
}

/* Watch the name of every link on the way to the config file, and the
 * file at the end: a link swapped anywhere (`ln -sfn`, a ConfigMap's
 * ..data renamed over) or the file itself rewritten is then an event.
 * The path is resolved by hand, one link at a time, at most
 * MLV_CONFIG_WATCH_MAX_LINKS of them. */
static enum mlv_err add_file_chain(struct mlv_config_watch *w,
				   char *err, size_t err_len)
{
	char cur[PATH_MAX], target[PATH_MAX], next[PATH_MAX];
	enum mlv_err rc;
	size_t end;

	snprintf(cur, sizeof(cur), "%s", w->path);
	rc = add(w, cur, err, err_len);
	for (uint32_t hop = 0; !rc && hop < MLV_CONFIG_WATCH_MAX_LINKS &&
	     first_link(cur, &end, target, sizeof(target)); hop++) {
		char link[PATH_MAX];
		const char *slash;
		int n;

		snprintf(link, sizeof(link), "%.*s", (int)end, cur);
		rc = add(w, link, err, err_len);
		slash = strrchr(link, '/');
		/* the target, relative to the link's directory unless
		 * absolute, then the rest of the path after the link */
		if (target[0] == '/' || !slash)
			n = snprintf(next, sizeof(next), "%s%s", target, cur + end);
		else
			n = snprintf(next, sizeof(next), "%.*s/%s%s",
				     (int)(slash - link), link, target, cur + end);
		if (n < 0 || (size_t)n >= sizeof(next))
			break;
		memcpy(cur, next, (size_t)n + 1);
	}
	if (!rc && strcmp(cur, w->path) != 0)
		rc = add(w, cur, err, err_len);
	return rc;
}

/* Watch the chain to the config file again, as it resolves now, and the
 * includes; watches no entry uses any more are removed. */
static void rewatch(struct mlv_config_watch *w)
{
	char includes[MLV_CONFIG_MAX_INCLUDES][MLV_CONFIG_MAX_INCLUDE_LEN];
	char *ptrs[MLV_CONFIG_MAX_INCLUDES];
	int old[MLV_CONFIG_WATCH_MAX_DIRS];
	uint32_t n_old = w->n, n_inc = w->n_includes;
	char err[256];

	for (uint32_t i = 0; i < n_old; i++)
		old[i] = w->dirs[i].wd;
	for (uint32_t i = 0; i < n_inc; i++) {
		memcpy(includes[i], w->includes[i], sizeof(includes[i]));
		ptrs[i] = includes[i];
	}
	w->n = 0;
	if (add_file_chain(w, err, sizeof(err)) != MLV_OK)
		mlv_warn("%s (SIGHUP still reloads)", err);
	w->n_file = w->n;
	w->n_includes = 0;
	mlv_config_watch_includes(w, w->path, ptrs, n_inc);
	for (uint32_t i = 0; i < n_old; i++)
		if (!wd_in_use(w, old[i]))
			inotify_rm_watch(w->inotify_fd, old[i]);
}

enum mlv_err mlv_config_watch_open(const char *path, struct mlv_config_watch *w,
				   char *err, size_t err_len)
{
	enum mlv_err rc;

	memset(w, 0, sizeof(*w));
	w->timer_fd = -1;
	w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->inotify_fd < 0) {
		snprintf(err, err_len, "config watch: inotify: %s", strerror(errno));
		return MLV_E_IO;
	}
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->timer_fd < 0) {
		snprintf(err, err_len, "config watch: timer: %s", strerror(errno));
		rc = MLV_E_IO;
		goto fail;
	}
	if (snprintf(w->path, sizeof(w->path), "%s", path) >=
	    (int)sizeof(w->path)) {
		snprintf(err, err_len, "config watch: path too long: %s", path);
		errno = ENAMETOOLONG;
		rc = MLV_E_IO;
		goto fail;
	}
	if ((rc = add_file_chain(w, err, err_len)))
		goto fail;
	w->n_file = w->n;
	return MLV_OK;
fail:
	mlv_config_watch_close(w);
	return rc;
}

void mlv_config_watch_close(struct mlv_config_watch *w)
{
	if (w->inotify_fd >= 0)
		close(w->inotify_fd);
	if (w->timer_fd >= 0)
		close(w->timer_fd);
	w->inotify_fd = -1;
	w->timer_fd = -1;
	w->n = 0;
	w->n_file = 0;
	w->n_includes = 0;
	w->pending = false;
}

/* Whether ev is a change of the config: an entry's name finished
 * (written, renamed in; for a fragment also removed). *file: it is in
 * the config file's own chain, whose links may now lead elsewhere. */
static bool matches(const struct mlv_config_watch *w,
		    const struct inotify_event *ev, bool *file)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		*file = true;  /* events were lost: one of them may be ours */
		return true;
	}
	if (!ev->len)
		return false;
	for (uint32_t i = 0; i < w->n; i++) {
		const bool pat = w->dirs[i].pattern;

		if (w->dirs[i].wd != ev->wd ||
		    (pat ? fnmatch(w->dirs[i].name, ev->name, FNM_PERIOD) != 0 :
			   strcmp(w->dirs[i].name, ev->name) != 0))
			continue;
		if (!pat && (ev->mask & GONE_MASK))
			continue;
		*file = *file || i < w->n_file;
		return true;
	}
	return false;
}

static bool same_includes(const struct mlv_config_watch *w,
			  char *const *includes, uint32_t n)
{
	if (n != w->n_includes)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(w->includes[i], includes[i]) != 0)
			return false;
	return true;
}

void mlv_config_watch_includes(struct mlv_config_watch *w, const char *path,
			       char *const *includes, uint32_t n)
{
	int old[MLV_CONFIG_WATCH_MAX_DIRS];
	uint32_t n_old = 0;

	if (w->inotify_fd < 0 || same_includes(w, includes, n))
		return;
	for (uint32_t i = w->n_file; i < w->n; i++)
		old[n_old++] = w->dirs[i].wd;
	w->n = w->n_file;
	w->n_includes = 0;
	for (uint32_t i = 0; i < n && i < MLV_CONFIG_MAX_INCLUDES; i++) {
		char full[PATH_MAX], dir[PATH_MAX];
		int wd;

		snprintf(w->includes[w->n_includes++], sizeof(w->includes[0]),
			 "%s", includes[i]);
		if (!mlv_config_include_path(path, includes[i], full,
					     sizeof(full)) ||
		    w->n == MLV_CONFIG_WATCH_MAX_DIRS ||
		    !split(full, dir, sizeof(dir), w->dirs[w->n].name,
			   sizeof(w->dirs[w->n].name))) {
			mlv_warn("config watch: include '%s': cannot watch it",
				 includes[i]);
			continue;
		}
		if (mlv_config_is_glob(dir)) {
			mlv_warn("config watch: include '%s': a glob in the "
				 "directory part is not watched (SIGHUP or "
				 "maglevctl reload reads it)", includes[i]);
			continue;
		}
		wd = inotify_add_watch(w->inotify_fd, dir, WATCH_MASK);
		if (wd < 0) {
			mlv_warn("config watch: include '%s': inotify on %s: %s "
				 "(SIGHUP or maglevctl reload reads it)",
				 includes[i], dir, strerror(errno));
			continue;
		}
		w->dirs[w->n].wd = wd;
		w->dirs[w->n++].pattern = true;
	}
	for (uint32_t i = 0; i < n_old; i++)
		if (!wd_in_use(w, old[i]))
			inotify_rm_watch(w->inotify_fd, old[i]);
}

static void arm(struct mlv_config_watch *w)
{
	uint64_t now = now_ms(), due;
	struct itimerspec its = { 0 };

	if (!w->pending) {
		w->pending = true;
		w->first_ms = now;
	}
	/* trailing debounce, but never later than MAX_DELAY after the first */
	due = now + MLV_CONFIG_WATCH_DEBOUNCE_MS;
	if (due > w->first_ms + MLV_CONFIG_WATCH_MAX_DELAY_MS)
		due = w->first_ms + MLV_CONFIG_WATCH_MAX_DELAY_MS;
	if (due <= now)
		due = now + 1;
	its.it_value.tv_sec = (time_t)((due - now) / 1000);
	its.it_value.tv_nsec = (long)((due - now) % 1000) * 1000000L;
	if (timerfd_settime(w->timer_fd, 0, &its, NULL) != 0)
		mlv_warn("config watch: cannot arm the timer: %s", strerror(errno));
}

bool mlv_config_watch_on_inotify(struct mlv_config_watch *w)
{
	/* aligned as the kernel's struct requires */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool seen = false, file = false;
	int gone = -1;
	ssize_t n;

	while ((n = read(w->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			/* a watched directory went away (IN_IGNORED also
			 * follows our own inotify_rm_watch, of a directory no
			 * entry uses any more): on the config file's chain,
			 * follow the links again; an include's, say so below
			 * unless the rewatch replaced it */
			if ((ev->mask & IN_IGNORED) && wd_in_use(w, ev->wd)) {
				for (uint32_t i = 0; i < w->n_file; i++)
					file |= w->dirs[i].wd == ev->wd;
				gone = ev->wd;
			}
			if (matches(w, ev, &file))
				seen = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		mlv_warn("config watch: read: %s", strerror(errno));
	/* at once, not when the timer fires: the directory a swapped link
	 * leaves may be removed next, and the one it leads to is watched
	 * from now on */
	if (file)
		rewatch(w);
	if (gone >= 0 && wd_in_use(w, gone))
		mlv_warn("config watch: a watched directory went away; file "
			 "changes there are no longer seen (SIGHUP still "
			 "reloads)");
	if (seen) {
		w->changes++;
		arm(w);
	}
	return seen;
}

bool mlv_config_watch_on_timer(struct mlv_config_watch *w)
{
	uint64_t expirations;

	if (read(w->timer_fd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		mlv_debug("config watch: timer read: %s", strerror(errno));
	if (!w->pending)
		return false;
	w->pending = false;
	return true;
}
