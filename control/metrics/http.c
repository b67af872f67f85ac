/* SPDX-License-Identifier: BSD-3-Clause */
/* HTTP requests of the metrics server: routing and responses. The page is
 * rendered here, on the control thread, inside mlv_metrics_process. */
#include <stdlib.h>
#include <string.h>

#include "control/metrics/metrics_internal.h"

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>maglevd</title></head><body>\n"
	"<h1>maglevd</h1>\n<p><a href=\"/metrics\">Metrics</a></p>\n"
	"</body></html>\n";
static const char not_found_page[] = "404 not found: try /metrics\n";
static const char bad_method_page[] = "405 method not allowed: GET or HEAD\n";
static const char error_page[] = "500 out of memory while rendering\n";
static const char no_body_page[] = "413 a request body is not expected\n";

/* Queue a response and drop our reference (MHD keeps its own until it
 * is sent). MHD_NO when memory ran out: MHD then closes the connection.
 * Every request ends here, so here it has arrived whole and its
 * deadline is lifted. */
static enum MHD_Result reply(struct mlv_metrics *m,
			     struct MHD_Connection *conn, unsigned status,
			     struct MHD_Response *resp, const char *type)
{
	enum MHD_Result rc;

	mlv_metrics_request_done(m, conn);
	if (!resp)
		return MHD_NO;
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type) !=
	    MHD_YES ||
	    (status == MHD_HTTP_METHOD_NOT_ALLOWED &&
	     MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") !=
	     MHD_YES)) {
		MHD_destroy_response(resp);
		return MHD_NO;
	}
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result reply_static(struct mlv_metrics *m,
				    struct MHD_Connection *conn,
				    unsigned status, const char *body,
				    size_t len, const char *type)
{
	return reply(m, conn, status,
		     MHD_create_response_from_buffer(len, (void *)body,
						     MHD_RESPMEM_PERSISTENT),
		     type);
}

static enum MHD_Result reply_metrics(struct mlv_metrics *m,
				     struct MHD_Connection *conn)
{
	struct MHD_Response *resp;
	char *text;
	size_t len;

	if (mlv_metrics_render(m->renderer, &m->src, &text, &len) != MLV_OK) {
		m->stats.render_failures++;
		return reply_static(m, conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    error_page, sizeof(error_page) - 1,
				    "text/plain; charset=utf-8");
	}
	/* MHD takes the buffer and free()s it once sent: no copy. */
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	m->stats.scrapes++;
	return reply(m, conn, MHD_HTTP_OK, resp, MLV_METRICS_CONTENT_TYPE);
}

enum MHD_Result mlv_metrics_http_handle(void *cls,
					struct MHD_Connection *conn,
					const char *url, const char *method,
					const char *version,
					const char *upload_data,
					size_t *upload_data_size,
					void **req_cls)
{
	static int request_seen;     /* marker: headers already looked at */
	static int body_seen;        /* marker: a body came, refuse at the end */
	struct mlv_metrics *m = cls;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		m->stats.bad_method++;
		return reply_static(m, conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				    bad_method_page, sizeof(bad_method_page) - 1,
				    "text/plain; charset=utf-8");
	}
	/* The first call comes with the headers. Answering only on the
	 * second, once MHD knows the request is complete, keeps the
	 * connection alive for the next scrape (a reply queued earlier makes
	 * MHD close it). */
	if (*req_cls == NULL) {
		*req_cls = &request_seen;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		/* A GET with a body: nothing here wants one. It is skipped
		 * chunk by chunk as MHD reads it (never stored; the request
		 * deadline bounds how long a client can take over it) and
		 * refused once complete. */
		*upload_data_size = 0;
		*req_cls = &body_seen;
		return MHD_YES;
	}
	if (*req_cls == &body_seen)
		return reply_static(m, conn, MHD_HTTP_CONTENT_TOO_LARGE,
				    no_body_page, sizeof(no_body_page) - 1,
				    "text/plain; charset=utf-8");
	/* HEAD gets the same headers, Content-Length included; MHD leaves
	 * the body out. */
	if (strcmp(url, "/metrics") == 0)
		return reply_metrics(m, conn);
	if (strcmp(url, "/") == 0) {
		m->stats.index++;
		return reply_static(m, conn, MHD_HTTP_OK, index_page,
				    sizeof(index_page) - 1,
				    "text/html; charset=utf-8");
	}
	m->stats.not_found++;
	return reply_static(m, conn, MHD_HTTP_NOT_FOUND, not_found_page,
			    sizeof(not_found_page) - 1,
			    "text/plain; charset=utf-8");
}
