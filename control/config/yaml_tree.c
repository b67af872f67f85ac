/* SPDX-License-Identifier: BSD-3-Clause */
/* libyaml events -> struct mlv_ynode tree. See yaml_tree_internal.h for why. */
#include "control/config/yaml_tree_internal.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "control/config/diags.h"

/* Nodes and scalar text live in one bump arena: a tree is built once,
 * never edited and freed whole, and a per-node malloc would double the
 * memory a hostile many-node file costs. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t cap;
	_Alignas(max_align_t) char data[];
};

#define ARENA_CHUNK_BYTES (64u * 1024u)

struct mlv_ytree {
	struct mlv_ynode *root;
	struct arena_chunk *chunks;
	uint32_t n_nodes;
};

static void *arena_alloc(struct mlv_ytree *t, size_t size)
{
	struct arena_chunk *c = t->chunks;
	size_t need = (size + 15u) & ~(size_t)15u;
	void *p;

	if (c == NULL || c->cap - c->used < need) {
		size_t cap = need > ARENA_CHUNK_BYTES ? need : ARENA_CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (c == NULL)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = t->chunks;
		t->chunks = c;
	}
	p = c->data + c->used;
	c->used += need;
	return p;
}

void mlv_ytree_free(struct mlv_ytree *t)
{
	struct arena_chunk *c, *next;

	if (t == NULL)
		return;
	for (c = t->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(t);
}

const struct mlv_ynode *mlv_ytree_root(const struct mlv_ytree *t)
{
	return t != NULL ? t->root : NULL;
}

const struct mlv_ynode *mlv_ynode_get(const struct mlv_ynode *map,
				      const char *key)
{
	const struct mlv_ynode *v;

	if (map == NULL || map->kind != MLV_YNODE_MAP)
		return NULL;
	for (v = map->first; v != NULL; v = v->next)
		if (v->key != NULL && v->key->kind == MLV_YNODE_SCALAR &&
		    strcmp(v->key->text, key) == 0)
			return v;
	return NULL;
}

bool mlv_ynode_is_null(const struct mlv_ynode *n)
{
	if (n == NULL || n->kind != MLV_YNODE_SCALAR || !n->plain)
		return false;
	return n->len == 0 || strcmp(n->text, "~") == 0 ||
	       strcmp(n->text, "null") == 0 || strcmp(n->text, "Null") == 0 ||
	       strcmp(n->text, "NULL") == 0;
}

const char *mlv_ynode_kind_name(const struct mlv_ynode *n)
{
	if (n == NULL)
		return "nothing";
	switch (n->kind) {
	case MLV_YNODE_SCALAR:
		return mlv_ynode_is_null(n) ? "an empty value" : "a scalar";
	case MLV_YNODE_SEQ:
		return "a list";
	case MLV_YNODE_MAP:
		return "a mapping";
	case MLV_YNODE_INVALID:
		break;
	}
	return "a refused value";
}

/* ---- builder ---- */

struct frame {
	struct mlv_ynode *node;
	struct mlv_ynode *pending_key;  /* mappings: key awaiting its value */
};

struct builder {
	struct mlv_ytree *tree;
	struct mlv_diags *diags;
	const char *data;
	size_t len;
	uint32_t file;            /* every position's file number */
	struct frame stack[MLV_YAML_MAX_DEPTH];
	unsigned depth;
	bool nomem;
};

static struct mlv_src_pos mark_pos(yaml_mark_t m)
{
	struct mlv_src_pos p = { (uint32_t)m.line + 1, (uint32_t)m.column + 1 };

	return p;
}

