// SPDX-License-Identifier: GPL-2.0
//
// klogger BPF side: one fixed-size record per scheduling event, written into a per-CPU ring buffer.
//
// Hooks (all BTF-enabled raw tracepoints, `tp_btf`, which are cheaper than classic tracepoints
// because no trace-event buffer is filled):
//   sched:sched_switch (with preempt flag and prev_state), sched:sched_wakeup, sched:sched_wakeup_new,
//   sched:sched_process_fork/exec/exit, timer:hrtimer_expire_entry, irq:irq_handler_entry/exit,
//   irq:softirq_entry/exit.
// The tick: on a high-resolution (or NO_HZ) kernel the periodic tick is the per-CPU `tick_sched`
// hrtimer, whose callback is `tick_nohz_handler` (Linux >= 6.9) or `tick_sched_timer` (older). Its
// expiry shows as timer:hrtimer_expire_entry with hrtimer->function == that callback; user space
// finds the address in /proc/kallsyms and sets `tick_fn`, and such expiries are written as TICK
// records instead of HRTIMER ones. (timer:tick_stop only reports the tick being stopped in NO_HZ.)
// A kernel running the tick in low-resolution periodic mode would not show ticks here.
//
// Weak: the layout of the raw tracepoint arguments is the one of Linux >= 5.18 (sched_switch got
// prev_state as 4th argument then); older kernels are refused at load time by the verifier.

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "klogger.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u64 tick_fn = 0;    /* address of the tick hrtimer callback, 0 = unknown */
const volatile bool filter_on = false; /* record only tracked tasks (a process tree) */
const volatile __u64 wakeup_bytes = 1 << 21; /* wake the consumer past this much unread data */

struct inner_rb {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024); /* resized by user space (--buffer) */
};

/* One ring buffer per CPU, looked up by the current CPU id. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* set to the number of possible CPUs by user space */
	__type(key, __u32);
	__array(values, struct inner_rb);
} rbs SEC(".maps");

/* Per-CPU bookkeeping. Events that could not be written (ring buffer full) are counted in
 * `pending` from `first_ts` on; the next event that finds room is preceded by a KL_LOST record
 * saying so, which places the gap in the CPU's stream. Only the programs of one CPU touch its
 * entry; a program interrupted on the loss path by another (an interrupt's) can miscount by one. */
struct cpu_state {
	__u64 pending;      /* events lost since the last KL_LOST record */
	__u64 first_ts;     /* time of the first of them */
	__u64 lost;         /* events lost in all */
	__u64 switch_calls; /* runs of the sched_switch program */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} state SEC(".maps");

/* Thread ids of the followed process tree (only used when filter_on). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tracked SEC(".maps");

static __always_inline bool is_tracked(__u32 tid)
{
	return bpf_map_lookup_elem(&tracked, &tid) != NULL;
}

static __always_inline bool current_tracked(void)
{
	if (!filter_on)
		return true;
	return is_tracked((__u32)bpf_get_current_pid_tgid());
}

/* The ring buffer the current record was reserved in (one per CPU, so no locking needed). */
static __always_inline void *cpu_rb(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&rbs, &cpu);
}

/* Submit without waking the consumer unless its buffer is over half full: the consumer polls
 * every 100 ms anyway (like klogger'03's export daemon). Waking it for every record would make
 * the recorder itself the busiest source of context switches. Only about one record in 64 (by the
 * low bits of its timestamp) asks how full the buffer is: the query is a helper call, about 13 ns
 * per event when every record made it, and half a buffer (2 MiB by default) is ~29,000 records. */
