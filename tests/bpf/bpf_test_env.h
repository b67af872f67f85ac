/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared fixtures of the BPF tests: a private network namespace (so
 * attaching XDP programs and binding AF_XDP sockets touches nothing
 * outside the test), BPF_PROG_TEST_RUN on a frame, and an AF_XDP socket
 * to put in an XSKMAP. Single-threaded test code. */
#ifndef MLV_BPF_TEST_ENV_H
#define MLV_BPF_TEST_ENV_H

#include <stdint.h>

/* meson's exit status for a skipped test */
#define BPF_TEST_SKIP 77

/* Move the process into a new network namespace (only lo, down). Exits
 * BPF_TEST_SKIP with a message when not privileged (not root), and fails
 * loudly on any other error. */
void bpf_test_private_netns(void);

/* Run the XDP program prog_fd once on the len-byte frame in (RX queue 0
 * of lo). The frame the program leaves is copied to out (cap bytes) and
 * its length stored in *out_len. Returns the XDP action; aborts the test
 * if the kernel refuses the run. */
int bpf_test_run_xdp(int prog_fd, const void *in, uint32_t len, void *out,
		     uint32_t cap, uint32_t *out_len);

/* bpf_test_run_xdp for frames the kernel may refuse (shorter than an
 * Ethernet header, say): returns 0 with *action and *out_len set, or
 * -errno of the refused run, with nothing else changed. */
int bpf_test_try_run_xdp(int prog_fd, const void *in, uint32_t len,
			 void *out, uint32_t cap, uint32_t *out_len,
			 int *action);

/* bpf_test_try_run_xdp with the frame arriving on ifindex (RX queue 0):
 * what the program sees as its ingress device, the namespace of its
 * socket and route lookups, and where XDP_TX would send it. */
int bpf_test_try_run_xdp_dev(int prog_fd, int ifindex, const void *in,
			     uint32_t len, void *out, uint32_t cap,
			     uint32_t *out_len, int *action);

/* An AF_XDP socket bound in copy mode to RX queue 0 of ifname, with no
 * XDP program loaded for it: only something to store in an XSKMAP. */
struct bpf_test_xsk;
struct bpf_test_xsk *bpf_test_xsk_open(const char *ifname);
int bpf_test_xsk_fd(const struct bpf_test_xsk *x);
void bpf_test_xsk_close(struct bpf_test_xsk *x);

#endif
