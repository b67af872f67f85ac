/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the control-socket commands (commands.c, cmd_*.c):
 * the handlers and the helpers they share. Control thread only. */
#ifndef MLV_CTL_CMD_H
#define MLV_CTL_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "control/ctl/commands.h"
#include "control/generation/moves.h"
#include "control/protocol/spec.h"

/* One handler per command in MLV_CTL_COMMANDS: args has passed
 * mlv_ctl_args_check (it may be NULL when the request had none). Returns
 * the reply, or NULL when memory ran out. */
#define MLV_CTL_CMD_DECL(id, name, help) \
	json_t *mlv_ctl_cmd_##name(struct mlv_ctl_state *st, const json_t *args);
MLV_CTL_COMMANDS(MLV_CTL_CMD_DECL)
#undef MLV_CTL_CMD_DECL

/* {"ok": true} */
json_t *mlv_ctl_ok(void);
/* {"ok": false, "error": <formatted>} */
json_t *mlv_ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Typed argument access; absent arguments give NULL / false. */
const char *mlv_ctl_arg_str(const json_t *args, const char *name);
bool mlv_ctl_arg_flag(const json_t *args, const char *name);
bool mlv_ctl_arg_uint(const json_t *args, const char *name, uint64_t *out);

/* The current generation, or NULL if none or no callback. */
const struct mlv_generation *mlv_ctl_gen(const struct mlv_ctl_state *st);
const struct mlv_config *mlv_ctl_config(const struct mlv_ctl_state *st);

/* The generation, and in it the VIP called args.vip: NULL with *reply set
 * to the error reply when either is missing. */
const struct mlv_gen_vip *mlv_ctl_need_vip(const struct mlv_ctl_state *st,
					   const json_t *args,
					   const struct mlv_generation **gen,
					   json_t **reply);

/* Text forms: "192.0.2.10", "0x0123456789abcdef" (protocols:
 * mlv_proto_name, control/base/addr.h). */
const char *mlv_ctl_vip_addr(const struct mlv_gen_vip *vip, char *buf,
			     size_t len);
/* 64-bit values do not survive JSON numbers (doubles): hex text. */
json_t *mlv_ctl_fingerprint(uint64_t fp);

/* Health and overrides of (vip, backend) from st->backend_state;
 * defaults (healthy, no override) without a callback. */
void mlv_ctl_backend_state(const struct mlv_ctl_state *st, const char *vip,
			   const char *backend, struct mlv_gen_backend_state *out);

/* "active", "draining" or "down". */
const char *mlv_ctl_backend_state_name(const struct mlv_gen_backend *b);

/* Set one key per flow counter (dataplane/packet/counters.h names) into
 * obj. Returns false when memory ran out. */
bool mlv_ctl_set_flow_counters(json_t *obj, const struct mlv_flow_counters *c);

/* A conntrack state as replies name it (docs/control-protocol.md). */
const char *mlv_ctl_ct_state_name(uint8_t state);

/* Slots per backend of vip: [n_backends] counts, plus [n_backends] for
 * slots without a backend. calloc'd; NULL when memory ran out. */
uint32_t *mlv_ctl_count_slots(const struct mlv_gen_vip *vip);

/* A JSON array made as text, item by item: a tenth of the memory of
 * jansson's objects, and copied into the reply once (struct
 * mlv_ctl_member) instead of dumped and freed item by item at the end.
 * Zeroed is empty. */
struct mlv_ctl_text {
	char *buf;                          /* "[item,item" so far */
	size_t len, cap;
	uint32_t items;
};

/* Append item (stolen; NULL: out of memory) or an integer. Return 0,
 * or -1 when memory ran out. */
int mlv_ctl_text_add(struct mlv_ctl_text *t, json_t *item);
int mlv_ctl_text_add_int(struct mlv_ctl_text *t, long long v);
/* Close the array: buf then holds one JSON value of len bytes. Returns
 * 0, or -1 when memory ran out. */
int mlv_ctl_text_close(struct mlv_ctl_text *t);
void mlv_ctl_text_free(struct mlv_ctl_text *t);

/* Items per step: a step takes well under a millisecond either way
 * (slot numbers, or objects such as a backend's that jansson builds and
 * dumps at some microseconds each). */
#define MLV_CTL_STEP_SLOTS   8192u
#define MLV_CTL_STEP_OBJECTS 64u

/* A reply built in steps, one or more per poll of a deferred reply
 * within the server's heavy slice (control/ctl/server.h), so that a dump
 * of a large generation holds the control thread for one slice at a
 * time and other requests are answered between. Each step appends
 * MLV_CTL_STEP_* items to the dump's array (text). The steps read the
 * generation the dump began with; a reload in between ends the dump
 * with an error saying so. */
struct mlv_ctl_steps;

/* What a kind of dump does at each step (one static const per command). */
struct mlv_ctl_steps_kind {
	const char *key;                    /* the array's member name */
	/* Append a step's items to text and advance the cursors.
	 * Returns 1 when the dump is complete, 0 for more steps, -1 when
	 * memory ran out. */
	int (*step)(struct mlv_ctl_steps *s);
	/* The reply without the array member, or NULL. */
	json_t *(*finish)(struct mlv_ctl_steps *s);
	void (*release)(struct mlv_ctl_steps *s);   /* of priv; may be NULL */
};

struct mlv_ctl_steps {
	const struct mlv_ctl_steps_kind *kind;
	struct mlv_ctl_state *st;
	const struct mlv_generation *gen;   /* compared, deref'd only while
					       it is still the current one */
	uint32_t generation;
	bool failed;                        /* the reply is an error */
	struct mlv_ctl_text text;
	uint32_t i, j;                      /* the step's cursors */
	void *priv;
};

/* Run a dump of kind over the current generation, with priv (the
 * dump's to release through kind->release from then on, even on
 * failure) and the cursor j: its first step now; the rest as a deferred
 * reply through st->defer, or all at once without one. Returns the
 * reply, or NULL for deferred or out of memory. */
json_t *mlv_ctl_run_steps(struct mlv_ctl_state *st,
			  const struct mlv_ctl_steps_kind *kind, void *priv,
			  uint32_t j);

/* The rates object of the `stats` reply from st->rates: per-second
 * rates of every counter and drop reason over the last sample interval
 * (a counter that went backwards rates 0), or JSON null until two
 * samples exist. NULL when memory ran out. */
json_t *mlv_ctl_rates_json(const struct mlv_ctl_state *st);

#endif