static __always_inline void submit(struct kl_event *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	if ((e->ts & 63) == 0) {
		void *rb = cpu_rb();
		if (rb && bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > wakeup_bytes)
			flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(e, flags);
}

static __always_inline struct cpu_state *cpu_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline void zero_tail(struct kl_event *e)
{
	e->flags = 0;
	e->pid = 0;
	e->tgid = 0;
	e->pid2 = 0;
	e->tgid2 = 0;
	e->arg = 0;
}

static __always_inline struct kl_event *reserve(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = bpf_map_lookup_elem(&rbs, &cpu);
	struct cpu_state *st = cpu_state();
	struct kl_event *e;

	if (!rb || !st)
		return NULL;
	if (st->pending) {
		/* Room again after a loss: say where the gap is before the next event. */
		struct kl_event *m = bpf_ringbuf_reserve(rb, sizeof(*m), 0);
		if (m) {
			m->ts = st->first_ts;
			m->cpu = cpu;
			m->type = KL_LOST;
			zero_tail(m);
			m->arg = st->pending;
			__builtin_memset(m->comm, 0, sizeof(m->comm));
			__builtin_memset(m->comm2, 0, sizeof(m->comm2));
			bpf_ringbuf_submit(m, BPF_RB_NO_WAKEUP);
			st->pending = 0;
		}
	}
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		if (!st->pending)
			st->first_ts = bpf_ktime_get_ns();
		st->pending += 1;
		st->lost += 1;
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->cpu = cpu;
	zero_tail(e);
	return e;
}

/* tp_btf arguments are BTF-typed pointers: plain loads (checked by the verifier, relocated by
 * CO-RE) are much cheaper than bpf_probe_read_kernel*() helper calls. comm is copied as two
 * 8-byte words. */
static __always_inline void copy_comm(char *dst, struct task_struct *p)
{
	__u64 *d = (__u64 *)dst;
	__u64 *s = (__u64 *)p->comm;
	d[0] = s[0];
	d[1] = s[1];
}

static __always_inline void fill_task(struct kl_event *e, struct task_struct *p, int second)
{
	if (second) {
		e->pid2 = p->pid;
		e->tgid2 = p->tgid;
		copy_comm(e->comm2, p);
	} else {
		e->pid = p->pid;
		e->tgid = p->tgid;
		copy_comm(e->comm, p);
	}
}

static __always_inline void fill_current(struct kl_event *e)
{
	fill_task(e, bpf_get_current_task_btf(), 0);
	__builtin_memset(e->comm2, 0, sizeof(e->comm2));
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct cpu_state *st = cpu_state();
	if (st)
		st->switch_calls += 1;
	if (filter_on && !is_tracked(prev->pid) && !is_tracked(next->pid))
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_SWITCH;
	e->flags = preempt ? KL_F_PREEMPT : 0;
	e->arg = prev_state;
	fill_task(e, prev, 0);
	fill_task(e, next, 1);
	submit(e);
	return 0;
}

static __always_inline int wakeup(struct task_struct *p, __u16 type)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = type;
	fill_task(e, p, 0);
	fill_task(e, bpf_get_current_task_btf(), 1);
	e->arg = p->thread_info.cpu;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	return wakeup(p, KL_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	return wakeup(p, KL_WAKEUP_NEW);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->pid;
	if (filter_on) {
		if (!is_tracked(ppid))
			return 0;
		__u32 cpid = child->pid;
		__u8 one = 1;
		bpf_map_update_elem(&tracked, &cpid, &one, BPF_ANY);
	}
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_FORK;
	fill_task(e, parent, 0);
	fill_task(e, child, 1);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_EXEC;
	fill_task(e, p, 0);
	__builtin_memset(e->comm2, 0, sizeof(e->comm2));
	e->arg = old_pid;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_EXIT;
	fill_task(e, p, 0);
	__builtin_memset(e->comm2, 0, sizeof(e->comm2));
	submit(e);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrtimer, struct hrtimer *timer, ktime_t *now)
{
	__u64 fn = (__u64)BPF_CORE_READ(timer, function);
	bool tick = tick_fn && fn == tick_fn;
	/* Ticks are always recorded (they are few, and the billing replay needs every CPU's). */
	if (!tick && !current_tracked())
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = tick ? KL_TICK : KL_HRTIMER;
	fill_current(e);
	e->arg = fn;
	submit(e);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq)
{
	if (!current_tracked())
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_IRQ_ENTRY;
	fill_current(e);
	e->arg = irq;
	submit(e);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	if (!current_tracked())
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_IRQ_EXIT;
	fill_current(e);
	e->arg = irq;
	e->flags = (__u16)ret;
	submit(e);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	if (!current_tracked())
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_SOFTIRQ_ENTRY;
	fill_current(e);
	e->arg = vec;
	submit(e);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	if (!current_tracked())
		return 0;
	struct kl_event *e = reserve();
	if (!e)
		return 0;
	e->type = KL_SOFTIRQ_EXIT;
	fill_current(e);
	e->arg = vec;
	submit(e);
	return 0;
}
