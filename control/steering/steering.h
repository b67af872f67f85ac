/* SPDX-License-Identifier: BSD-3-Clause */
/* The control side of AF_XDP steering (docs/deployment.md): the XDP
 * program dataplane/bpf/steer/xdp_steer.bpf.c sends frames for configured VIPs
 * to the AF_XDP sockets DPDK's net_af_xdp PMD reads, and everything else
 * to the kernel. This module gets hold of that program on an interface
 * and keeps its VIP maps equal to the configuration. Plain libbpf, no
 * DPDK types.
 *
 * Two ways to get a handle:
 *  - mlv_xdp_steer_open_attached(): the PMD loaded our object itself
 *    (--vdev=net_af_xdp0,iface=IF,xdp_prog=PATH, with PATH written by
 *    mlv_xdp_steer_write_object() or the installed xdp_steer.bpf.o).
 *    The PMD owns the attachment and detaches it when the port closes;
 *    we only find the maps. This is the daemon's path: the 22.11 PMD
 *    puts its sockets into a program's "xsks_map" only when it loaded the
 *    program from xdp_prog=.
 *  - mlv_xdp_steer_attach(): load the embedded object and attach it
 *    ourselves (tests, or an AF_XDP consumer other than the PMD, which
 *    then fills xsks_map: mlv_xdp_steer_xsks_map_fd()). Detached again by
 *    mlv_xdp_steer_close().
 * Until the first sync the VIP set is empty and every frame goes to the
 * kernel, so steering fails open.
 *
 * Threads: every function is for the control thread (or any one thread
 * per handle); none blocks longer than its syscalls. The kernel makes
 * each map entry update atomic for the XDP program reading it.
 * Errors: enum mlv_err; a one-line reason naming the interface is kept
 * (mlv_xdp_steer_error(), or errbuf for the constructors).
 */
#ifndef MLV_XDP_STEER_H
#define MLV_XDP_STEER_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/config/config.h"
#include "control/base/error.h"
#include "dataplane/bpf/steer/counters.h"

struct mlv_xdp_steer;

/* The BPF program name the PMD-loaded and self-attached objects carry. */
#define MLV_XDP_STEER_PROG_NAME "mlv_xdp_steer"

enum mlv_xdp_mode {
	MLV_XDP_MODE_AUTO = 0,  /* driver mode if the driver has it, else generic */
	MLV_XDP_MODE_NATIVE,    /* driver mode or fail */
	MLV_XDP_MODE_GENERIC,   /* generic (skb) mode */
};

/* One VIP as the steering program matches it. */
struct mlv_xdp_vip {
	struct mlv_ip address;  /* MLV_AF_INET or MLV_AF_INET6 */
	uint16_t port;          /* host order */
	uint16_t port_last;     /* a range's last port; 0 or port: one port */
	uint8_t protocol;       /* IPPROTO_TCP or IPPROTO_UDP */
	bool echo_reply;        /* icmp_echo: reply: echo requests to the
				   address are steered to maglevd */
};

/* What a sync changed (VIP entries and VIP-address entries). */
struct mlv_xdp_sync_result {
	uint32_t vips;             /* VIPs in the map afterwards */
	uint32_t vips_added, vips_removed;
	uint32_t addrs;            /* distinct VIP addresses afterwards */
	uint32_t addrs_added, addrs_removed;
};

/* Find the steering program attached to ifname (loaded by the PMD from
 * xdp_prog=) and open its maps. Call after the PMD has set up its RX
 * queues (rte_eth_rx_queue_setup loads the program). MLV_E_NOT_FOUND: no
 * program attached; MLV_E_BUSY: another program is attached; MLV_E_PROTO:
 * ours but from another build (map shapes differ); MLV_E_PERM: no
 * CAP_BPF/CAP_NET_ADMIN; MLV_E_INVAL: no such interface. */
enum mlv_err mlv_xdp_steer_open_attached(const char *ifname,
					 struct mlv_xdp_steer **out,
					 char *errbuf, size_t errlen);

