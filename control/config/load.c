/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* O_PATH */
/* Config entry points: read the file, build the YAML tree, walk it with
 * the schema, hand back a complete model or every diagnostic. */
#include "control/config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/config/diags.h"
#include "control/config/schema_internal.h"
#include "control/config/yaml_tree_internal.h"

void mlv_config_free(struct mlv_config *cfg)
{
	uint32_t i;

	if (cfg == NULL)
		return;
	if (cfg->eal_args != NULL)
		for (i = 0; i < cfg->n_eal_args; i++)
			free(cfg->eal_args[i]);
	free(cfg->eal_args);
	for (i = 0; cfg->includes && i < cfg->n_includes; i++)
		free(cfg->includes[i]);
	free(cfg->includes);
	for (i = 0; cfg->ports && i < cfg->n_ports; i++) {
		struct mlv_bond_config *b = &cfg->ports[i].bond;

		for (uint32_t m = 0; b->members && m < b->n_members; m++)
			free(b->members[m]);
		free(b->members);
	}
	free(cfg->ports);
	if (cfg->vips != NULL)
		for (i = 0; i < cfg->n_vips; i++)
		{
			free(cfg->vips[i].backends);
			free(cfg->vips[i].allow);
			free(cfg->vips[i].deny);
		}
	free(cfg->vips);
	free(cfg->path);
	free(cfg);
}

static const struct mlv_src_pos no_pos = { 0, 0 };

/* Check the root, then walk it. Returns MLV_OK or MLV_E_NOMEM; schema
 * errors are left in diags. */
static enum mlv_err build_model(const char *name, const struct mlv_ynode *root,
				struct mlv_diags *diags, struct mlv_config **out)
{
	static const struct mlv_src_pos start = { 1, 1 };
	struct mlv_cfg_ctx ctx = { 0 };
	struct mlv_config *cfg;

	if (root == NULL || mlv_ynode_is_null(root)) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, start, "the configuration is empty");
		return MLV_OK;
	}
	if (root->kind != MLV_YNODE_MAP) {
		if (root->kind != MLV_YNODE_INVALID)
			mlv_diag_add(diags, MLV_DIAG_ERROR, root->pos,
				     "the top level must be a mapping with dataplane, control, defaults and vips, not %s",
				     mlv_ynode_kind_name(root));
		return MLV_OK;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return MLV_E_NOMEM;
	cfg->path = strdup(name);
	if (cfg->path == NULL) {
		free(cfg);
		return MLV_E_NOMEM;
	}
	ctx.cfg = cfg;
	ctx.diags = diags;
	ctx.nomem = false;
	mlv_cfg_apply(&ctx, root);
	if (ctx.nomem) {
		mlv_config_free(cfg);
		return MLV_E_NOMEM;
	}
	*out = cfg;
	return MLV_OK;
}

/* Read at most MLV_CONFIG_MAX_FILE_BYTES + 1 bytes, so an oversized file
 * (or an endless pipe) is detected without reading all of it. */
static enum mlv_err read_file(FILE *f, char **data, size_t *len)
{
	const size_t limit = (size_t)MLV_CONFIG_MAX_FILE_BYTES + 1;
	size_t cap = 0, n = 0;
	char *buf = NULL, *bigger;

	while (n < limit) {
		size_t got;

		if (n == cap) {
			cap = cap ? cap * 2 : 64 * 1024;
			if (cap > limit)
				cap = limit;
			bigger = realloc(buf, cap);
			if (bigger == NULL) {
				free(buf);
				return MLV_E_NOMEM;
			}
			buf = bigger;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				free(buf);
				return MLV_E_IO;
			}
			break;
		}
	}
	*data = buf;
	*len = n;
	return MLV_OK;
}

/* Whose files a load reads: uid's (root, 0, reads any: the daemon's own
 * config), so a user's dry run reads only what that user could read. */
struct reader {
	uid_t uid;
};

static const struct reader any_reader = { .uid = 0 };

/* Whether the reader may read a file with these attributes: its owner's
 * own files and files anyone may read (o+r). Root reads anything. */
static bool reader_may(const struct reader *rd, const struct stat *st,
		       char *why, size_t why_len)
{
	if (rd->uid == 0 || st->st_uid == rd->uid ||
	    (st->st_mode & S_IROTH))
		return true;
	snprintf(why, why_len, "not read for uid %u: the file belongs to uid "
		 "%u and others may not read it", (unsigned)rd->uid,
		 (unsigned)st->st_uid);
	return false;
}

