/* SPDX-License-Identifier: BSD-3-Clause */
/* The control thread's event loop: one epoll over a signalfd (SIGHUP;
 * SIGTERM and SIGINT: a graceful stop, daemon/announce_glue.c), the
 * control socket's, the metrics endpoint's and the health engine's own
 * epoll fds, the config file watch (inotify + debounce timer), rtnetlink
 * notifications for next_hop: auto, and timers (stats file, reclaim,
 * next-hop retries, systemd watchdog, rate samples for `stats`). Every source is level-triggered
 * and non-blocking: the loop never blocks on anything but epoll_wait.
 * While deferred second choices are pending (daemon/second_choices.c) it
 * does not block at all: each pass serves what is ready, then computes a
 * few tables' worth. After each wake-up, generations replaced by
 * whatever ran are reclaimed once their grace period ended. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/runtime/config_watch.h"
#include "daemon/daemon.h"
#include "control/base/log.h"
#include "daemon/notify.h"
#include "daemon/port_stats.h"
#include "dataplane/worker/bond.h"
#include "daemon/stats_file.h"

/* How soon to retry reclaiming a replaced generation: workers pass a
 * quiescent state every poll loop (microseconds), or are offline while
 * they sleep, so a few milliseconds is plenty. */
#define RECLAIM_RETRY_MS 2

enum {
	EV_SIGNAL = 1, EV_STATS, EV_RECLAIM, EV_CTL, EV_HEALTH, EV_WATCH,
	EV_WATCH_TIMER, EV_RTNL, EV_NEXT_HOP_TICK, EV_WATCHDOG, EV_METRICS,
	EV_RATES, EV_BONDS,
};

/* How often the control socket samples the counters for the rates in
 * `stats`: once a second gives per-second figures without a client
 * having to poll twice. */
#define RATE_SAMPLE_MS 1000

struct loop {
	struct mlv_daemon *d;
	int ep;
	int stats_tfd;
	int reclaim_tfd;
	int tick_tfd;            /* next-hop retries and re-checks */
	int watchdog_tfd;
	int rates_tfd;
	int bonds_tfd;           /* bonded ports' members, every link_monitor */
	bool reclaim_armed;
	bool stats_failing;      /* log a failing stats file once, not per write */
	struct mlv_config_watch watch;
};

static int arm_timer(int fd, uint32_t first_ms, uint32_t period_ms)
{
	struct itimerspec its = {
		.it_value = { first_ms / 1000, (long)(first_ms % 1000) * 1000000L },
		.it_interval = { period_ms / 1000, (long)(period_ms % 1000) * 1000000L },
	};

	return timerfd_settime(fd, 0, &its, NULL);
}

static int watch(int ep, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* A periodic timer watched under tag; -1 on failure (errno kept). */
static int periodic(int ep, uint32_t period_ms, uint32_t tag)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0)
		return -1;
	if (arm_timer(fd, period_ms, period_ms) || watch(ep, fd, tag)) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static void drain_timer(int fd)
{
	uint64_t expirations;

	/* Non-blocking; EAGAIN just means another event woke us first. */
	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		mlv_debug("timer read: %s", strerror(errno));
}

static void write_stats(struct loop *l)
{
	const char *path = l->d->opts->stats_file;
	char why[512];
	json_t *doc;

	if (!path)
		return;
	doc = mlv_stats_json(l->d, false);
	if (!doc) {
		mlv_warn("stats file: out of memory building it");
		return;
	}
	if (mlv_stats_file_write(path, doc, why, sizeof(why)) != MLV_OK) {
		if (!l->stats_failing)
			mlv_warn("stats file %s: cannot write: %s (further "
				 "failures are not logged)", path, why);
		l->stats_failing = true;
	} else if (l->stats_failing) {
		mlv_info("stats file %s: written again", path);
		l->stats_failing = false;
	}
	json_decref(doc);
}

static void reload(struct loop *l, const char *what)
{
	mlv_daemon_reload_from(l->d, what);
	/* readers polling the stats file see the outcome now */
	write_stats(l);
}

static void on_signals(struct loop *l, int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			reload(l, "SIGHUP");
			break;
		case SIGTERM:
		case SIGINT:
			mlv_daemon_request_stop(l->d, false, true,
						strsignal((int)si.ssi_signo));
			break;
		default:
			break;
		}
	}
}

/* Next hops: publish when a resolved MAC changed. */
static void next_hops(struct loop *l, bool force)
{
	struct mlv_daemon *d = l->d;

	if (mlv_next_hops_update(&d->next_hops, d->cfg, d->ports.info, force))
		mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_NEXT_HOP);
}

