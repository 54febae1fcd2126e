// SPDX-License-Identifier: GPL-2.0
//
// klogger BPF side: one fixed-size record per scheduling event, written into a per-CPU ring buffer
// in batches of KL_BATCH records (see below).
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
// What a record costs, in CPU time of the ping-pong of `klogger bench --pin --work-us 0` on the
// development VM (2026-11-27): about 70 ns, of which ~27 ns is the tracepoint running a program at
// all, ~22 ns bpf_ktime_get_ns(), ~6 ns filling the record and ~15 ns the copy of its batch into
// the ring buffer (memory last read by the consumer's CPU). Before batches it was about 90 ns.
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

/* Records are written in batches: a program fills the next slot of its CPU's batch (in the per-CPU
 * `state`, memory that stays in that CPU's cache), and the program that fills the last slot
 * copies the whole batch into the CPU's ring buffer with one bpf_ringbuf_output(). Reserving and
 * submitting every record on its own (two helper calls, a lock and an atomic exchange on ring
 * memory another CPU reads) was the largest part of what a record cost. A program that runs while
 * another one of the same CPU is filling the batch (an interrupt's program inside a softirq's)
 * finds `busy` set and writes its record into the ring buffer on its own, as before; fork, exec
 * and exit, which run preemptible, always do. The reader sorts records by time, so a record
 * written past a batch is placed all the same. What is left in a batch when recording stops is
 * read from the map by user space after the programs are detached.
 * Weak: a recorder killed without stopping (SIGKILL) leaves up to KL_BATCH - 1 records of each CPU
 * unwritten, from whenever that CPU last had events. */
#define KL_BATCH 16

#define barrier() asm volatile("" ::: "memory")

/* Per-CPU bookkeeping. Events that could not be written (ring buffer full) are counted in
 * `pending` from `first_ts` on; the next record written after that is preceded by a KL_LOST
 * record saying so, which places the gap in the CPU's stream. Only the programs of one CPU touch
 * its entry; a program interrupted on the loss path by another (an interrupt's) can miscount by
 * one. Must match `record::CpuState` (user space reads the counters and the last batch). */
struct cpu_state {
	__u64 pending;      /* events lost since the last KL_LOST record */
	__u64 first_ts;     /* time of the first of them */
	__u64 lost;         /* events lost in all */
	__u64 switch_calls; /* runs of the sched_switch program */
	__u32 n;            /* records in `batch` */
	__u32 busy;         /* a program is filling `batch` */
	struct kl_event batch[KL_BATCH];
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

/* The ring buffer of the current CPU (one per CPU, so no CPU waits for another's lock). */
static __always_inline void *cpu_rb(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&rbs, &cpu);
}

static __always_inline struct cpu_state *cpu_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&state, &zero);
}

/* Wake the consumer only when its buffer is over half full: it polls every 100 ms anyway (like
 * klogger'03's export daemon), and waking it for every record would make the recorder itself the
 * busiest source of context switches. Asked once per batch (or per record written on its own,
 * which is rare); half a buffer (2 MiB by default) is ~29,000 records. */
static __always_inline __u64 wakeup_flag(void *rb)
{
	return bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									 : BPF_RB_NO_WAKEUP;
}

static __always_inline void lose(struct cpu_state *st, __u64 n, __u64 ts)
{
	if (!st->pending)
		st->first_ts = ts;
	st->pending += n;
	st->lost += n;
}

/* Room again after a loss: say where the gap is before the next record. */
static __always_inline void report_loss(void *rb, struct cpu_state *st)
{
	struct kl_event *m = bpf_ringbuf_reserve(rb, sizeof(*m), 0);
	if (!m)
		return;
	m->ts = st->first_ts;
	m->cpu = bpf_get_smp_processor_id();
	m->type = KL_LOST;
	m->flags = 0;
	m->pid = 0;
	m->tgid = 0;
	m->pid2 = 0;
	m->tgid2 = 0;
	m->arg = st->pending;
	__builtin_memset(m->comm, 0, sizeof(m->comm));
	__builtin_memset(m->comm2, 0, sizeof(m->comm2));
	bpf_ringbuf_submit(m, BPF_RB_NO_WAKEUP);
	st->pending = 0;
}

/* A record written on its own, straight into the ring buffer (see above for when). */
static __always_inline struct kl_event *reserve(struct cpu_state *st)
{
	void *rb = cpu_rb();
	struct kl_event *e;

	if (!rb)
		return NULL;
	if (st->pending)
		report_loss(rb, st);
	e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		lose(st, 1, bpf_ktime_get_ns());
		return NULL;
	}
	e->ts = bpf_ktime_get_ns();
	e->cpu = bpf_get_smp_processor_id();
	return e;
}

static __always_inline void submit(struct kl_event *e)
{
	void *rb = cpu_rb();
	bpf_ringbuf_submit(e, rb ? wakeup_flag(rb) : BPF_RB_NO_WAKEUP);
}

/* The next slot of the CPU's batch, which this program holds until stage_end(). */
static __always_inline struct kl_event *stage_begin(struct cpu_state *st)
{
	struct kl_event *e;

	st->busy = 1;
	barrier(); /* busy is set before the slot is taken (an interrupt sees one or the other) */
	e = &st->batch[st->n & (KL_BATCH - 1)];
	e->ts = bpf_ktime_get_ns();
	e->cpu = bpf_get_smp_processor_id();
	return e;
}

