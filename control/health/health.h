/* SPDX-License-Identifier: BSD-3-Clause */
/* Health checks: the engine that decides which backends are up.
 *
 * One check ("probe") runs per distinct target: (backend address, port,
 * check spec). (VIP, backend) pairs whose backend has the same address and
 * whose VIPs use the same health spec share that probe, so a backend used
 * by 1000 VIPs is checked once per interval and its transitions fan out to
 * all 1000 pairs in one report. Semantics, defaults and the all-down
 * policy: docs/health.md.
 *
 * The engine never blocks. It owns one epoll fd (its sockets and one
 * timerfd for the schedule); the daemon adds mlv_health_fd() to its own
 * epoll set (EPOLLIN, level-triggered) and calls mlv_health_process()
 * whenever that fd is readable. Due times live in a min-heap, so each event
 * costs O(log n) in the number of probes, never O(n).
 *
 * Threads: every function here that takes an engine is for the thread
 * that created it (the control thread); nothing is shared with workers,
 * so there is no memory ordering to consider. The functions without an
 * engine (names, the bucket bounds) are pure: any thread. Plain C, no
 * DPDK.
 */
#ifndef MLV_HEALTH_H
#define MLV_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/config/config.h"
#include "control/base/error.h"

/* Longest result text, with the NUL ("connect: Connection refused",
 * "timeout after 500ms while connecting", "HTTP 503 (expected 200)"). */
#define MLV_HEALTH_REASON_MAX 96

/* What happens to a VIP whose every backend is down (docs/health.md). */
enum mlv_health_all_down {
	/* Default. Every backend of the VIP answers "up" to
	 * mlv_health_is_up, so the table is the one the config alone gives:
	 * clients reach real hosts (which refuse quickly if the service is
	 * dead), and a checker-side fault does not take the VIP down. */
	MLV_HEALTH_FAIL_OPEN = 0,
	/* Down backends stay down: the table is empty and new flows are
	 * counted as no_backend drops. */
	MLV_HEALTH_FAIL_CLOSED,
};

/* Engine counters, named once (metrics and the control socket iterate
 * this list): X(id, name, help). */
#define MLV_HEALTH_COUNTERS(X)                                              \
	X(CHECKS_STARTED, "checks_started", "checks sent to a backend")     \
	X(CHECKS_OK,      "checks_ok",      "checks that succeeded")        \
	X(CHECKS_FAILED,  "checks_failed",  "checks that failed")           \
	X(TRANSITIONS,    "transitions",    "up/down changes of a probe")   \
	X(LOCAL_ERRORS,   "local_errors",                                   \
	  "checks not run because of a local error (socket(), epoll); "     \
	  "not counted against the backend")                                \
	X(DEFERRED,       "deferred",                                       \
	  "checks that waited for a free slot (max_in_flight reached)")

enum mlv_health_counter {
#define MLV_HEALTH_CTR_ENUM(id, name, help) MLV_HEALTH_CTR_##id,
	MLV_HEALTH_COUNTERS(MLV_HEALTH_CTR_ENUM)
#undef MLV_HEALTH_CTR_ENUM
	MLV_HEALTH_CTR__COUNT
};

/* How a completed check ended, named once (metrics iterate this list):
 * X(id, name). ok: it succeeded; failed: the backend or the kernel said
 * no (refused, unreachable, a wrong status or reply); timeout: no verdict
 * before the check's deadline. Both kinds of failure count against
 * rise/fall and in checks_failed alike; they are told apart for the
 * duration histogram, where a timeout's duration is the timeout rather
 * than the backend's. */
#define MLV_HEALTH_RESULTS(X) \
	X(OK, "ok")           \
	X(FAILED, "failed")   \
	X(TIMEOUT, "timeout")

enum mlv_health_result {
#define MLV_HEALTH_RESULT_ENUM(id, name) MLV_HEALTH_RESULT_##id,
	MLV_HEALTH_RESULTS(MLV_HEALTH_RESULT_ENUM)
#undef MLV_HEALTH_RESULT_ENUM
	MLV_HEALTH_RESULT__COUNT
};

/* Name of a result ("timeout"), or "unknown". Any thread. */
const char *mlv_health_result_name(enum mlv_health_result r);

/* The check-duration histogram (docs/health.md, "Check durations"): its
 * finite buckets' upper bounds, in nanoseconds, ascending; the +Inf
 * bucket beyond them is the count. Chosen around the check timeouts: a
 * check on a LAN answers in well under a millisecond to a few, and a
 * check that times out has lasted at least its timeout (10 ms .. 1 h,
 * default 500 ms), so with the default every timeout lands above 0.5 s,
 * apart from the answers read in time. Any thread. */
