/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-socket commands as data: names, arguments, one-line help.
 * One table serves both ends, so the daemon (control/ctl/commands.c) and
 * maglevctl (tools/bin/maglevctl) can never disagree on what a command takes,
 * and no help text exists twice. The protocol: docs/control-protocol.md.
 *
 * Arguments travel as the request's "args" object. Every argument has a
 * name (the JSON key) and a type; on maglevctl's command line the
 * non-flag arguments are positional, in table order, and flags are
 * --names with '_' written as '-' (per_worker <-> --per-worker).
 *
 * Threads: the table is constant; every function is pure and may be
 * called from any thread.
 */
#ifndef MLV_CTL_SPEC_H
#define MLV_CTL_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* X(ID, name, one-line help). The handler of command ID in the daemon is
 * mlv_ctl_cmd_<name> (control/ctl/commands.c); a missing handler does not
 * compile. */
#define MLV_CTL_COMMANDS(X)                                                  \
	X(HELP,     help,     "list the commands and their arguments")       \
	X(STATUS,   status,   "version, uptime, generation, config, workers, ports, overrides, reloads") \
	X(VIPS,     vips,     "every VIP: address, ports, features, table fingerprint, backends, counters") \
	X(BACKENDS, backends, "backends of one VIP (or all): address, weight, state, slots, active connections, counters") \
	X(STATS,    stats,    "every worker counter and drop reason, summed or per worker") \
	X(TABLE,    table,    "a VIP's Maglev table: size, fingerprint, slots per backend") \
	X(LOOKUP,   lookup,   "the backend a new flow from SRC:SPORT to the VIP would get") \
	X(CONNS,    conns,    "tracked flows (client, VIP, backend, state, idle time, worker), paged: --limit N, --cursor C") \
	X(RELOAD,   reload,   "re-read the config file and publish it; an invalid file, or one beyond the reload budget, changes nothing") \
	X(DRAIN,    drain,    "runtime override: no new flows to BACKEND, established ones stay") \
	X(UNDRAIN,  undrain,  "clear a runtime drain override") \
	X(WEIGHT,   weight,   "show BACKEND's weights, set a runtime weight override, or --reset it") \
	X(WHATIF,   whatif,   "fraction of the VIP's slots and tracked connections that would move if BACKEND were removed or added") \
	X(HEALTH,   health,   "health checks per backend: verdict, last result and error, transition times") \
	X(SHUTDOWN, shutdown, "stop: withdraw every VIP route, keep forwarding for announce.drain_time, then exit (--now: exit at once)")

enum mlv_ctl_cmd {
#define MLV_CTL_CMD_ENUM(id, name, help) MLV_CTL_CMD_##id,
	MLV_CTL_COMMANDS(MLV_CTL_CMD_ENUM)
#undef MLV_CTL_CMD_ENUM
	MLV_CTL_CMD__COUNT
};

enum mlv_ctl_arg_type {
	MLV_CTL_ARG_STRING,   /* JSON string */
	MLV_CTL_ARG_UINT,     /* JSON integer in 0..max */
	MLV_CTL_ARG_FLAG,     /* JSON boolean; a --flag on the command line */
};

struct mlv_ctl_arg_spec {
	const char *name;
	enum mlv_ctl_arg_type type;
	bool required;
	uint64_t max;                 /* UINT: largest value accepted */
	const char *const *choices;   /* STRING: NULL-terminated allowed
					 values, or NULL for any */
	const char *help;
};

struct mlv_ctl_cmd_spec {
	enum mlv_ctl_cmd id;
	const char *name;
	const char *help;
	uint32_t n_args;
	const struct mlv_ctl_arg_spec *args;
};

/* The table, indexed by enum mlv_ctl_cmd. */
extern const struct mlv_ctl_cmd_spec mlv_ctl_cmd_specs[MLV_CTL_CMD__COUNT];

/* The command called name, or NULL. */
const struct mlv_ctl_cmd_spec *mlv_ctl_cmd_find(const char *name);

/* "weight VIP BACKEND [WEIGHT] [--reset]" into buf (always terminated,
 * truncated if len is too small). Returns buf. */
const char *mlv_ctl_synopsis(const struct mlv_ctl_cmd_spec *cmd, char *buf,
			     size_t len);

/* Check a request's args (NULL = none given) against cmd: an object, no
 * unknown keys, every required argument present, every value of its type
 * and range. Returns true, or false with a sentence naming the problem in
 * err (always terminated). */
bool mlv_ctl_args_check(const struct mlv_ctl_cmd_spec *cmd,
			const json_t *args, char *err, size_t len);

/* Turn command-line words (after the command name) into an args object
 * for cmd: positional words fill the non-flag arguments in order, --flag
 * words set flags, UINT words must be decimal numbers. Returns a new
 * object, or NULL with a sentence in err (unknown flag, too many or too
 * few words, a bad number, out of memory). The result passes
 * mlv_ctl_args_check. */
json_t *mlv_ctl_args_from_argv(const struct mlv_ctl_cmd_spec *cmd, int argc,
			       char *const *argv, char *err, size_t len);

/* How argument a is written on the command line ("VIP", "remove|add",
 * "--per-worker") into buf (always terminated). Returns buf. */
const char *mlv_ctl_arg_word(const struct mlv_ctl_arg_spec *a, char *buf,
			     size_t len);

/* The argument called name in cmd, or NULL. */
const struct mlv_ctl_arg_spec *mlv_ctl_arg_find(
	const struct mlv_ctl_cmd_spec *cmd, const char *name);

#endif
