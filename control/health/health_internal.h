/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the health-check engine (the files of control/health/): its data
 * structures and the functions the files share. Control thread only.
 *
 * The files call one way, each only those below it:
 *   health.c (life cycle, process())
 *   sync.c (matching a config)       query.c (the daemon's questions)
 *   probe.c (checks on the wire)     index.c (look-ups by position)
 *   result.c (verdicts, the batch)   validate.c (the config's checks)
 *   schedule.c (when)                durations.c (how long)
 *   model.c (keys, look-ups, clocks)
 *   table.c, heap.c, http.c, dns.c, names.c (leaves)
 * so a change to one reaches only those above it. */
#ifndef MLV_HEALTH_INTERNAL_H
#define MLV_HEALTH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/health/health.h"

#define HEALTH_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- hash tables (table.c) ----
 * Chained, intrusive, power-of-two buckets grown at load 1: the engine
 * keeps three (pairs, probes, VIPs) of up to ~10^5 entries each and looks
 * pairs up once per backend on every generation build. Callers compare
 * keys themselves while walking a bucket. */
struct health_hnode {
	struct health_hnode *next;
	uint64_t hash;
};

struct health_htable {
	struct health_hnode **buckets;
	uint32_t mask;                  /* n_buckets - 1 */
	uint32_t n;
};

enum mlv_err health_htable_init(struct health_htable *t);
void health_htable_free(struct health_htable *t);
/* First node of hash's bucket; walk with ->next, compare ->hash first. */
struct health_hnode *health_htable_bucket(const struct health_htable *t,
					  uint64_t hash);
/* Insert node (node->hash set by the caller); may grow the table. */
enum mlv_err health_htable_insert(struct health_htable *t,
				  struct health_hnode *node);
void health_htable_remove(struct health_htable *t, struct health_hnode *node);
/* Visit every node; fn may remove the node it is given (only that one). */
void health_htable_each(struct health_htable *t,
			void (*fn)(struct health_hnode *node, void *ctx),
			void *ctx);

/* ---- the model ---- */

/* Everything that makes two checks the same check. Strings are "" when
 * unused; for type none only type, address and port are kept. */
struct health_spec {
	enum mlv_health_type type;
	struct mlv_ip address;
	uint16_t port;
	uint8_t rise;
	uint8_t fall;
	uint32_t interval_ms;
	uint32_t timeout_ms;
	uint16_t expect_status;
	/* data_path (tcp, http): the tunnel's fields but its ports; every
	 * other check has via direct and these zero. */
	enum mlv_health_via via;
	struct mlv_ip vip;
	enum mlv_forwarding forwarding;
	uint16_t gue_port;
	bool has_mac;
	struct mlv_mac mac;
	struct mlv_ip_prefix outer_source;   /* ipip; family 0: none */
	/* The check's two texts, by type: http: the request path and the
	 * Host header; udp: the datagram sent and the text the reply must
	 * contain ("" = any reply); dns: the name queried and "". */
	const char *path;
	const char *host;
};

/* Completed checks by duration and by result (durations.c). bucket[i]
 * counts durations in (bound[i - 1], bound[i]], bucket[N] those above the
 * last bound: not cumulative, so one observation writes one bucket. Sums
 * are whole nanoseconds, so they stay exact under the modular arithmetic
 * of a pair's offset (struct health_pair). */
struct health_tally {
	uint64_t bucket[MLV_HEALTH_DURATION_BUCKETS + 1];
	uint64_t sum_ns;
	uint64_t results[MLV_HEALTH_RESULT__COUNT];
};

enum health_phase {
	PHASE_OFF = 0,     /* type none: never scheduled */
	PHASE_SCHEDULED,   /* in the heap, due = next start */
	PHASE_WAITING,     /* due but no free slot: in the wait list */
	PHASE_RUNNING,     /* has a conn; in the heap, due = deadline */
};

struct health_pair;
struct health_conn;

struct health_probe {
	struct health_hnode hnode;      /* in h->probes, keyed by spec */
	struct health_spec spec;        /* path/host point at owned copies */
	enum health_phase phase;
	uint32_t heap_idx;              /* UINT32_MAX when not in the heap */
	uint64_t due_ns;                /* CLOCK_MONOTONIC */
	uint64_t started_ns;            /* start of the running/last check:
					   its socket's opening */
	struct health_probe *wait_prev, *wait_next;
	struct health_conn *conn;       /* PHASE_RUNNING only */
	bool postponed;                 /* its next start was already moved
					   once for lateness (schedule.c) */

	bool up;
	bool has_result;
	bool last_ok;
	bool in_batch;                  /* already in this process() call's events */
	uint32_t successes, failures;   /* consecutive */
	uint64_t checks;
	struct health_tally tally;      /* every check it completed */
	uint32_t transitions;
	int64_t since_unix_ms;
	char last_result[MLV_HEALTH_REASON_MAX];

	uint32_t created_sync;          /* the sync that created it */
	uint32_t n_pairs, cap_pairs;
	struct health_pair **pairs;     /* fan-out */
	struct mlv_health_pair *pub;    /* the same, as the callback sees it */
};

struct health_vip {
	struct health_hnode hnode;      /* in h->vips, keyed by name */
	uint32_t seen_sync;
	uint32_t n_pairs;
	uint32_t n_down;                /* pairs whose probe is down */
	bool all_down_reported;         /* as last reported or synced */
	bool touched;                   /* in this process() call's list */
	char name[MLV_NAME_MAX];
};

struct health_pair {
	struct health_hnode hnode;      /* in h->pairs, keyed by (vip, backend) */
	struct health_vip *vip;
	struct health_probe *probe;
	uint32_t probe_slot;            /* index in probe->pairs */
	uint32_t seen_sync;
	bool existed;                   /* known before the current sync */
	bool eff_before;                /* mlv_health_is_up before the sync */
	/* The pair's durations are its probe's tally plus this, modulo
	 * 2^64: one check then costs one update however many pairs share
	 * the probe. Set whenever the pair joins a probe (durations.c), so
	 * that its figures start at zero and carry over a move. */
	struct health_tally offset;
	char backend[MLV_NAME_MAX];
};

/* Requests are at most "GET " path " HTTP/1.1\r\nHost: " host ... */
#define HEALTH_REQUEST_MAX (2 * MLV_PATH_MAX + 96)
/* "HTTP/1.1 200 " is all a status check needs to read; a udp check
 * compares up to a path's worth of its reply, a dns check the header. */
#define HEALTH_STATUS_PREFIX 13
#define HEALTH_RX_MAX MLV_PATH_MAX

enum health_conn_stage { CONN_CONNECTING, CONN_SENDING, CONN_READING };

/* One check in flight: a socket and its progress. Pooled (at most
 * max_in_flight exist) and found from epoll by index + sequence number,
 * so a stale event can never reach a reused slot. */
struct health_conn {
	int fd;
	uint32_t index;                 /* in h->conns */
	uint32_t seq;                   /* bumped on every use */
	struct health_probe *probe;     /* NULL while free */
	struct health_conn *next_free;
	enum health_conn_stage stage;
	uint16_t req_len, req_sent;
	uint16_t rx_len;
	bool tunneled;                  /* tunnel.open succeeded for tun */
	struct mlv_health_tunnel tun;
	char rx[HEALTH_RX_MAX];
	char req[HEALTH_REQUEST_MAX];
};

/* The pairs of the config of the last successful sync, in its order:
 * cfg->vips[v].backends[i]'s pair is pairs[first[v] + i]. Rebuilt by
 * every sync and emptied by a failed one; pairs are freed only by a sync
 * or destroy, so the pointers are always live (index.c). */
struct health_index {
	uint32_t n_vips;                /* 0: no index */
	uint32_t *first;                /* n_vips + 1 offsets */
	struct health_pair **pairs;
};

struct mlv_health {
	struct mlv_health_options opts;
	int ep;                         /* the epoll fd the daemon watches */
	int tfd;                        /* timerfd, in ep */
	uint64_t armed_ns;              /* timerfd expiry; 0 = disarmed */
	uint64_t rng;                   /* splitmix64 state */
	uint32_t sync_count;

	struct health_htable pairs, probes, vips;
	struct health_index index;

	struct health_probe **heap;     /* min-heap on due_ns */
	uint32_t heap_n, heap_cap;
	struct health_probe *wait_head, *wait_tail;
	uint32_t n_waiting;

	struct health_conn **conns;     /* every conn ever made, by index */
	uint32_t n_conns;
	struct health_conn *free_conns;
	uint32_t in_flight;
	uint32_t max_in_flight;

	/* The batch being collected by process(): probes that changed
	 * state, VIPs whose down count moved; and the arrays handed to the
	 * callback, kept for reuse. */
	struct health_probe **changed;
	uint32_t n_changed, cap_changed;
	struct health_vip **touched;
	uint32_t n_touched, cap_touched;
	bool batch_lost;                /* out of memory while collecting */
	struct mlv_health_event *events;
	uint32_t cap_events;
	struct mlv_health_vip_event *vip_events;
	uint32_t cap_vip_events;

	uint64_t counters[MLV_HEALTH_CTR__COUNT];
	char error[256];
};

/* ---- min-heap of probes (heap.c) ---- */
/* Put p in the heap at due, or move it there if it is already in. */
enum mlv_err health_heap_set(struct mlv_health *h, struct health_probe *p,
			     uint64_t due_ns);
void health_heap_remove(struct mlv_health *h, struct health_probe *p);
static inline struct health_probe *health_heap_top(const struct mlv_health *h)
{
	return h->heap_n ? h->heap[0] : NULL;
}

/* ---- the model (model.c): keys, look-ups, clocks; reads only ---- */
uint64_t health_pair_hash(const char *vip, const char *backend);
uint64_t health_vip_hash(const char *vip);
/* Field by field, so struct padding never reaches the hash. */
uint64_t health_spec_hash(const struct health_spec *s);
bool health_spec_equal(const struct health_spec *a,
		       const struct health_spec *b);
struct health_pair *health_pair_find(const struct mlv_health *h,
				     const char *vip, const char *backend);
struct health_vip *health_vip_find(const struct mlv_health *h,
				   const char *vip);
/* The probe whose spec equals s (hash: health_spec_hash(s)), or NULL. */
struct health_probe *health_probe_find(const struct mlv_health *h,
				       const struct health_spec *s,
				       uint64_t hash);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t health_now_ns(void);
/* CLOCK_REALTIME in milliseconds, for status. */
int64_t health_unix_ms(void);
/* Effective state of a pair, as mlv_health_is_up answers. */
bool health_pair_effective(const struct mlv_health *h,
			   const struct health_pair *pair);
bool health_vip_all_down(const struct health_vip *v);

/* ---- when probes check (schedule.c) ---- */
/* A new probe's first check comes after a random phase below this (or
 * below its interval if shorter): soon enough that a freshly started
 * load balancer learns about dead backends at once, spread enough that
 * 100,000 probes do not all connect in the same millisecond. A check that
 * starts late because the control thread was busy is spread the same way. */
#define HEALTH_FIRST_CHECK_SPREAD_MS 250u
/* Uniform in [0, bound); 0 when bound is 0. */
uint64_t health_random(struct mlv_health *h, uint64_t bound);
/* Schedule p's first check: a random phase in [0, min(interval, 250ms)). */
enum mlv_err health_schedule_first(struct mlv_health *h, struct health_probe *p,
				   uint64_t now);
/* p's check has finished (started_ns set): schedule the next, one
 * interval +- jitter after that start, or postpone it if that has passed. */
void health_schedule_next(struct mlv_health *h, struct health_probe *p,
			  uint64_t now);
/* p's start is due: if it missed its time by more than the jitter and was
 * not postponed for that already, postpone it and return true. */
bool health_postpone_if_late(struct mlv_health *h, struct health_probe *p,
			     uint64_t now);
/* Append p to the wait list (leaving the heap) / take it out. */
void health_wait_push(struct mlv_health *h, struct health_probe *p);
void health_wait_remove(struct mlv_health *h, struct health_probe *p);
/* Arm the timerfd for the earliest due time (now if waiters can start). */
void health_rearm(struct mlv_health *h, uint64_t now);

/* ---- results (result.c) ---- */
/* A check of p reached its verdict (its conn already returned): count
 * it, observe its duration, apply rise/fall, schedule the next one. */
void health_probe_finish(struct mlv_health *h, struct health_probe *p,
			 enum mlv_health_result r, const char *result,
			 uint64_t now);
/* Report what this process() call changed, in one callback. */
void health_batch_emit(struct mlv_health *h);

/* ---- creating and freeing (sync.c) ---- */
/* Free every pair, probe and VIP (at destroy). */
void health_model_free(struct mlv_health *h);

/* ---- check durations (durations.c) ---- */
/* Count one check of duration ns that ended with r. */
void health_tally_observe(struct health_tally *t, uint64_t ns,
			  enum mlv_health_result r);
/* pair's own figures: its probe's tally plus its offset (just the offset
 * while it has no probe, which is zero for a new pair). */
void health_pair_tally(const struct health_pair *pair,
		       struct health_tally *out);
/* pair has just joined its probe, having counted was before: set its
 * offset so that its figures are was again. */
void health_pair_rebase(struct health_pair *pair,
			const struct health_tally *was);

/* ---- the config-order index (index.c) ---- */
/* Size the index for cfg, every entry NULL. Without memory the index is
 * left empty (look-ups then go by name): no error, only slower. */
void health_index_begin(struct mlv_health *h, const struct mlv_config *cfg);
/* cfg->vips[v].backends[i]'s pair, found or made by this sync. */
void health_index_set(struct mlv_health *h, uint32_t v, uint32_t i,
		      struct health_pair *pair);
/* Forget the index (after a failed sync; at destroy). */
void health_index_clear(struct mlv_health *h);

/* ---- checks on the wire (probe.c) ---- */
/* Start a check of p now: open a socket and connect. Takes a conn from
 * the pool; puts p at the end of the wait list instead if none is free or
 * other probes wait already (p itself may be the head of that list). A
 * check that ends at once (refused, unreachable) is finished before
 * returning. */
void health_check_start(struct mlv_health *h, struct health_probe *p,
			uint64_t now);
/* epoll reported events on the conn tagged data. */
void health_check_event(struct mlv_health *h, uint64_t data, uint32_t events,
			uint64_t now);
/* p's deadline passed while it was running. */
void health_check_timeout(struct mlv_health *h, struct health_probe *p,
			  uint64_t now);
/* Close p's conn (if any) and return it to the pool. */
void health_check_abort(struct mlv_health *h, struct health_probe *p);
/* Stop whatever p is doing (close its socket, leave heap and wait list). */
void health_probe_stop(struct mlv_health *h, struct health_probe *p);
/* Free the conn pool (at destroy). */
void health_conns_free(struct mlv_health *h);

/* ---- HTTP text (http.c): pure functions ---- */
/* Write the request for spec (host header: spec->host, or the address,
 * with ":port" unless 80) into buf. Returns its length, or 0 if it does
 * not fit. */
size_t health_http_request(const struct health_spec *spec, char *buf,
			   size_t len);

enum health_http_parse {
	HTTP_NEED_MORE,     /* a valid prefix so far */
	HTTP_STATUS,        /* *status set */
	HTTP_MALFORMED,
};
/* Parse the start of a response: "HTTP/" DIGIT "." DIGIT SP 3DIGIT,
 * followed by SP, CR or LF. Decides as early as the bytes allow. */
enum health_http_parse health_http_parse_status(const char *buf, size_t len,
						uint16_t *status);

/* dns (dns.c): the query for name (type A, class IN, recursion desired)
 * with id into buf; its length, or 0 if the name is not a DNS name or
 * does not fit. */
size_t health_dns_query(const char *name, uint16_t id, uint8_t *buf,
			size_t len);
/* Whether name is a DNS name health_dns_query takes: labels of 1..63
 * letters, digits, '-' or '_', at most 253 bytes, an optional final dot. */
bool health_dns_name_ok(const char *name);

enum health_dns_reply {
	DNS_ANSWER,         /* a reply to our query; *rcode is its RCODE */
	DNS_NOT_OURS,       /* too short, not a response, another id or
			       question */
};

/* Whether buf (len bytes) answers query (the bytes health_dns_query
 * wrote): a response with its id and its question. */
enum health_dns_reply health_dns_parse(const uint8_t *buf, size_t len,
				       const uint8_t *query, size_t query_len,
				       uint8_t *rcode);

/* "NOERROR", "SERVFAIL", ..., or "RCODE n". */
const char *health_dns_rcode_name(uint8_t rcode, char *buf, size_t len);

/* Copy up to len bytes of data into out (out_len bytes) as printable
 * text, other bytes as '?'. Returns out. */
char *health_printable(const char *data, size_t len, char *out,
		       size_t out_len);

/* Whether text is usable in the request line or a header value. */
bool health_http_path_ok(const char *path);
bool health_http_host_ok(const char *host);

#endif
