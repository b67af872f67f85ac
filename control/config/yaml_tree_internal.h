/* SPDX-License-Identifier: BSD-3-Clause */
/* A YAML document as a small node tree with source positions, built from
 * libyaml's event API.
 *
 * Why not libyaml's own document loader (yaml_parser_load): it expands
 * aliases into shared nodes, which makes a "billion laughs" file cheap to
 * write and expensive to walk, and it gives no simple way to bound depth
 * or node count. Building from events lets us refuse anchors and aliases
 * outright, cap nesting and size, and keep a line:col for every node.
 *
 * Internal to the config loader. Not thread-safe per tree; separate trees
 * are independent.
 */
#ifndef MLV_YAML_TREE_H
#define MLV_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/config/config.h"

#define MLV_YAML_MAX_DEPTH 32        /* nested sequences/mappings */
#define MLV_YAML_MAX_NODES (4u << 20) /* bounds memory on hostile files */

enum mlv_ynode_kind {
	MLV_YNODE_SCALAR,
	MLV_YNODE_SEQ,
	MLV_YNODE_MAP,
	MLV_YNODE_INVALID,   /* a refused alias or tagged scalar: already
				reported, skip it */
};

struct mlv_ynode {
	enum mlv_ynode_kind kind;
	struct mlv_src_pos pos;
	/* Next item of the parent sequence, or next value of the parent
	 * mapping. */
	struct mlv_ynode *next;
	/* In a mapping: this value's key (any kind; only scalar keys are
	 * valid and others were reported). NULL elsewhere. */
	struct mlv_ynode *key;
	/* Scalars: NUL-terminated text (may also contain NULs from "\0"
	 * escapes, hence len); plain = written without quotes or !!str. */
	const char *text;
	uint32_t len;
	bool plain;
	/* Sequences: items; mappings: values (each with ->key). */
	uint32_t n;
	struct mlv_ynode *first;
	struct mlv_ynode *last;
};

struct mlv_ytree;

/* Parse data[0..len) as at most one YAML document, the text of file
 * number `file` (struct mlv_src_pos: 0 the main file), which every node
 * and error position carries. Problems go to diags as errors with
 * line:col. Returns:
 *  - MLV_OK: *out holds a tree (free with mlv_ytree_free); its root is
 *    NULL for an empty stream. Errors that leave the structure usable
 *    (anchors, aliases, tags, non-scalar keys, a second document) may
 *    have been added to diags; the caller checks diags->n_errors.
 *  - MLV_E_CONFIG: libyaml could not parse the text, or a depth/node cap
 *    was hit; *out is NULL and diags says where.
 *  - MLV_E_NOMEM.
 */
enum mlv_err mlv_ytree_parse(const char *data, size_t len, uint32_t file,
			     struct mlv_diags *diags, struct mlv_ytree **out);

const struct mlv_ynode *mlv_ytree_root(const struct mlv_ytree *t);

/* Move the items of the sequence `items` (of another tree, which must
 * outlive t's use) to the end of the sequence under `key` (a string that
 * outlives t) in t's root mapping, which gets that key, at its own
 * position, if it has none (a null value becomes an empty sequence).
 * MLV_E_INVAL if the root is not a mapping or the key's value is another
 * scalar or a mapping; MLV_E_NOMEM. */
enum mlv_err mlv_ytree_append_items(struct mlv_ytree *t, const char *key,
				    struct mlv_ynode *items);
void mlv_ytree_free(struct mlv_ytree *t);

/* The value under scalar key `key` in a mapping (first occurrence), or
 * NULL if absent or map is not a mapping. */
const struct mlv_ynode *mlv_ynode_get(const struct mlv_ynode *map,
				      const char *key);

/* True for a plain empty scalar, "~" or "null": a key with no value. */
bool mlv_ynode_is_null(const struct mlv_ynode *n);

/* "a string", "a list", "a mapping", ... for "must be X, got Y" messages. */
const char *mlv_ynode_kind_name(const struct mlv_ynode *n);

#endif