#define MLV_HEALTH_DURATION_BUCKETS 13
extern const uint64_t
	mlv_health_duration_bounds_ns[MLV_HEALTH_DURATION_BUCKETS];

/* Name of a counter ("checks_ok"), or "unknown". */
const char *mlv_health_counter_name(enum mlv_health_counter c);

/* Name of a check type: "none", "tcp", "http", or "unknown". */
const char *mlv_health_type_name(enum mlv_health_type t);

/* Name of a check's way: "direct", "data_path", or "unknown". Any thread. */
const char *mlv_health_via_name(enum mlv_health_via v);

/* A (VIP, backend) pair. The strings belong to the engine. */
struct mlv_health_pair {
	const char *vip;
	const char *backend;
};

/* One probe changed state. */
struct mlv_health_event {
	enum mlv_health_type type;
	struct mlv_ip address;         /* where the check goes */
	uint16_t port;
	enum mlv_health_via via;
	struct mlv_ip vip;             /* data_path: the address it reaches */
	const char *path;              /* http: request path; "" otherwise */
	bool up;                       /* the new state */
	const char *reason;            /* the result that decided it */
	uint32_t consecutive;          /* successes (up) or failures (down)
					  that made the change: rise or fall */
	uint32_t n_pairs;              /* every (VIP, backend) this probe serves */
	const struct mlv_health_pair *pairs;
};

/* A VIP entered or left the all-down state. */
struct mlv_health_vip_event {
	const char *vip;
	bool all_down;                 /* true: every backend is now down */
	bool fail_open;                /* and the VIP fails open */
};

/* One line for the log, e.g. "http://10.99.1.11:8080/healthz is down
 * after 3 consecutive failures (HTTP 503 (expected 200)); affects
 * web/web-1 and 999 more". Returns what snprintf returns. */
int mlv_health_event_describe(const struct mlv_health_event *e, char *buf,
			      size_t len);

/* Everything one mlv_health_process() call changed. Pointers are valid
 * only during the callback. */
struct mlv_health_batch {
	uint32_t n_events;
	const struct mlv_health_event *events;
	uint32_t n_vip_events;
	const struct mlv_health_vip_event *vip_events;
};

/* Called at most once per mlv_health_process() call, and only when some
 * probe changed state or some VIP entered/left all-down. The callback may
 * call mlv_health_get/is_up/vip_get (they already answer with the new
 * states) but not sync, process or destroy. */
typedef void (*mlv_health_batch_fn)(const struct mlv_health_batch *batch,
				    void *ctx);

/* A data-path check's connection (docs/health.md, "Checks through the
 * data path"). The engine connects to the backend's address, as a
 * direct check does, from a port it bound itself and with an IP TTL /
 * hop limit of 1; the daemon's check path (control/check_path) carries
 * that connection's packets as the data plane carries the VIP's: out,
 * re-addressed to the VIP and encapsulated toward the backend; in (the
 * backend answers from the VIP, straight to this host), re-addressed
 * back to the backend, so the socket sees an ordinary connection. */
struct mlv_health_tunnel {
	struct mlv_ip backend;         /* the socket's peer */
	uint16_t port;                 /* the check port, host order */
	uint16_t local_port;           /* the socket's own port, host order */
	struct mlv_ip vip;             /* the destination the backend sees;
					  the family of backend */
	enum mlv_forwarding forwarding;
	uint16_t gue_port;             /* gue: outer UDP destination port */
	bool has_mac;                  /* l2dsr: the backend's configured MAC */
	struct mlv_mac mac;
	/* ipip: the VIP's ipip_source (ipip_source6) prefix of the backend's
	 * family, the outer source taken from it by the connection's flow
	 * hash as the data plane takes it; family MLV_AF_NONE: none, the
	 * packet's own source */
	struct mlv_ip_prefix outer_source;
};

/* How the engine announces its data-path connections. open is called
 * after the socket is bound and before it connects; a result other than
 * MLV_OK fails that check (counted against the backend: a check that
 * cannot take the data path proves nothing about it), with why (at most
 * why_len bytes, NUL-terminated) in its reason. close is called once
 * for every successful open, after the socket is closed, so the last
 * packet the socket sends (its reset) is still carried. Both run on the
 * engine's thread, inside the engine's calls (sync, process, destroy);
 * they must not call the engine. With open NULL every data-path check
 * fails with the reason "data path: not available". */
struct mlv_health_tunnel_ops {
	enum mlv_err (*open)(void *ctx, const struct mlv_health_tunnel *t,
			     char *why, size_t why_len);
	void (*close)(void *ctx, const struct mlv_health_tunnel *t);
	void *ctx;
};

