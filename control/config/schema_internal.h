/* SPDX-License-Identifier: BSD-3-Clause */
/* The config schema: one table per YAML mapping saying, for every key,
 * its type, where it lands in the model, its default (as YAML text, the
 * same text docs/config.md shows), its range and whether it is required.
 * apply.c walks a YAML tree with these tables, convert.c
 * turns scalars into fields, validate.c holds the cross-field
 * checks the tables hook in, and the unit tests walk the tables to check
 * that docs/config.md lists every key with its default.
 *
 * Internal to the config loader. The tables are constant; the walk runs
 * on whichever thread loads a config.
 */
#ifndef MLV_CONFIG_SCHEMA_H
#define MLV_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/config/config.h"
#include "control/config/yaml_tree_internal.h"

#define MLV_CFG_MAX_KEYS 32          /* keys in one mapping table */
#define MLV_CFG_MAX_EAL_ARGS 256
#define MLV_CFG_SOCKET_PATH_MAX 107  /* sun_path holds 108 bytes with NUL */
#define MLV_CFG_MAX_MBUFS 16777216   /* 32 GiB of 2 KiB mbufs per pool */
#define MLV_CFG_NO_OFFSET ((size_t)-1)

enum mlv_cfg_type {
	MLV_CT_STRING,      /* char[size]; length min..max (max 0 = size-1) */
	MLV_CT_NAME,        /* a STRING limited to [A-Za-z0-9][A-Za-z0-9._-]* */
	MLV_CT_UINT,        /* unsigned of size 1, 2 or 4 bytes; min..max */
	MLV_CT_BOOL,
	MLV_CT_DURATION,    /* uint32_t milliseconds; min..max in ms */
	MLV_CT_ENUM,        /* int (or uint8_t if size 1); names in sub */
	MLV_CT_IP,          /* struct mlv_ip; min = required MLV_AF_* or 0 */
	MLV_CT_MAC,         /* struct mlv_mac; aux = offset of its bool has_mac */
	MLV_CT_NEXT_HOP,    /* "auto" or a MAC: bool at offset, mac at aux */
	MLV_CT_FILE_MODE,   /* uint32_t; octal text, never world-writable */
	MLV_CT_HOST_PORT,   /* char[size]: "ip:port", "[ip6]:port" or "" */
	MLV_CT_TABLE_SIZE,  /* uint32_t Maglev table size: a prime in range */
	MLV_CT_LOAD_FACTOR, /* double: 0 (off) or a decimal in min..max
			       thousandths, e.g. 1.25 */
	MLV_CT_PORT_SPEC,   /* uint16_t port at offset, uint16_t last port
			       at aux: an integer, "A-B" or any
			       (control/config/port_spec.c) */
	MLV_CT_MSS_CLAMP,   /* uint16_t: auto, off or an MSS in min..max
			       (config.h, MLV_MSS_CLAMP_*) */
	MLV_CT_STRING_LIST, /* char ** at offset, uint32_t count at aux */
	MLV_CT_PREFIX_LIST, /* struct mlv_acl_prefix_config * at offset,
			       uint32_t count at aux; at most max entries */
	MLV_CT_PREFIX,      /* struct mlv_ip_prefix; min = its MLV_AF_*,
			       max = the shortest length taken */
	MLV_CT_MAP,         /* nested struct at offset; sub = mlv_cfg_map */
	MLV_CT_LIST,        /* array pointer at offset, uint32_t count at aux;
			       sub = mlv_cfg_list */
};

struct mlv_cfg_enum {
	const char *name;
	int value;
};

struct mlv_cfg_key {
	const char *name;
	enum mlv_cfg_type type;
	size_t offset;
	size_t aux;
	size_t size;
	int64_t min;
	int64_t max;
	const char *def;         /* default as YAML text; NULL = none */
	const char *doc_default; /* docs text when def is NULL ("" = none) */
	bool required;
	bool restart_only;       /* on top-level keys: applies to the section */
	const void *sub;         /* mlv_cfg_enum[], mlv_cfg_map or mlv_cfg_list */
};

struct mlv_cfg_ctx;
struct mlv_cfg_seen;

struct mlv_cfg_map {
	const char *what;        /* "a VIP", for messages */
	const char *doc_name;    /* documented once under this name, or NULL */
	const struct mlv_cfg_key *keys;
	unsigned n_keys;
	/* Cross-field checks once every key of one mapping was converted. */
	void (*finish)(struct mlv_cfg_ctx *ctx, void *obj,
		       const struct mlv_cfg_seen *seen);
};

struct mlv_cfg_list {
	const char *item;        /* "VIP", for messages */
	const char *items;       /* "VIPs" */
	size_t elem_size;
	size_t pos_offset;       /* struct mlv_src_pos in the element, or NO_OFFSET */
	uint32_t max;
	const struct mlv_cfg_map *elem;
	/* Called after the key defaults are applied to a new element and
	 * before its mapping is walked (e.g. to inherit defaults.*). */
	void (*init)(struct mlv_cfg_ctx *ctx, void *elem);
};

