/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-socket command table and the argument rules both ends
 * share (spec.h). */
#include "control/protocol/spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/tables/maglev.h"

#define ARG_VIP(req, text) \
	{ .name = "vip", .type = MLV_CTL_ARG_STRING, .required = (req), .help = (text) }
#define ARG_BACKEND \
	{ .name = "backend", .type = MLV_CTL_ARG_STRING, .required = true, \
	  .help = "backend name within the VIP" }

static const struct mlv_ctl_arg_spec backends_args[] = {
	ARG_VIP(false, "only this VIP's backends (default: every VIP)"),
};
static const struct mlv_ctl_arg_spec stats_args[] = {
	{ .name = "per_worker", .type = MLV_CTL_ARG_FLAG,
	  .help = "also list each worker's counters" },
	{ .name = "ports", .type = MLV_CTL_ARG_FLAG,
	  .help = "also list every extended NIC counter (xstats) of each port" },
};
static const struct mlv_ctl_arg_spec table_args[] = {
	ARG_VIP(true, "VIP name"),
	{ .name = "dump", .type = MLV_CTL_ARG_FLAG,
	  .help = "include the whole slot -> backend map" },
	{ .name = "hops", .type = MLV_CTL_ARG_FLAG,
	  .help = "include each slot's backend and second-chance hops (a second_chance VIP)" },
};
static const struct mlv_ctl_arg_spec lookup_args[] = {
	ARG_VIP(true, "VIP name"),
	{ .name = "src", .type = MLV_CTL_ARG_STRING, .required = true,
	  .help = "client address (same family as the VIP)" },
	{ .name = "sport", .type = MLV_CTL_ARG_UINT, .required = true,
	  .max = 65535, .help = "client port" },
	{ .name = "dport", .type = MLV_CTL_ARG_UINT, .max = 65535,
	  .help = "VIP port (a range or any VIP; default: its first port)" },
};
/* The largest page `conns` returns. */
#define CONNS_MAX_LIMIT 10000
static const struct mlv_ctl_arg_spec conns_args[] = {
	ARG_VIP(false, "only this VIP's flows (default: every VIP)"),
	{ .name = "backend", .type = MLV_CTL_ARG_STRING,
	  .help = "only flows to this backend" },
	{ .name = "limit", .type = MLV_CTL_ARG_UINT, .max = CONNS_MAX_LIMIT,
	  .help = "at most this many flows (default 100, at most 10000)" },
	{ .name = "cursor", .type = MLV_CTL_ARG_STRING,
	  .help = "go on from where the previous page stopped (its \"next\")" },
};
static const struct mlv_ctl_arg_spec backend_args[] = {
	ARG_VIP(true, "VIP name"),
	ARG_BACKEND,
};
static const struct mlv_ctl_arg_spec weight_args[] = {
	ARG_VIP(true, "VIP name"),
	ARG_BACKEND,
	{ .name = "weight", .type = MLV_CTL_ARG_UINT,
	  .max = MLV_MAGLEV_MAX_WEIGHT,
	  .help = "new weight (0 = no new flows); omit to show the weights" },
	{ .name = "reset", .type = MLV_CTL_ARG_FLAG,
	  .help = "drop the runtime weight override" },
};
static const struct mlv_ctl_arg_spec health_args[] = {
	ARG_VIP(false, "only this VIP's backends (default: every VIP)"),
};
static const char *const whatif_actions[] = { "remove", "add", NULL };
static const struct mlv_ctl_arg_spec whatif_args[] = {
	ARG_VIP(true, "VIP name"),
	{ .name = "action", .type = MLV_CTL_ARG_STRING, .required = true,
	  .choices = whatif_actions,
	  .help = "remove an existing backend or add a new one" },
	ARG_BACKEND,
	{ .name = "weight", .type = MLV_CTL_ARG_UINT,
	  .max = MLV_MAGLEV_MAX_WEIGHT,
	  .help = "add: the new backend's weight (default 100, the config default)" },
};

static const struct mlv_ctl_arg_spec reload_args[] = {
	{ .name = "dry_run", .type = MLV_CTL_ARG_FLAG,
	  .help = "load, check and show the plan; publish nothing" },
	{ .name = "force", .type = MLV_CTL_ARG_FLAG,
	  .help = "publish even beyond control.reload_budget" },
	{ .name = "file", .type = MLV_CTL_ARG_STRING,
	  .help = "with dry_run: plan this file (an absolute path the caller "
		  "may read) instead of the configured one" },
};
static const struct mlv_ctl_arg_spec shutdown_args[] = {
	{ .name = "now", .type = MLV_CTL_ARG_FLAG,
	  .help = "exit at once, without the drain time (also ends one under way)" },
};