struct mlv_health_options {
	/* Seeds the jitter and the initial phases: the same seed and the
	 * same sequence of calls give the same schedule. */
	uint64_t seed;
	/* At most this many checks in flight (each holds a socket); more
	 * due checks wait their turn. 0: half of RLIMIT_NOFILE's soft limit,
	 * between 16 and 16384. */
	uint32_t max_in_flight;
	enum mlv_health_all_down all_down;
	mlv_health_batch_fn on_batch;   /* may be NULL */
	void *ctx;                      /* passed to on_batch */
	struct mlv_health_tunnel_ops tunnel; /* data-path checks; may be zero */
};

struct mlv_health;

/* Create an engine with no checks (add them with mlv_health_sync). opts
 * is copied. Returns MLV_OK and *out; MLV_E_INVAL for NULL arguments or an
 * unknown all_down value; MLV_E_IO if epoll/timerfd cannot be created;
 * MLV_E_NOMEM. */
enum mlv_err mlv_health_create(const struct mlv_health_options *opts,
			       struct mlv_health **out);

/* Close every socket and free the engine. NULL is a no-op. */
void mlv_health_destroy(struct mlv_health *h);

/* The fd to watch for EPOLLIN (level-triggered). It stays open for the
 * engine's lifetime. */
int mlv_health_fd(const struct mlv_health *h);

/* Check cfg's health specs without changing anything: every
 * (VIP, backend) must give a valid check (type known; interval, timeout,
 * rise, fall > 0; a port; an http path starting with '/' and, like the
 * host, free of spaces and control characters, so nothing can be injected
 * into the request; a backend address), VIP names unique and backend names
 * unique within a VIP. Returns MLV_OK, or MLV_E_INVAL with a sentence
 * naming the VIP and backend in err (err_len bytes; err may be NULL). */
enum mlv_err mlv_health_check_config(const struct mlv_config *cfg, char *err,
				     size_t err_len);

/* Make the engine check exactly cfg's (VIP, backend) pairs.
 * - A pair whose check spec (type, address, effective port, interval,
 *   timeout, rise, fall, expect, path, host) is unchanged keeps its probe
 *   and all its state.
 * - A pair whose spec changed moves to the probe for the new spec. A probe
 *   created here starts with the state its pairs had before (down if any
 *   of them was down; up for new pairs); counters start at zero.
 * - Pairs that cfg no longer has are dropped; probes no pair uses stop
 *   (their sockets are closed).
 * cfg is not referenced after the call. Does not call on_batch.
 * *changed (may be NULL) is set to whether mlv_health_is_up now answers
 * differently, for some (VIP, backend) of cfg, than just before the call
 * (a pair unknown before counts as having answered "up"): a generation
 * built before the sync must then be rebuilt.
 * Returns MLV_OK; MLV_E_INVAL (engine unchanged, mlv_health_error says
 * why) when mlv_health_check_config rejects cfg; MLV_E_NOMEM, after which
 * the engine is consistent but may hold a mix of the old and new pairs:
 * call again. */
enum mlv_err mlv_health_sync(struct mlv_health *h,
			     const struct mlv_config *cfg, bool *changed);

/* The reason of the last failed mlv_health_sync/create, or "". */
const char *mlv_health_error(const struct mlv_health *h);

/* Handle whatever is ready: finished connects, responses, timeouts, due
 * checks. Never blocks; bounded work per call (if more is pending the fd
 * stays readable). Every ready socket event is read before any deadline
 * is judged, so however long the caller was busy, a check that finished
 * meanwhile counts as finished (docs/health.md, "When the control thread
 * was busy"). Calls on_batch once if anything changed. Returns MLV_OK, or
 * MLV_E_IO if epoll_wait failed (the engine stays usable; deadlines wait
 * for a later call). */
enum mlv_err mlv_health_process(struct mlv_health *h);

/* What the control socket and metrics show for one (VIP, backend). */
struct mlv_health_status {
	enum mlv_health_type type;
	struct mlv_ip address;       /* the check's target */
	uint16_t port;
	enum mlv_health_via via;     /* direct, or through the data path */
	struct mlv_ip vip;           /* data_path: the VIP address it reaches */
	bool up;                     /* the checks' own verdict */
	bool effective_up;           /* what mlv_health_is_up answers: up,
					or down in a VIP that fails open */
	bool vip_all_down;           /* every backend of the VIP is down */
	bool in_flight;              /* a check is running right now */
	uint32_t successes;          /* consecutive; 0 after a failure */
	uint32_t failures;           /* consecutive; 0 after a success */
	uint64_t checks;             /* completed checks of this probe */
	uint32_t transitions;        /* up/down changes so far */
	int64_t since_unix_ms;       /* when the current state began (the
					probe's creation for its first state) */
	bool has_result;             /* false until the first check ends */
	bool last_ok;
	char last_result[MLV_HEALTH_REASON_MAX]; /* "HTTP 200", "connected",
						    or the error; "" before
						    the first check */
	uint32_t shared_by;          /* (VIP, backend) pairs on this probe */
};