/* What one mapping walk saw, for finish hooks. */
struct mlv_cfg_seen {
	const struct mlv_cfg_map *map;
	const struct mlv_ynode *node;     /* the mapping (or a null scalar) */
	const struct mlv_ynode *values[MLV_CFG_MAX_KEYS];
	bool bad[MLV_CFG_MAX_KEYS];       /* missing-required or rejected */
};

struct mlv_cfg_ctx {
	struct mlv_config *cfg;
	struct mlv_diags *diags;
	bool nomem;
	/* a transmitting port without an address of this family was reported
	 * (once, at the first backend that needs one) */
	bool tx_family_reported[2];
};

extern const struct mlv_cfg_map mlv_cfg_root;
/* ipip, gue, l2dsr (lookup.c) */
extern const struct mlv_cfg_enum mlv_cfg_forwarding_names[];

/* Walk a top-level mapping into cfg (which must be zeroed), applying
 * defaults first. Errors go to ctx->diags; ctx->nomem on allocation
 * failure. The caller frees cfg on errors. */
void mlv_cfg_apply(struct mlv_cfg_ctx *ctx, const struct mlv_ynode *root);

/* Helpers for the walk and its finish hooks (report.c). */
/* The index of key name in map's keys, or -1. */
int mlv_cfg_key_index(const struct mlv_cfg_map *map, const char *name);
void mlv_cfg_error(struct mlv_cfg_ctx *ctx, struct mlv_src_pos pos,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mlv_cfg_warn(struct mlv_cfg_ctx *ctx, struct mlv_src_pos pos,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The value node of key in a walked mapping, or NULL. */
const struct mlv_ynode *mlv_cfg_value(const struct mlv_cfg_seen *seen,
				      const char *key);
/* True if key was given and accepted. */
bool mlv_cfg_given(const struct mlv_cfg_seen *seen, const char *key);
/* True unless key was given (or required) and rejected. */
bool mlv_cfg_usable(const struct mlv_cfg_seen *seen, const char *key);
/* Position of key's value if given, else of the mapping. */
struct mlv_src_pos mlv_cfg_pos(const struct mlv_cfg_seen *seen,
			       const char *key);
/* Position of key's value inside a list item mapping, else the item's. */
struct mlv_src_pos mlv_cfg_item_pos(const struct mlv_ynode *item,
				    const char *key);

/* convert.c: */

/* Convert the non-null scalar n for key k into its field in obj. Reports
 * its own errors; returns false if the value was rejected. */
bool mlv_cfg_convert_scalar(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			    const struct mlv_ynode *n, void *obj);
/* "an integer", "a duration", ... for "must be X" messages. */
const char *mlv_cfg_type_desc(const struct mlv_cfg_key *k);
/* An enum key's choices as "ipip, gue or l2dsr" in buf. */
const char *mlv_cfg_enum_choices(const struct mlv_cfg_key *k, char *buf,
				 size_t len);
/* port_spec.c: a VIP's port (MLV_CT_PORT_SPEC) into obj. */
bool mlv_cfg_convert_port_spec(struct mlv_cfg_ctx *ctx,
			       const struct mlv_cfg_key *k,
			       const struct mlv_ynode *n, void *obj);
/* "500ms", "1s", "5m", "1h": the largest exact unit. */
const char *mlv_cfg_format_duration(uint32_t ms, char *buf, size_t len);

/* What converting one entry of a list of scalars did (apply.c walks the
 * list: its length, each entry a non-null scalar). */
enum mlv_cfg_item {
	MLV_CFG_ITEM_OK,      /* *elem filled */
	MLV_CFG_ITEM_BAD,     /* refused, with an error at the entry */
	MLV_CFG_ITEM_NOMEM,
};
typedef enum mlv_cfg_item (*mlv_cfg_item_fn)(struct mlv_cfg_ctx *ctx,
					     const struct mlv_cfg_key *k,
					     const struct mlv_ynode *it,
					     void *elem);

/* acl.c: */

/* One entry of a list of CIDR prefixes for key k (MLV_CT_PREFIX_LIST)
 * into a struct mlv_acl_prefix_config at elem. */
enum mlv_cfg_item mlv_cfg_prefix_item(struct mlv_cfg_ctx *ctx,
				      const struct mlv_cfg_key *k,
				      const struct mlv_ynode *it, void *elem);
/* One CIDR prefix for key k (MLV_CT_PREFIX) into the struct
 * mlv_ip_prefix at dst: of family k->min, at least k->max bits long, no
 * address bits past its length. Returns false, with an error at n, when
 * refused (dst untouched). */
bool mlv_cfg_convert_prefix(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			    const struct mlv_ynode *n, struct mlv_ip_prefix *dst);
/* A VIP's finish-hook checks of its allow / deny lists: the VIP's
 * family, no prefix in both lists, at most MLV_VIP_ACL_MAX in all. */
void mlv_cfg_check_acl(struct mlv_cfg_ctx *ctx, struct mlv_vip_config *vip,
		       const struct mlv_cfg_seen *seen);

static inline void *mlv_cfg_field(void *obj, size_t offset)
{
	return (char *)obj + offset;
}

#endif
