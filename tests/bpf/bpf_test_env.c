/* SPDX-License-Identifier: BSD-3-Clause */
/* BPF test fixtures: see bpf_test_env.h. */
#define _GNU_SOURCE   /* unshare */
#include "tests/bpf/bpf_test_env.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

void bpf_test_private_netns(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: BPF tests need root\n");
		exit(BPF_TEST_SKIP);
	}
	if (unshare(CLONE_NEWNET)) {
		if (errno == EPERM) {
			fprintf(stderr, "skipped: cannot create a network "
				"namespace (no CAP_SYS_ADMIN)\n");
			exit(BPF_TEST_SKIP);
		}
		fprintf(stderr, "unshare(CLONE_NEWNET): %s\n", strerror(errno));
		abort();
	}
}

int bpf_test_try_run_xdp(int prog_fd, const void *in, uint32_t len,
			 void *out, uint32_t cap, uint32_t *out_len,
			 int *action)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = in,
		    .data_size_in = len,
		    .data_out = out,
		    .data_size_out = cap,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*out_len = opts.data_size_out;
	*action = (int)opts.retval;
	return 0;
}

int bpf_test_try_run_xdp_dev(int prog_fd, int ifindex, const void *in,
			     uint32_t len, void *out, uint32_t cap,
			     uint32_t *out_len, int *action)
{
	struct xdp_md ctx = { .data_end = len,
			      .ingress_ifindex = (uint32_t)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = in,
		    .data_size_in = len,
		    .data_out = out,
		    .data_size_out = cap,
		    .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*out_len = opts.data_size_out;
	*action = (int)opts.retval;
	return 0;
}

int bpf_test_run_xdp(int prog_fd, const void *in, uint32_t len, void *out,
		     uint32_t cap, uint32_t *out_len)
{
	int action = -1;
	int rc = bpf_test_try_run_xdp(prog_fd, in, len, out, cap, out_len,
				      &action);

	if (rc) {
		fprintf(stderr, "BPF_PROG_TEST_RUN (%u bytes): %s\n", len,
			strerror(-rc));
		abort();
	}
	return action;
}

#define XSK_FRAMES 64

struct bpf_test_xsk {
	void *area;
	size_t size;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
};

struct bpf_test_xsk *bpf_test_xsk_open(const char *ifname)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = XDP_FLAGS_SKB_MODE,
		.bind_flags = XDP_COPY,
	};
	struct bpf_test_xsk *x = calloc(1, sizeof(*x));
	int rc;

	if (!x)
		abort();
	x->size = (size_t)XSK_FRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE;
	x->area = mmap(NULL, x->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		fprintf(stderr, "mmap: %s\n", strerror(errno));
		abort();
	}
	rc = xsk_umem__create(&x->umem, x->area, x->size, &x->fill, &x->comp,
			      NULL);
	if (rc) {
		fprintf(stderr, "xsk_umem__create: %s\n", strerror(-rc));
		abort();
	}
	rc = xsk_socket__create(&x->xsk, ifname, 0, x->umem, &x->rx, &x->tx,
				&cfg);
	if (rc) {
		fprintf(stderr, "xsk_socket__create(%s): %s\n", ifname,
			strerror(-rc));
		abort();
	}
	return x;
}

int bpf_test_xsk_fd(const struct bpf_test_xsk *x)
{
	return xsk_socket__fd(x->xsk);
}

void bpf_test_xsk_close(struct bpf_test_xsk *x)
{
	if (!x)
		return;
	xsk_socket__delete(x->xsk);
	xsk_umem__delete(x->umem);
	munmap(x->area, x->size);
	free(x);
}