/* The slot is filled: a full batch goes into the ring buffer in one copy. */
static __always_inline void stage_end(struct cpu_state *st)
{
	__u32 n = st->n + 1;

	if (n >= KL_BATCH) {
		void *rb = cpu_rb();
		if (rb && st->pending)
			report_loss(rb, st);
		if (!rb || bpf_ringbuf_output(rb, st->batch, sizeof(st->batch), wakeup_flag(rb)))
			lose(st, KL_BATCH, st->batch[0].ts);
		n = 0;
	}
	st->n = n;
	barrier(); /* the batch is complete before another program may take a slot */
	st->busy = 0;
}

/* Writes one record of the CPU whose state is `st`: FILL, a statement over `e`, fills every
 * field but ts and cpu. */
#define RECORD_IN(st, FILL)                                    \
	do {                                                   \
		if (!st->busy) {                               \
			struct kl_event *e = stage_begin(st);  \
			FILL;                                  \
			stage_end(st);                         \
		} else {                                       \
			struct kl_event *e = reserve(st);      \
			if (!e)                                \
				return 0;                      \
			FILL;                                  \
			submit(e);                             \
		}                                              \
	} while (0)

/* The same, the CPU's state looked up first. */
#define RECORD(FILL)                                           \
	do {                                                   \
		struct cpu_state *st = cpu_state();            \
		if (!st)                                       \
			return 0;                              \
		RECORD_IN(st, FILL);                           \
	} while (0)

/* The same, always on its own (programs that run preemptible must not hold the batch). */
#define RECORD_ALONE(FILL)                                     \
	do {                                                   \
		struct cpu_state *st = cpu_state();            \
		if (!st)                                       \
			return 0;                              \
		struct kl_event *e = reserve(st);              \
		if (!e)                                        \
			return 0;                              \
		FILL;                                          \
		submit(e);                                     \
	} while (0)

/* tp_btf arguments are BTF-typed pointers: plain loads (checked by the verifier, relocated by
 * CO-RE) are much cheaper than bpf_probe_read_kernel*() helper calls. comm is copied as two
 * 8-byte words. Every field of a record is written once (a record in a batch slot or in the ring
 * holds whatever was there before). */
static __always_inline void copy_comm(char *dst, struct task_struct *p)
{
	__u64 *d = (__u64 *)dst;
	__u64 *s = (__u64 *)p->comm;
	d[0] = s[0];
	d[1] = s[1];
}

static __always_inline void no_comm(char *dst)
{
	__u64 *d = (__u64 *)dst;
	d[0] = 0;
	d[1] = 0;
}

/* A record about two tasks: `p` (pid, tgid, comm) and `q` (pid2, tgid2, comm2). */
static __always_inline void fill2(struct kl_event *e, __u16 type, __u16 flags, __u64 arg,
				  struct task_struct *p, struct task_struct *q)
{
	e->type = type;
	e->flags = flags;
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->pid2 = q->pid;
	e->tgid2 = q->tgid;
	e->arg = arg;
	copy_comm(e->comm, p);
	copy_comm(e->comm2, q);
}

/* A record about one task `p`. */
static __always_inline void fill1(struct kl_event *e, __u16 type, __u16 flags, __u64 arg,
				  struct task_struct *p)
{
	e->type = type;
	e->flags = flags;
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->pid2 = 0;
	e->tgid2 = 0;
	e->arg = arg;
	copy_comm(e->comm, p);
	no_comm(e->comm2);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct cpu_state *st = cpu_state();
	if (!st)
		return 0;
	st->switch_calls += 1;
	if (filter_on && !is_tracked(prev->pid) && !is_tracked(next->pid))
		return 0;
	RECORD_IN(st, fill2(e, KL_SWITCH, preempt ? KL_F_PREEMPT : 0, prev_state, prev, next));
	return 0;
}

static __always_inline int wakeup(struct task_struct *p, __u16 type)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	RECORD(fill2(e, type, 0, p->thread_info.cpu, p, bpf_get_current_task_btf()));
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
	RECORD_ALONE(fill2(e, KL_FORK, 0, 0, parent, child));
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	RECORD_ALONE(fill1(e, KL_EXEC, 0, old_pid, p));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	if (filter_on && !is_tracked(p->pid))
		return 0;
	RECORD_ALONE(fill1(e, KL_EXIT, 0, 0, p));
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
	RECORD(fill1(e, tick ? KL_TICK : KL_HRTIMER, 0, fn, bpf_get_current_task_btf()));
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq)
{
	if (!current_tracked())
		return 0;
	RECORD(fill1(e, KL_IRQ_ENTRY, 0, irq, bpf_get_current_task_btf()));
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	if (!current_tracked())
		return 0;
	RECORD(fill1(e, KL_IRQ_EXIT, (__u16)ret, irq, bpf_get_current_task_btf()));
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	if (!current_tracked())
		return 0;
	RECORD(fill1(e, KL_SOFTIRQ_ENTRY, 0, vec, bpf_get_current_task_btf()));
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	if (!current_tracked())
		return 0;
	RECORD(fill1(e, KL_SOFTIRQ_EXIT, 0, vec, bpf_get_current_task_btf()));
	return 0;
}