/* Open path for reading as a config: a regular file only (a FIFO or a
 * device would block the control thread; the open itself does not wait,
 * O_NONBLOCK), that rd may read, then read it whole. A link is followed
 * (a ConfigMap's ..data swap, an `ln -sfn` deployment); the checks apply
 * to the file it leads to. *why says what went wrong. */
static enum mlv_err read_path(const char *path, const struct reader *rd,
			      char **data, size_t *len, char *why,
			      size_t why_len)
{
	/* O_PATH first: what is at path is looked at before it is opened
	 * for reading, so a device (a watchdog, a tape) is never opened */
	int pfd = open(path, O_PATH | O_CLOEXEC), fd;
	char proc[64];
	struct stat st;
	enum mlv_err err;
	FILE *f;

	if (pfd < 0) {
		snprintf(why, why_len, "cannot open: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (fstat(pfd, &st) != 0) {
		snprintf(why, why_len, "cannot open: %s", strerror(errno));
		close(pfd);
		return MLV_E_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "cannot open: not a regular file (a "
			 "config is read whole, at once)");
		close(pfd);
		return MLV_E_IO;
	}
	if (!reader_may(rd, &st, why, why_len)) {
		close(pfd);
		return MLV_E_PERM;
	}
	/* the same file, not whatever path names by now */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	close(pfd);
	if (fd < 0) {
		snprintf(why, why_len, "cannot open: %s", strerror(errno));
		return MLV_E_IO;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(why, why_len, "cannot open: %s", strerror(errno));
		close(fd);
		return MLV_E_IO;
	}
	err = read_file(f, data, len);
	if (err == MLV_E_IO)
		snprintf(why, why_len, "cannot read: %s", strerror(errno));
	fclose(f);
	return err;
}

bool mlv_config_include_path(const char *main_path, const char *pattern,
			     char *buf, size_t len)
{
	const char *slash = strrchr(main_path, '/');
	int n;

	if (pattern[0] == '/' || !slash)
		n = snprintf(buf, len, "%s", pattern);
	else
		n = snprintf(buf, len, "%.*s/%s", (int)(slash - main_path),
			     main_path, pattern);
	return n >= 0 && (size_t)n < len;
}

bool mlv_config_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The fragments an `include:` list brought in: their trees (whose
 * nodes the main tree borrows until the model is built) and paths. */
/* The fragments one load has read so far, and whose files it reads. */
struct fragments {
	const struct reader *rd;
	uint32_t n;
	struct mlv_ytree **trees;
	char **paths;
};

static void fragments_free(struct fragments *fr)
{
	for (uint32_t i = 0; i < fr->n; i++) {
		mlv_ytree_free(fr->trees[i]);
		free(fr->paths[i]);
	}
	free(fr->trees);
	free(fr->paths);
	memset(fr, 0, sizeof(*fr));
}

static bool fragments_has(const struct fragments *fr, const char *path)
{
	for (uint32_t i = 0; i < fr->n; i++)
		if (strcmp(fr->paths[i], path) == 0)
			return true;
	return false;
}

/* Check a fragment's tree (only a `vips:` list, or nothing) and move its
 * VIPs to the end of the main tree's list. */
static enum mlv_err merge_fragment(struct mlv_ytree *main_tree,
				   struct mlv_ytree *ft, struct mlv_diags *d)
{
	struct mlv_ynode *root = (struct mlv_ynode *)mlv_ytree_root(ft);
	struct mlv_ynode *vips = NULL;

	if (root == NULL || mlv_ynode_is_null(root) ||
	    root->kind == MLV_YNODE_INVALID)
		return MLV_OK;
	if (root->kind != MLV_YNODE_MAP) {
		mlv_diag_add(d, MLV_DIAG_ERROR, root->pos,
			     "a fragment is a mapping with one key, vips, not %s",
			     mlv_ynode_kind_name(root));
		return MLV_OK;
	}
	for (struct mlv_ynode *v = root->first; v != NULL; v = v->next) {
		if (v->key && v->key->kind == MLV_YNODE_SCALAR &&
		    strcmp(v->key->text, "vips") == 0 && !vips) {
			vips = v;
			continue;
		}
		mlv_diag_add(d, MLV_DIAG_ERROR, v->key ? v->key->pos : v->pos,
			     "a fragment holds only vips:; '%s' belongs in the "
			     "main file", v->key && v->key->kind == MLV_YNODE_SCALAR ?
			     v->key->text : "this key");
	}
	if (vips == NULL || mlv_ynode_is_null(vips))
		return MLV_OK;
	if (vips->kind != MLV_YNODE_SEQ) {
		mlv_diag_add(d, MLV_DIAG_ERROR, vips->pos,
			     "vips must be a list, got %s",
			     mlv_ynode_kind_name(vips));
		return MLV_OK;
	}
	switch (mlv_ytree_append_items(main_tree, "vips", vips)) {
	case MLV_OK:
		return MLV_OK;
	case MLV_E_NOMEM:
		return MLV_E_NOMEM;
	default:
		/* the main file's vips is neither a list nor empty: its own
		 * error (apply's) says so; the fragments cannot be added */
		mlv_diag_add(d, MLV_DIAG_ERROR, vips->pos,
			     "these VIPs cannot be added: the main file's vips "
			     "is not a list");
		return MLV_OK;
	}
}