#define ARGS(a) .n_args = sizeof(a) / sizeof((a)[0]), .args = (a)
#define NO_ARGS .n_args = 0, .args = NULL
/* Per command: its argument list, by the command's lower-case name. */
#define ARGS_help     NO_ARGS
#define ARGS_status   NO_ARGS
#define ARGS_vips     NO_ARGS
#define ARGS_backends ARGS(backends_args)
#define ARGS_stats    ARGS(stats_args)
#define ARGS_table    ARGS(table_args)
#define ARGS_lookup   ARGS(lookup_args)
#define ARGS_conns    ARGS(conns_args)
#define ARGS_reload   ARGS(reload_args)
#define ARGS_drain    ARGS(backend_args)
#define ARGS_undrain  ARGS(backend_args)
#define ARGS_weight   ARGS(weight_args)
#define ARGS_whatif   ARGS(whatif_args)
#define ARGS_shutdown ARGS(shutdown_args)
#define ARGS_health   ARGS(health_args)

const struct mlv_ctl_cmd_spec mlv_ctl_cmd_specs[MLV_CTL_CMD__COUNT] = {
#define SPEC(cid, nm, text) \
	[MLV_CTL_CMD_##cid] = { .id = MLV_CTL_CMD_##cid, .name = #nm, \
			       .help = (text), ARGS_##nm },
	MLV_CTL_COMMANDS(SPEC)
#undef SPEC
};

const struct mlv_ctl_cmd_spec *mlv_ctl_cmd_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < MLV_CTL_CMD__COUNT; i++)
		if (strcmp(mlv_ctl_cmd_specs[i].name, name) == 0)
			return &mlv_ctl_cmd_specs[i];
	return NULL;
}

const struct mlv_ctl_arg_spec *mlv_ctl_arg_find(
	const struct mlv_ctl_cmd_spec *cmd, const char *name)
{
	for (uint32_t i = 0; i < cmd->n_args; i++)
		if (strcmp(cmd->args[i].name, name) == 0)
			return &cmd->args[i];
	return NULL;
}

/* Append text to buf[*pos..len) keeping it terminated. */
static void append(char *buf, size_t len, size_t *pos, const char *text)
{
	size_t n = strlen(text);

	if (*pos + 1 >= len)
		return;
	if (n > len - 1 - *pos)
		n = len - 1 - *pos;
	memcpy(buf + *pos, text, n);
	*pos += n;
	buf[*pos] = '\0';
}

const char *mlv_ctl_arg_word(const struct mlv_ctl_arg_spec *a, char *buf,
			     size_t len)
{
	size_t pos = 0, i;

	buf[0] = '\0';
	if (a->type == MLV_CTL_ARG_FLAG) {
		append(buf, len, &pos, "--");
		for (i = 0; a->name[i] && pos + 1 < len; i++)
			buf[pos++] = a->name[i] == '_' ? '-' : a->name[i];
		buf[pos] = '\0';
	} else if (a->choices) {
		for (i = 0; a->choices[i]; i++) {
			if (i)
				append(buf, len, &pos, "|");
			append(buf, len, &pos, a->choices[i]);
		}
	} else {
		for (i = 0; a->name[i] && pos + 1 < len; i++)
			buf[pos++] = a->name[i] >= 'a' && a->name[i] <= 'z' ?
				     (char)(a->name[i] - 'a' + 'A') : a->name[i];
		buf[pos] = '\0';
	}
	return buf;
}

const char *mlv_ctl_synopsis(const struct mlv_ctl_cmd_spec *cmd, char *buf,
			     size_t len)
{
	size_t pos = 0;
	char word[64];

	if (!buf || len == 0)
		return buf;
	buf[0] = '\0';
	append(buf, len, &pos, cmd->name);
	for (uint32_t i = 0; i < cmd->n_args; i++) {
		const struct mlv_ctl_arg_spec *a = &cmd->args[i];
		bool opt = !a->required;

		mlv_ctl_arg_word(a, word, sizeof(word));
		append(buf, len, &pos, opt ? " [" : " ");
		append(buf, len, &pos, word);
		if (opt)
			append(buf, len, &pos, "]");
	}
	return buf;
}

static bool value_check(const struct mlv_ctl_arg_spec *a, const json_t *v,
			char *err, size_t len)
{
	switch (a->type) {
	case MLV_CTL_ARG_FLAG:
		if (json_is_boolean(v))
			return true;
		snprintf(err, len, "argument \"%s\" must be true or false", a->name);
		return false;
	case MLV_CTL_ARG_UINT:
		if (json_is_integer(v) && json_integer_value(v) >= 0 &&
		    (uint64_t)json_integer_value(v) <= a->max)
			return true;
		snprintf(err, len, "argument \"%s\" must be an integer from 0 to %llu",
			 a->name, (unsigned long long)a->max);
		return false;
	case MLV_CTL_ARG_STRING:
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			snprintf(err, len, "argument \"%s\" must be a non-empty string",
				 a->name);
			return false;
		}
		if (a->choices) {
			for (int i = 0; a->choices[i]; i++)
				if (strcmp(a->choices[i], json_string_value(v)) == 0)
					return true;
			char word[64];

			mlv_ctl_arg_word(a, word, sizeof(word));
			snprintf(err, len, "argument \"%s\" must be one of %s",
				 a->name, word);
			return false;
		}
		return true;
	}
	snprintf(err, len, "argument \"%s\" has an unknown type", a->name);
	return false;
}