/* Fill *out for (vip, backend). Returns MLV_OK, MLV_E_NOT_FOUND if the
 * engine does not check that pair, MLV_E_INVAL for NULL arguments. */
enum mlv_err mlv_health_get(const struct mlv_health *h, const char *vip,
			    const char *backend, struct mlv_health_status *out);

/* Whether (vip, backend) should be in its VIP's table: the checks say up,
 * or the VIP fails open. true for a pair the engine does not know (and for
 * h == NULL), so a generation built before the first sync serves every
 * backend. Meant for the mlv_gen_state_fn given to mlv_gen_build:
 *   out->healthy = mlv_health_is_up(h, vip, backend); */
bool mlv_health_is_up(const struct mlv_health *h, const char *vip,
		      const char *backend);

/* The same answer as mlv_health_is_up(h, vip, backend), found by position
 * when (vip_index, backend_index) is the pair's place in the config of
 * the last successful mlv_health_sync (cfg->vips[vip_index].backends
 * [backend_index]): no hashing, for the generation builder's per-pair
 * callback. The position is checked against the names, so any position
 * (another config's, out of range) still gives the right answer, by the
 * slower look-up by name. */
bool mlv_health_is_up_at(const struct mlv_health *h, uint32_t vip_index,
			 uint32_t backend_index, const char *vip,
			 const char *backend);

/* Every check of one (VIP, backend) that reached a verdict since the
 * pair was configured: by duration, as a Prometheus histogram has it, and
 * by result. A check's duration runs from the moment the engine opens its
 * socket to the moment it reaches the verdict (CLOCK_MONOTONIC), so it
 * includes time the control thread spent elsewhere before reading an
 * answer that had arrived. Checks that end without a verdict (stopped by
 * a sync, or never run for a local error) are not in it. */
struct mlv_health_durations {
	/* le[i]: checks that took at most mlv_health_duration_bounds_ns[i];
	 * cumulative, so le[i] <= le[i + 1] <= count. */
	uint64_t le[MLV_HEALTH_DURATION_BUCKETS];
	uint64_t count;              /* every check observed (+Inf bucket) */
	uint64_t sum_ns;             /* their durations added up */
	/* The same checks by result; they add up to count. */
	uint64_t results[MLV_HEALTH_RESULT__COUNT];
};

/* Fill *out with the check durations of (vip, backend).
 *
 * A pair's figures only grow while it stays configured: a sync that
 * moves it to another probe (a changed check) carries them over, and
 * a pair that joins a probe already shared by others starts at zero, not
 * at the probe's figures. A pair that a sync removes is forgotten; added
 * back, it starts at zero again. Pairs of type none never run a check and
 * stay at zero.
 *
 * Thread: the thread that created the engine, like every call on it;
 * also from inside the on_batch callback.
 * Returns: MLV_OK and *out; MLV_E_NOT_FOUND (*out untouched) if the
 * engine does not check that pair; MLV_E_INVAL for NULL arguments.
 * Ordering: *out counts exactly the verdicts reached by the
 * mlv_health_process() calls that returned before this call (from
 * on_batch: those of the current call too), the same moment that
 * mlv_health_get and mlv_health_stats describe; for a pair that has had
 * one probe since it was configured, count equals mlv_health_status's
 * checks. Nothing is shared with other threads, so no memory ordering is
 * involved. */
enum mlv_err mlv_health_check_durations(const struct mlv_health *h,
					const char *vip, const char *backend,
					struct mlv_health_durations *out);

struct mlv_health_vip_status {
	uint32_t n_backends;         /* pairs of this VIP the engine checks */
	uint32_t n_down;             /* of which the checks say down */
	bool all_down;               /* n_backends > 0 && n_down == n_backends */
	bool fail_open;              /* all_down and the policy is fail-open */
};

/* Returns MLV_OK, or MLV_E_NOT_FOUND for a VIP with no checked backend,
 * MLV_E_INVAL for NULL arguments. */
enum mlv_err mlv_health_vip_get(const struct mlv_health *h, const char *vip,
				struct mlv_health_vip_status *out);

struct mlv_health_stats {
	uint32_t n_vips;
	uint32_t n_pairs;
	uint32_t n_probes;           /* distinct targets, none included */
	uint32_t in_flight;
	uint32_t waiting;            /* due, waiting for a free slot */
	uint32_t max_in_flight;
	uint64_t counters[MLV_HEALTH_CTR__COUNT];
};

/* Engine-wide figures. */
void mlv_health_stats(const struct mlv_health *h, struct mlv_health_stats *out);

#endif