/* Load the embedded steering object and attach it to ifname (refusing to
 * replace any program already attached: MLV_E_BUSY). */
enum mlv_err mlv_xdp_steer_attach(const char *ifname, enum mlv_xdp_mode mode,
				  struct mlv_xdp_steer **out,
				  char *errbuf, size_t errlen);

/* Make the maps hold exactly vips[0..n) (duplicates allowed): new VIPs
 * and addresses are added before stale ones are removed, so a VIP kept
 * across a reload is never unsteered. MLV_E_INVAL (nothing changed) for a
 * VIP with another family or protocol; MLV_E_LIMIT if a map is full
 * (then it holds the old set plus part of the new). *res may be NULL. */
enum mlv_err mlv_xdp_steer_sync(struct mlv_xdp_steer *s,
				const struct mlv_xdp_vip *vips, size_t n,
				struct mlv_xdp_sync_result *res);

/* mlv_xdp_steer_sync() with every VIP of a validated config. */
enum mlv_err mlv_xdp_steer_sync_config(struct mlv_xdp_steer *s,
				       const struct mlv_config *cfg,
				       struct mlv_xdp_sync_result *res);

/* Counters summed over CPUs, indexed by enum mlv_steer_counter. */
enum mlv_err mlv_xdp_steer_counters(const struct mlv_xdp_steer *s,
				    uint64_t out[MLV_STEER_CTR__COUNT]);

/* "redirect_vip", ...: the metric name of counter c; "?" if out of range. */
const char *mlv_xdp_steer_counter_name(unsigned c);
/* One-line meaning of counter c, for HELP texts; "?" if out of range. */
const char *mlv_xdp_steer_counter_help(unsigned c);

/* The XSKMAP (queue index -> AF_XDP socket fd), for a consumer that is
 * not the PMD. Owned by the handle. */
int mlv_xdp_steer_xsks_map_fd(const struct mlv_xdp_steer *s);

/* The reason for the last error on s (empty if none). */
const char *mlv_xdp_steer_error(const struct mlv_xdp_steer *s);

/* Write the steering object embedded at build time to path (mode 0644,
 * via a temporary file and rename, so the PMD never reads half a file).
 * Lets the daemon pass xdp_prog= a file that matches this binary's map
 * layout whatever is installed. MLV_E_IO with errno-based reason. */
enum mlv_err mlv_xdp_steer_write_object(const char *path, char *errbuf,
					size_t errlen);

/* Detach a steering program left on ifname by a maglevd that did not
 * close its port (killed): the PMD attaches with "only if none", so the
 * next start would fail. Only a program named MLV_XDP_STEER_PROG_NAME is
 * removed (another is MLV_E_BUSY); the caller must know no other maglevd
 * uses ifname (the daemon's control-socket lock). *removed says whether
 * one was. */
enum mlv_err mlv_xdp_steer_remove_stale(const char *ifname, int *removed,
					char *errbuf, size_t errlen);

/* For the daemon's EAL arguments: is arg a net_af_xdp device, and on
 * which interface? arg is "--vdev=net_af_xdpN,key=value,..." or, after a
 * separate "--vdev", the bare "net_af_xdpN,key=value,...". MLV_OK: it is
 * one; its iface= value is copied to ifname (ifname_len bytes) and
 * *has_prog says whether xdp_prog= is already given (if not, the daemon
 * appends ",xdp_prog=PATH"). MLV_E_NOT_FOUND: any other argument.
 * MLV_E_INVAL: a net_af_xdp device without a usable iface= (missing,
 * empty, or too long for ifname). Pure; any thread. */
enum mlv_err mlv_xdp_steer_vdev_iface(const char *arg, char *ifname,
				      size_t ifname_len, int *has_prog);

/* Close the map fds; detach the program if mlv_xdp_steer_attach()
 * attached it (the PMD detaches its own). NULL is a no-op. */
void mlv_xdp_steer_close(struct mlv_xdp_steer *s);

#endif