static void error_at(struct builder *b, struct mlv_src_pos pos,
		     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void error_at(struct builder *b, struct mlv_src_pos pos,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pos.file = b->file;
	if (mlv_diag_vadd(b->diags, MLV_DIAG_ERROR, pos, fmt, ap))
		b->nomem = true;
	va_end(ap);
}

static struct mlv_ynode *new_node(struct builder *b, enum mlv_ynode_kind kind,
				  yaml_mark_t mark)
{
	struct mlv_ynode *n;

	if (b->tree->n_nodes >= MLV_YAML_MAX_NODES)
		return NULL;
	n = arena_alloc(b->tree, sizeof(*n));
	if (n == NULL) {
		b->nomem = true;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = mark_pos(mark);
	n->pos.file = b->file;
	b->tree->n_nodes++;
	return n;
}

static void append_child(struct mlv_ynode *parent, struct mlv_ynode *child)
{
	if (parent->last != NULL)
		parent->last->next = child;
	else
		parent->first = child;
	parent->last = child;
	parent->n++;
}

/* Hang a finished node under the open container (or make it the root). */
static void attach(struct builder *b, struct mlv_ynode *node)
{
	struct frame *top;

	if (b->depth == 0) {
		b->tree->root = node;
		return;
	}
	top = &b->stack[b->depth - 1];
	if (top->node->kind == MLV_YNODE_SEQ) {
		append_child(top->node, node);
	} else if (top->pending_key == NULL) {
		if (node->kind != MLV_YNODE_SCALAR && node->kind != MLV_YNODE_INVALID)
			error_at(b, node->pos,
				 "mapping keys must be scalars, not %s",
				 mlv_ynode_kind_name(node));
		top->pending_key = node;
	} else {
		node->key = top->pending_key;
		top->pending_key = NULL;
		append_child(top->node, node);
	}
}

/* Anchors exist to be aliased, and aliases are refused, so refuse both:
 * a config is small enough to repeat a value. */
static void check_anchor(struct builder *b, const yaml_char_t *anchor,
			 yaml_mark_t mark)
{
	if (anchor != NULL)
		error_at(b, mark_pos(mark),
			 "YAML anchors (&%s) are not supported; write the value out",
			 (const char *)anchor);
}

enum tag_check { TAG_NONE, TAG_ALLOWED, TAG_REFUSED };

/* An explicit tag is fine only if it names what the node already is
 * (!!str on a scalar forces a string); others are reported. */
static enum tag_check check_tag(struct builder *b, const yaml_char_t *tag,
				const char *allowed, yaml_mark_t mark)
{
	if (tag == NULL)
		return TAG_NONE;
	const char *t = (const char *)tag;
	const size_t std_len = strlen("tag:yaml.org,2002:");

	if (strcmp(t, allowed) == 0)
		return TAG_ALLOWED;
	/* Show standard tags the way they were most likely written. */
	if (strncmp(t, "tag:yaml.org,2002:", std_len) == 0)
		error_at(b, mark_pos(mark), "YAML tag '!!%s' is not supported",
			 t + std_len);
	else
		error_at(b, mark_pos(mark), "YAML tag '%s' is not supported", t);
	return TAG_REFUSED;
}

static struct mlv_ynode *scalar_node(struct builder *b, const yaml_event_t *ev)
{
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct mlv_ynode *n;
	enum tag_check tag;
	char *text;

	check_anchor(b, ev->data.scalar.anchor, ev->start_mark);
	tag = check_tag(b, ev->data.scalar.tag, YAML_STR_TAG, ev->start_mark);
	/* A refused tag was reported; checking the value too would only
	 * add a second, confusing error for the same node. */
	n = new_node(b, tag == TAG_REFUSED ? MLV_YNODE_INVALID : MLV_YNODE_SCALAR,
		     ev->start_mark);
	if (n == NULL || tag == TAG_REFUSED)
		return n;
	if (len > UINT32_MAX - 1 || (text = arena_alloc(b->tree, len + 1)) == NULL) {
		b->nomem = true;
		return NULL;
	}
	memcpy(text, value, len);
	text[len] = '\0';
	n->text = text;
	n->len = (uint32_t)len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		   tag != TAG_ALLOWED;
	return n;
}

/* Position of a byte offset, counting characters like libyaml's marks. */
static struct mlv_src_pos offset_pos(const char *data, size_t len, size_t off)
{
	struct mlv_src_pos p = { 1, 1 };
	size_t i;

	if (off > len)
		off = len;
	for (i = 0; i < off; i++) {
		unsigned char c = (unsigned char)data[i];

		if (c == '\n') {
			p.line++;
			p.col = 1;
		} else if ((c & 0xC0) != 0x80) {  /* not a UTF-8 continuation */
			p.col++;
		}
	}
	return p;
}

static enum mlv_err report_parser_error(struct builder *b,
					const yaml_parser_t *p)
{
	struct mlv_src_pos pos;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return MLV_E_NOMEM;
	case YAML_READER_ERROR:
		pos = offset_pos(b->data, b->len, p->problem_offset);
		if (p->problem_value >= 0)
			error_at(b, pos, "invalid YAML: %s (byte 0x%02x)",
				 p->problem, (unsigned)p->problem_value & 0xFFu);
		else
			error_at(b, pos, "invalid YAML: %s", p->problem);
		break;
	default:
		pos = mark_pos(p->problem_mark);
		if (p->context != NULL)
			error_at(b, pos, "invalid YAML: %s %s at line %zu column %zu",
				 p->problem ? p->problem : "syntax error",
				 p->context, p->context_mark.line + 1,
				 p->context_mark.column + 1);
		else
			error_at(b, pos, "invalid YAML: %s",
				 p->problem ? p->problem : "syntax error");
		break;
	}
	return b->nomem ? MLV_E_NOMEM : MLV_E_CONFIG;
}

/* Handle one event. Returns MLV_OK to continue, MLV_E_CONFIG to stop
 * with a fatal (already reported) error, or MLV_E_NOMEM. *done is set at
 * the end of the useful input. */
static enum mlv_err on_event(struct builder *b, const yaml_event_t *ev,
			     unsigned *docs, bool *done)
{
	struct mlv_ynode *n;

	switch (ev->type) {
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
		return MLV_OK;
	case YAML_STREAM_END_EVENT:
		*done = true;
		return MLV_OK;
	case YAML_DOCUMENT_START_EVENT:
		if ((*docs)++ > 0) {
			error_at(b, mark_pos(ev->start_mark),
				 "only one YAML document is allowed in a config file");
			*done = true;
		}
		return MLV_OK;
	case YAML_ALIAS_EVENT:
		error_at(b, mark_pos(ev->start_mark),
			 "YAML aliases (*%s) are not supported; write the value out",
			 (const char *)ev->data.alias.anchor);
		n = new_node(b, MLV_YNODE_INVALID, ev->start_mark);
		break;
	case YAML_SCALAR_EVENT:
		n = scalar_node(b, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = ev->type == YAML_SEQUENCE_START_EVENT;

		if (b->depth == MLV_YAML_MAX_DEPTH) {
			error_at(b, mark_pos(ev->start_mark),
				 "YAML nested deeper than %d levels",
				 MLV_YAML_MAX_DEPTH);
			return MLV_E_CONFIG;
		}
		if (seq) {
			check_anchor(b, ev->data.sequence_start.anchor, ev->start_mark);
			check_tag(b, ev->data.sequence_start.tag, YAML_SEQ_TAG,
				  ev->start_mark);
		} else {
			check_anchor(b, ev->data.mapping_start.anchor, ev->start_mark);
			check_tag(b, ev->data.mapping_start.tag, YAML_MAP_TAG,
				  ev->start_mark);
		}
		n = new_node(b, seq ? MLV_YNODE_SEQ : MLV_YNODE_MAP, ev->start_mark);
		if (n == NULL)
			break;
		b->stack[b->depth].node = n;
		b->stack[b->depth].pending_key = NULL;
		b->depth++;
		return MLV_OK;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth == 0)   /* libyaml guarantees balance; be safe */
			return MLV_E_CONFIG;
		n = b->stack[--b->depth].node;
		break;
	default:
		return MLV_OK;
	}
	if (n == NULL) {
		if (b->nomem)
			return MLV_E_NOMEM;
		error_at(b, mark_pos(ev->start_mark),
			 "YAML has more than %u nodes", MLV_YAML_MAX_NODES);
		return MLV_E_CONFIG;
	}
	attach(b, n);
	return MLV_OK;
}

enum mlv_err mlv_ytree_parse(const char *data, size_t len, uint32_t file,
			     struct mlv_diags *diags, struct mlv_ytree **out)
{
	struct builder b;
	yaml_parser_t parser;
	enum mlv_err err = MLV_OK;
	unsigned docs = 0;
	bool done = false;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	b.diags = diags;
	b.data = data;
	b.len = len;
	b.file = file;
	b.tree = calloc(1, sizeof(*b.tree));
	if (b.tree == NULL)
		return MLV_E_NOMEM;
	if (!yaml_parser_initialize(&parser)) {
		free(b.tree);
		return MLV_E_NOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	/* A config is UTF-8; without this libyaml would honour a UTF-16 BOM. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

	while (!done && err == MLV_OK) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			err = report_parser_error(&b, &parser);
			break;
		}
		err = on_event(&b, &ev, &docs, &done);
		yaml_event_delete(&ev);
		if (err == MLV_OK && b.nomem)
			err = MLV_E_NOMEM;
	}
	yaml_parser_delete(&parser);
	if (err) {
		mlv_ytree_free(b.tree);
		return err;
	}
	*out = b.tree;
	return MLV_OK;
}

enum mlv_err mlv_ytree_append_items(struct mlv_ytree *t, const char *key,
				    struct mlv_ynode *items)
{
	struct mlv_ynode *root = t ? t->root : NULL;
	struct mlv_ynode *seq = NULL, *k;

	if (root == NULL || root->kind != MLV_YNODE_MAP || items == NULL ||
	    items->kind != MLV_YNODE_SEQ)
		return MLV_E_INVAL;
	for (struct mlv_ynode *v = root->first; v != NULL; v = v->next)
		if (v->key && v->key->kind == MLV_YNODE_SCALAR &&
		    strcmp(v->key->text, key) == 0) {
			seq = v;
			break;
		}
	if (seq == NULL) {
		/* no such key: one, at the mapping's position */
		k = arena_alloc(t, sizeof(*k));
		seq = arena_alloc(t, sizeof(*seq));
		if (k == NULL || seq == NULL)
			return MLV_E_NOMEM;
		memset(k, 0, sizeof(*k));
		memset(seq, 0, sizeof(*seq));
		k->kind = MLV_YNODE_SCALAR;
		k->pos = root->pos;
		k->text = key;
		k->len = (uint32_t)strlen(key);
		k->plain = true;
		seq->kind = MLV_YNODE_SEQ;
		seq->pos = root->pos;
		seq->key = k;
		append_child(root, seq);
	} else if (seq->kind == MLV_YNODE_SCALAR && mlv_ynode_is_null(seq)) {
		/* `vips:` with nothing after it is an empty list (apply reads
		 * it so): the fragments' items make it a list */
		seq->kind = MLV_YNODE_SEQ;
		seq->text = NULL;
		seq->len = 0;
		seq->n = 0;
		seq->first = seq->last = NULL;
	} else if (seq->kind != MLV_YNODE_SEQ) {
		return MLV_E_INVAL;
	}
	if (items->first == NULL)
		return MLV_OK;
	if (seq->last != NULL)
		seq->last->next = items->first;
	else
		seq->first = items->first;
	seq->last = items->last;
	seq->n += items->n;
	/* the items belong to seq now */
	items->first = items->last = NULL;
	items->n = 0;
	return MLV_OK;
}