static void on_next_hop_tick(struct loop *l)
{
	struct mlv_next_hops *nh = &l->d->next_hops;
	struct timespec ts;
	uint64_t now;

	drain_timer(l->tick_tfd);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	if (now - nh->last_check_ms >= MLV_NEXT_HOP_RECHECK_MS)
		next_hops(l, true);
	else if (!mlv_next_hops_all_resolved(nh))
		next_hops(l, false);   /* looks again, solicits what is missing */
}

/* Free what the workers can no longer see; keep a short timer running
 * while generations wait for their grace period. */
static void reclaim(struct loop *l)
{
	bool pending;

	mlv_publish_reclaim(l->d->pub);
	pending = mlv_publish_pending(l->d->pub) > 0;
	if (pending == l->reclaim_armed)
		return;
	if (arm_timer(l->reclaim_tfd, pending ? RECLAIM_RETRY_MS : 0,
		      pending ? RECLAIM_RETRY_MS : 0) == 0)
		l->reclaim_armed = pending;
}

/* Bonded ports: fail over from (and back to) members whose kernel
 * interface lost (regained) carrier, which their drivers do not report
 * (dataplane/worker/bond.h); log what moved. */
static void watch_bonds(struct loop *l)
{
	struct mlv_daemon *d = l->d;
	bool moved = false;

	for (uint32_t i = 0; i < d->ports.n; i++)
		if (d->ports.port[i].bond && d->ports.port[i].started)
			moved |= mlv_bond_steer(d->ports.port[i].port_id);
	if (moved)
		mlv_daemon_watch_links(d);
}

/* The shortest link_monitor of the bonded ports; 0: none. */
static uint32_t bond_period_ms(const struct mlv_config *cfg)
{
	uint32_t ms = 0;

	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].bond.enabled &&
		    (!ms || cfg->ports[i].bond.link_monitor_ms < ms))
			ms = cfg->ports[i].bond.link_monitor_ms;
	return ms;
}

static void sample_rates(struct loop *l)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	mlv_ctl_sample(&l->d->st, (uint64_t)ts.tv_sec * 1000000000u +
				  (uint64_t)ts.tv_nsec);
}