bool mlv_ctl_args_check(const struct mlv_ctl_cmd_spec *cmd,
			const json_t *args, char *err, size_t len)
{
	const char *key;
	json_t *v;

	if (args && !json_is_object(args)) {
		snprintf(err, len, "\"args\" must be an object");
		return false;
	}
	if (args) {
		/* json_object_foreach wants a non-const object; it only reads */
		json_object_foreach((json_t *)args, key, v) {
			const struct mlv_ctl_arg_spec *a = mlv_ctl_arg_find(cmd, key);

			if (!a) {
				snprintf(err, len, "%s: unknown argument \"%s\"",
					 cmd->name, key);
				return false;
			}
			if (!value_check(a, v, err, len))
				return false;
		}
	}
	for (uint32_t i = 0; i < cmd->n_args; i++)
		if (cmd->args[i].required &&
		    !(args && json_object_get(args, cmd->args[i].name))) {
			snprintf(err, len, "%s: missing argument \"%s\"",
				 cmd->name, cmd->args[i].name);
			return false;
		}
	return true;
}

/* The flag written as word ("--per-worker"), or NULL. */
/* The argument an option word names: "--dry-run" a flag, "--limit" (a
 * value in the next word) or "--limit=5" (*value set to "5") any other.
 * NULL if the command has no such argument. */
static const struct mlv_ctl_arg_spec *option_for(const struct mlv_ctl_cmd_spec *cmd,
						 const char *word,
						 const char **value)
{
	char name[64];
	size_t i;

	*value = NULL;
	/* only the dashed spelling: "--per_worker" is not an option */
	if (strncmp(word, "--", 2) != 0)
		return NULL;
	for (i = 0; word[i + 2] && word[i + 2] != '=' && i + 1 < sizeof(name); i++) {
		if (word[i + 2] == '_')
			return NULL;
		name[i] = word[i + 2] == '-' ? '_' : word[i + 2];
	}
	name[i] = '\0';
	if (word[i + 2] == '=')
		*value = word + i + 3;
	const struct mlv_ctl_arg_spec *a = mlv_ctl_arg_find(cmd, name);

	if (!a || (a->type == MLV_CTL_ARG_FLAG && *value))
		return NULL;
	return a;
}

static json_t *word_value(const struct mlv_ctl_arg_spec *a, const char *word,
			  char *err, size_t len)
{
	unsigned long long n;
	char *end;

	if (a->type == MLV_CTL_ARG_STRING)
		return json_string(word);
	errno = 0;
	n = strtoull(word, &end, 10);
	if (word[0] < '0' || word[0] > '9' || *end || errno || n > a->max) {
		char up[64];

		mlv_ctl_arg_word(a, up, sizeof(up));
		snprintf(err, len, "%s must be a number from 0 to %llu, not \"%s\"",
			 up, (unsigned long long)a->max, word);
		return NULL;
	}
	return json_integer((json_int_t)n);
}

json_t *mlv_ctl_args_from_argv(const struct mlv_ctl_cmd_spec *cmd, int argc,
			       char *const *argv, char *err, size_t len)
{
	json_t *args = json_object(), *v;
	uint32_t next = 0;   /* next argument a positional word fills */
	char syn[256];

	if (!args) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	for (int i = 0; i < argc; i++) {
		const struct mlv_ctl_arg_spec *a = NULL;

		if (strncmp(argv[i], "--", 2) == 0) {
			const char *value;

			a = option_for(cmd, argv[i], &value);
			if (!a) {
				snprintf(err, len, "%s: unknown option %s",
					 cmd->name, argv[i]);
				goto fail;
			}
			if (a->type == MLV_CTL_ARG_FLAG) {
				v = json_true();
			} else {
				if (!value && i + 1 >= argc) {
					snprintf(err, len, "%s: %s needs a value",
						 cmd->name, argv[i]);
					goto fail;
				}
				v = word_value(a, value ? value : argv[++i], err,
					       len);
				if (!v)
					goto fail;
			}
		} else {
			/* the next argument neither a flag nor given by name */
			while (next < cmd->n_args &&
			       (cmd->args[next].type == MLV_CTL_ARG_FLAG ||
				json_object_get(args, cmd->args[next].name)))
				next++;
			if (next == cmd->n_args) {
				snprintf(err, len, "%s: unexpected \"%s\"; usage: %s",
					 cmd->name, argv[i],
					 mlv_ctl_synopsis(cmd, syn, sizeof(syn)));
				goto fail;
			}
			a = &cmd->args[next++];
			v = word_value(a, argv[i], err, len);
			if (!v)
				goto fail;
		}
		if (json_object_get(args, a->name)) {
			json_decref(v);
			snprintf(err, len, "%s: %s given twice", cmd->name,
				 a->name);
			goto fail;
		}
		if (json_object_set_new(args, a->name, v)) {
			snprintf(err, len, "out of memory");
			goto fail;
		}
	}
	if (!mlv_ctl_args_check(cmd, args, err, len)) {
		size_t used = strlen(err);

		snprintf(err + used, len - used, "; usage: %s",
			 mlv_ctl_synopsis(cmd, syn, sizeof(syn)));
		goto fail;
	}
	return args;
fail:
	json_decref(args);
	return NULL;
}