/* Read, parse and merge one fragment (its name recorded in diags, as
 * file number k of its positions). */
static enum mlv_err load_fragment(const char *path,
				  const struct mlv_ynode *from,
				  struct mlv_ytree *main_tree,
				  struct mlv_diags *d, struct fragments *fr)
{
	struct mlv_ytree *ft = NULL;
	char *data = NULL, why[256];
	size_t len = 0;
	uint32_t file;
	enum mlv_err err;
	void *grown;

	if (fr->n == MLV_CONFIG_MAX_FRAGMENTS) {
		mlv_diag_add(d, MLV_DIAG_ERROR, from->pos,
			     "include matches more than %u files",
			     MLV_CONFIG_MAX_FRAGMENTS);
		return MLV_E_LIMIT;
	}
	if ((grown = realloc(fr->trees, (fr->n + 1) * sizeof(*fr->trees))))
		fr->trees = grown;
	if (grown && (grown = realloc(fr->paths, (fr->n + 1) * sizeof(*fr->paths))))
		fr->paths = grown;
	if (!grown || (err = mlv_diags_add_fragment(d, path, &file)))
		return MLV_E_NOMEM;
	err = read_path(path, fr->rd, &data, &len, why, sizeof(why));
	if (err == MLV_E_NOMEM)
		return err;
	if (err) {
		mlv_diag_add(d, MLV_DIAG_ERROR, from->pos, "include: %s: %s",
			     path, why);
		return MLV_OK;
	}
	if (len > MLV_CONFIG_MAX_FILE_BYTES)
		mlv_diag_add(d, MLV_DIAG_ERROR,
			     (struct mlv_src_pos){ .file = file },
			     "file is too large (%zu bytes; at most %u)", len,
			     MLV_CONFIG_MAX_FILE_BYTES);
	else
		err = mlv_ytree_parse(data, len, file, d, &ft);
	free(data);
	if (err)
		return err;
	if (!ft)
		return MLV_OK;
	fr->trees[fr->n] = ft;
	fr->paths[fr->n] = strdup(path);
	if (!fr->paths[fr->n]) {
		mlv_ytree_free(ft);
		return MLV_E_NOMEM;
	}
	fr->n++;
	return merge_fragment(main_tree, ft, d);
}

/* The files the main file's `include:` patterns match (relative ones
 * against its directory), in glob's order, each once, merged into
 * main_tree. A pattern that matches nothing adds nothing (an empty
 * vips.d/). Type errors of the key itself are apply's to report. */
static enum mlv_err load_includes(const char *name, struct mlv_ytree *main_tree,
				  struct mlv_diags *d, struct fragments *fr)
{
	const struct mlv_ynode *root = mlv_ytree_root(main_tree);
	const struct mlv_ynode *inc;
	enum mlv_err err = MLV_OK;
	struct stat self;
	bool have_self = stat(name, &self) == 0;