static enum mlv_err setup(struct loop *l, int sigfd)
{
	struct mlv_daemon *d = l->d;
	uint32_t wd_ms = mlv_notify_watchdog_period_ms();
	char why[256] = "";

	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->reclaim_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l->ep < 0 || l->reclaim_tfd < 0 || watch(l->ep, sigfd, EV_SIGNAL) ||
	    watch(l->ep, l->reclaim_tfd, EV_RECLAIM) ||
	    watch(l->ep, mlv_ctl_fd(d->ctl), EV_CTL) ||
	    watch(l->ep, mlv_health_fd(d->health), EV_HEALTH)) {
		mlv_err_log("control loop: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (d->metrics && watch(l->ep, mlv_metrics_fd(d->metrics), EV_METRICS)) {
		mlv_err_log("metrics: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (d->opts->stats_file) {
		l->stats_tfd = periodic(l->ep, d->opts->stats_interval_ms, EV_STATS);
		if (l->stats_tfd < 0) {
			mlv_err_log("stats timer: %s", strerror(errno));
			return MLV_E_IO;
		}
	}
	if (d->opts->watch_config) {
		if (mlv_config_watch_open(d->opts->config_path, &l->watch, why,
					  sizeof(why)) != MLV_OK ||
		    watch(l->ep, l->watch.inotify_fd, EV_WATCH) ||
		    watch(l->ep, l->watch.timer_fd, EV_WATCH_TIMER)) {
			mlv_err_log("%s", why[0] ? why : strerror(errno));
			return MLV_E_IO;
		}
	}
	if (mlv_next_hops_fd(&d->next_hops) >= 0) {
		if (watch(l->ep, mlv_next_hops_fd(&d->next_hops), EV_RTNL) ||
		    (l->tick_tfd = periodic(l->ep, MLV_NEXT_HOP_RETRY_MS,
					    EV_NEXT_HOP_TICK)) < 0) {
			mlv_err_log("next_hop: auto: %s", strerror(errno));
			return MLV_E_IO;
		}
	}
	if (wd_ms) {
		l->watchdog_tfd = periodic(l->ep, wd_ms, EV_WATCHDOG);
		if (l->watchdog_tfd < 0) {
			mlv_err_log("watchdog timer: %s", strerror(errno));
			return MLV_E_IO;
		}
		mlv_notify_watchdog();
	}
	l->rates_tfd = periodic(l->ep, RATE_SAMPLE_MS, EV_RATES);
	if (l->rates_tfd < 0) {
		mlv_err_log("rate sample timer: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (bond_period_ms(d->cfg)) {
		l->bonds_tfd = periodic(l->ep, bond_period_ms(d->cfg), EV_BONDS);
		if (l->bonds_tfd < 0) {
			mlv_err_log("bond timer: %s", strerror(errno));
			return MLV_E_IO;
		}
	}
	sample_rates(l);
	write_stats(l);
	return MLV_OK;
}

static void dispatch(struct loop *l, uint32_t tag, int sigfd)
{
	struct mlv_daemon *d = l->d;

	switch (tag) {
	case EV_SIGNAL:
		on_signals(l, sigfd);
		break;
	case EV_STATS:
		drain_timer(l->stats_tfd);
		write_stats(l);
		break;
	case EV_RECLAIM:
		drain_timer(l->reclaim_tfd);
		break;
	case EV_CTL:
		if (mlv_ctl_process(d->ctl) != MLV_OK)
			mlv_warn("control socket: epoll failed: %s",
				 strerror(errno));
		break;
	case EV_HEALTH:
		mlv_daemon_health_process(d);
		break;
	case EV_WATCH:
		mlv_config_watch_on_inotify(&l->watch);
		break;
	case EV_WATCH_TIMER:
		if (mlv_config_watch_on_timer(&l->watch))
			reload(l, "config file changed");
		break;
	case EV_RTNL:
		mlv_next_hops_on_notify(&d->next_hops);
		if (d->next_hops.refresh || d->next_hops.reroute)
			next_hops(l, false);
		break;
	case EV_NEXT_HOP_TICK:
		on_next_hop_tick(l);
		break;
	case EV_METRICS:
		if (mlv_metrics_process(d->metrics) != MLV_OK)
			mlv_debug("metrics: processing failed");
		break;
	case EV_WATCHDOG:
		drain_timer(l->watchdog_tfd);
		mlv_notify_watchdog();
		break;
	case EV_RATES:
		drain_timer(l->rates_tfd);
		sample_rates(l);
		mlv_daemon_watch_links(l->d);   /* link changes into the log */
		break;
	case EV_BONDS:
		drain_timer(l->bonds_tfd);
		watch_bonds(l);
		break;
	}
}

enum mlv_err mlv_daemon_control_loop(struct mlv_daemon *d, int sigfd)
{
	struct loop l = { .d = d, .ep = -1, .stats_tfd = -1, .reclaim_tfd = -1,
			  .tick_tfd = -1, .watchdog_tfd = -1, .rates_tfd = -1,
			  .bonds_tfd = -1,
			  .watch = { .inotify_fd = -1, .timer_fd = -1 } };
	enum mlv_err err = setup(&l, sigfd);

	/* the workers run: announce what serves */
	if (!err)
		mlv_daemon_announce_refresh(d);
	while (!err && !d->stop_now) {
		/* the running config's include: patterns are watched (a
		 * no-op unless a reload changed them) */
		if (d->opts->watch_config)
			mlv_config_watch_includes(&l.watch, d->opts->config_path,
						  d->cfg->includes,
						  d->cfg->n_includes);
		struct epoll_event ev[16];
		/* deferred second choices: look at the sockets, then the
		 * next step, instead of sleeping; a draining stop wakes the
		 * loop when it is due */
		uint64_t left = mlv_daemon_stop_remaining_ms(d);
		int timeout = d->second_pending ? 0 :
			      d->stopping ? (int)(left < 60000 ? left : 60000) :
			      -1;
		int announce = mlv_daemon_announce_wait_ms(d);
		int window = mlv_daemon_sc_wait_ms(d);

		/* a failed route change is retried, the routes re-asserted */
		if (announce >= 0 && (timeout < 0 || announce < timeout))
			timeout = announce;
		/* a second-chance window ends: its hops leave the packets */
		if (window >= 0 && (timeout < 0 || window < timeout))
			timeout = window;
		int n = epoll_wait(l.ep, ev, 16, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			mlv_err_log("epoll_wait: %s", strerror(errno));
			err = MLV_E_IO;
			break;
		}
		for (int i = 0; i < n && !d->stop_now; i++)
			dispatch(&l, ev[i].data.u32, sigfd);
		if (d->stopping && mlv_daemon_stop_remaining_ms(d) == 0) {
			mlv_info("drain time over: stopping");
			d->stop_now = true;
		}
		mlv_daemon_second_step(d);
		mlv_daemon_sc_step(d);
		/* a command, a health batch or a reload may have published,
		 * or steering changed: the routes follow */
		mlv_daemon_announce_refresh(d);
		reclaim(&l);
	}
	mlv_config_watch_close(&l.watch);
	if (l.stats_tfd >= 0)
		close(l.stats_tfd);
	if (l.reclaim_tfd >= 0)
		close(l.reclaim_tfd);
	if (l.tick_tfd >= 0)
		close(l.tick_tfd);
	if (l.watchdog_tfd >= 0)
		close(l.watchdog_tfd);
	if (l.rates_tfd >= 0)
		close(l.rates_tfd);
	if (l.bonds_tfd >= 0)
		close(l.bonds_tfd);
	if (l.ep >= 0)
		close(l.ep);
	return err;
}
