/* SPDX-License-Identifier: GPL-2.0 */
/* The record shared by the BPF programs and user space. 72 bytes, little-endian on x86/arm64.
 * Must match `crate::format::Event::from_bytes` (offsets are listed there). */
#ifndef KLOGGER_H
#define KLOGGER_H

enum kl_type {
	KL_SWITCH = 1,      /* pid/tgid/comm = prev, pid2/tgid2/comm2 = next, arg = prev_state */
	KL_WAKEUP = 2,      /* pid = woken task, pid2 = waker (current), arg = target cpu */
	KL_WAKEUP_NEW = 3,  /* as KL_WAKEUP, for a new task */
	KL_FORK = 4,        /* pid = parent, pid2 = child */
	KL_EXEC = 5,        /* pid = task, arg = old pid, comm = new comm */
	KL_EXIT = 6,        /* pid = exiting task */
	KL_HRTIMER = 7,     /* pid = current, arg = hrtimer callback address */
	KL_TICK = 8,        /* the scheduler tick: pid = task running when it fired */
	KL_IRQ_ENTRY = 9,   /* arg = irq number */
	KL_IRQ_EXIT = 10,   /* arg = irq number, flags = handler return value */
	KL_SOFTIRQ_ENTRY = 11, /* arg = softirq vector */
	KL_SOFTIRQ_EXIT = 12,
	KL_LOST = 100,      /* ts = first event lost, arg = events lost since (ring buffer full) */
};

#define KL_F_PREEMPT 1 /* sched_switch: `preempt` argument was true */

struct kl_event {
	__u64 ts;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u32 cpu;
	__u16 type;
	__u16 flags;
	__u32 pid;
	__u32 tgid;
	__u32 pid2;
	__u32 tgid2;
	__u64 arg;
	char comm[16];
	char comm2[16];
};

#endif