	if (!root || root->kind != MLV_YNODE_MAP)
		return MLV_OK;
	inc = mlv_ynode_get(root, "include");
	if (!inc || inc->kind != MLV_YNODE_SEQ ||
	    inc->n > MLV_CONFIG_MAX_INCLUDES)
		return MLV_OK;
	for (const struct mlv_ynode *it = inc->first; !err && it; it = it->next) {
		char pattern[PATH_MAX];
		glob_t g;
		int rc;

		if (it->kind != MLV_YNODE_SCALAR || mlv_ynode_is_null(it) ||
		    strlen(it->text) != it->len)
			continue;
		if (it->len >= MLV_CONFIG_MAX_INCLUDE_LEN) {
			mlv_diag_add(d, MLV_DIAG_ERROR, it->pos,
				     "include pattern is too long (%u bytes; at "
				     "most %u)", it->len,
				     MLV_CONFIG_MAX_INCLUDE_LEN - 1);
			continue;
		}
		if (!mlv_config_include_path(name, it->text, pattern,
					     sizeof(pattern))) {
			mlv_diag_add(d, MLV_DIAG_ERROR, it->pos,
				     "include '%s': the path is too long", it->text);
			continue;
		}
		rc = glob(pattern, GLOB_ERR, NULL, &g);
		if (rc == GLOB_NOMATCH) {
			/* a glob may match nothing (an empty vips.d/); a
			 * plain name that is missing is a mistake, not a
			 * configuration without those VIPs */
			if (!mlv_config_is_glob(it->text))
				mlv_diag_add(d, MLV_DIAG_ERROR, it->pos,
					     "include '%s': %s: no such file",
					     it->text, pattern);
			continue;
		}
		if (rc != 0) {
			mlv_diag_add(d, MLV_DIAG_ERROR, it->pos,
				     "include '%s': cannot list %s: %s", it->text,
				     pattern, rc == GLOB_NOSPACE ? "out of memory" :
				     strerror(errno));
			if (rc == GLOB_NOSPACE)
				err = MLV_E_NOMEM;
			continue;
		}
		for (size_t j = 0; !err && j < g.gl_pathc; j++) {
			struct stat st;

			/* the main file matched by its own pattern (*.yaml
			 * beside it) is not a fragment of itself */
			if (have_self && stat(g.gl_pathv[j], &st) == 0 &&
			    st.st_dev == self.st_dev && st.st_ino == self.st_ino)
				continue;
			if (!fragments_has(fr, g.gl_pathv[j]))
				err = load_fragment(g.gl_pathv[j], it, main_tree,
						    d, fr);
		}
		globfree(&g);
	}
	return err == MLV_E_LIMIT ? MLV_OK : err;
}

static enum mlv_err load_buffer(const char *name, const char *data,
				size_t len, const struct reader *rd,
				struct mlv_config **out, struct mlv_diags *diags)
{
	struct mlv_config *cfg = NULL;
	struct mlv_ytree *tree = NULL;
	struct fragments fr = { .rd = rd };
	uint32_t first = diags->n, errors = diags->n_errors;
	enum mlv_err err;

	*out = NULL;
	if (name == NULL)
		name = "<config>";
	err = mlv_diags_set_file(diags, name);
	if (err)
		return err;
	if (data == NULL && len != 0)
		return MLV_E_INVAL;
	if (len > MLV_CONFIG_MAX_FILE_BYTES) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos,
			     "file is too large (%zu bytes; at most %u)", len,
			     MLV_CONFIG_MAX_FILE_BYTES);
		return MLV_E_CONFIG;
	}
	err = mlv_ytree_parse(data != NULL ? data : "", len, 0, diags, &tree);
	if (err == MLV_OK)
		err = load_includes(name, tree, diags, &fr);
	if (err == MLV_OK)
		err = build_model(name, mlv_ytree_root(tree), diags, &cfg);
	mlv_ytree_free(tree);
	fragments_free(&fr);
	mlv_diags_sort(diags, first);
	if (err == MLV_OK && diags->n_errors != errors)
		err = MLV_E_CONFIG;
	if (err) {
		mlv_config_free(cfg);
		return err;
	}
	*out = cfg;
	return MLV_OK;
}

enum mlv_err mlv_config_load_buffer(const char *name, const char *data,
				    size_t len, struct mlv_config **out,
				    struct mlv_diags *diags)
{
	return load_buffer(name, data, len, &any_reader, out, diags);
}

static enum mlv_err load_path(const char *path, const struct reader *rd,
			      struct mlv_config **out, struct mlv_diags *diags)
{
	enum mlv_err err;
	char *data = NULL, why[256];
	size_t len = 0;

	*out = NULL;
	err = mlv_diags_set_file(diags, path);
	if (err)
		return err;
	err = read_path(path, rd, &data, &len, why, sizeof(why));
	if (err == MLV_E_IO || err == MLV_E_PERM)
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "%s", why);
	if (err)
		return err;
	err = load_buffer(path, data, len, rd, out, diags);
	free(data);
	return err;
}

enum mlv_err mlv_config_load(const char *path, struct mlv_config **out,
			     struct mlv_diags *diags)
{
	return load_path(path, &any_reader, out, diags);
}

enum mlv_err mlv_config_load_for(const char *path, uint32_t uid,
				 struct mlv_config **out,
				 struct mlv_diags *diags)
{
	const struct reader rd = { .uid = (uid_t)uid };

	return load_path(path, &rd, out, diags);
}
