/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_smart's wake-up preemption: the one thing scx_rustland_core's BPF half does not do, taken here
 * as the policy's own answer, not by a rule of this program.
 *
 * A user-space scheduler learns of a wake-up only when a CPU next enters the kernel's dispatch path,
 * that is when the running task's slice ends or it blocks: it cannot preempt. SMART must: a real-time
 * request that arrives is put into the working schedule at once (dissertation §4.2, §5.3). So for the
 * threads scx_smart lists in `urgent` (those that hold a libsmart time constraint and sleep), user
 * space keeps, as the map's value, the CPU the policy would take for the thread if it woke now (the
 * core's forecast: the free CPU the policy selects, or the busy CPU it would preempt; -1 for none).
 * At the wake-up this program kicks that CPU with SCX_KICK_PREEMPT: its task's slice ends now, the
 * CPU enters dispatch, runs the user-space scheduler (the woken thread is queued to it), and the
 * policy decides there, as if the kernel had preempted. Every kick is counted per CPU (kicks_cpu), so
 * that user space reads the stop that follows as a preemption and not as a slice run out.
 *
 * The kick may find the user-space scheduler unable to run at once: it is itself on the CPU (past
 * reading its queue), or asleep. So until it acknowledges the wake-up (it clears urgent_since before
 * reading its queue), the CPU it leaves is kicked again, and so is its own wake-up.
 *
 * Once dispatched, the task the policy chose for a CPU it preempted waits in the CPU's queue, and on
 * several CPUs that CPU may have taken another task just before the dispatch reached the queue
 * (another CPU was emptying the dispatch ring at that moment). So user space names the task it
 * dispatched to carry out a preemption (dispatched_tid); until that task runs (or 20 ms pass), any
 * other task starting on its CPU is kicked off again, and the CPU takes the queue's head: the task the
 * policy chose. Dispatches reach each CPU's queue in the order the policy made them.
 *
 * It also measures, for user space to print: how long a task dispatched for a preemption takes to
 * start (the kernel's side of a preemption), and stalls of the machine itself (late timer expiries).
 *
 * sched_wakeup fires after the task was enqueued (ttwu_do_activate), so the queued record is already
 * in the ring buffer the user-space scheduler reads. scx_bpf_kick_cpu() is one of the sched_ext
 * kfuncs allowed in tracing programs; the kernel defers the kick itself to an irq_work.
 * SCX_KICK_PREEMPT is read from the kernel's BTF at load time (scx_utils::import_enums!).
 */
#include <scx/common.bpf.h>

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u32);	/* thread id */
	__type(value, s32);	/* the CPU to kick at its wake-up, -1 for none */
} urgent SEC(".maps");

/* The user-space scheduler's thread id, and whether to kick at all (set before loading; without
 * kicks the program only measures the latency below, to show what preemption buys). */
const volatile u32 usersched_tid;
const volatile bool kick_enabled = true;

/* Wake-ups of listed threads, and kicks sent: in all, and per CPU (SCX_KICK_PREEMPT, by this
 * program or at user space's request). */
#define MAX_CPUS 1024
u64 nr_wakeups;
u64 nr_kicks;
u64 kicks_cpu[MAX_CPUS];
/*
 * When the first listed thread's wake-up that the user-space scheduler has not acknowledged happened
 * (bpf_ktime_get_ns), 0 if none. User space swaps it with 0 before it reads its queue.
 */
u64 urgent_since;

/* The task last dispatched to carry out a preemption that has not started yet (0 = none), and when. */
u32 dispatched_tid;
u64 dispatched_at;

/*
 * From that dispatch to the task starting on a CPU: how many started, the sum and largest delay, and
 * how many took longer than a millisecond (what the kernel's side of a preemption costs).
 */
u64 nr_started;
u64 start_delay_sum;
u64 start_delay_max;
u64 nr_started_late;

/*
 * Blocks: scx_rustland_core queues a task to user space when it becomes runnable again, never when it
 * blocks, so the user-space scheduler would believe the CPU it ran on busy until it wakes. At every
 * switch away from a task that is not runnable any more, we send (pid, cpu, when it started running
 * there, now) through this ring buffer: the driver's `blocked`, sched_ext's `stopping(runnable=false)`.
 * Running starts are kept per CPU.
 */
struct blocked_rec {
	u32 pid;
	u32 cpu;
	u64 start;
	u64 stop;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} blocks SEC(".maps");

u64 running_since[MAX_CPUS];
u64 nr_blocks_lost;

/*
 * Stalls of the machine itself: timer expiries handled more than STALL_NS after they were due. A busy
 * CPU takes its scheduler tick every millisecond (HZ=1000), so a late tick means the CPU ran nothing at
 * all for that long: interrupts were off, or on a virtual machine its host ran something else on the
 * vCPU's physical CPU (under QEMU TCG, another host thread). Each late expiry goes into a ring: when
 * it was handled (bpf_ktime_get_ns) and how late; user space merges those of one interrupt. Guest
 * tests use them to tell a late scheduler from a machine that did not run (scx_smart --stall-log).
 */
#define STALL_NS 1000000ULL
#define NR_STALL_SLOTS 1024
struct stall {
	u64 end;
	u64 len;
};
struct stall stalls[NR_STALL_SLOTS];
u64 nr_stalls;

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(smart_timer_late, struct hrtimer *timer, ktime_t *now)
{
	ktime_t handled;
	s64 late;
	u64 i;

	/* `now` points to the timer base's clock reading on the stack: not a trusted pointer. */
	if (bpf_probe_read_kernel(&handled, sizeof(handled), now))
		return 0;
	late = handled - timer->node.expires;
	if (late <= (s64)STALL_NS)
		return 0;
	i = __sync_fetch_and_add(&nr_stalls, 1) & (NR_STALL_SLOTS - 1);
	stalls[i].end = bpf_ktime_get_ns();
	stalls[i].len = late;
	return 0;
}

/* Preempts `cpu` and counts it. */
static void preempt_cpu(s32 cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	__sync_fetch_and_add(&kicks_cpu[cpu & (MAX_CPUS - 1)], 1);
}

static void kick_cpu(s32 cpu)
{
	if (cpu < 0 || !kick_enabled)
		return;
	preempt_cpu(cpu);
	__sync_fetch_and_add(&nr_kicks, 1);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(smart_wakeup, struct task_struct *p)
{
	u32 tid = p->pid;
	s32 *cpu;

	if (tid == usersched_tid) {
		if (urgent_since)
			kick_cpu(scx_bpf_task_cpu(p));
		return 0;
	}
	cpu = bpf_map_lookup_elem(&urgent, &tid);
	if (!cpu)
		return 0;
	__sync_fetch_and_add(&nr_wakeups, 1);
	/* The policy would take no CPU for it now: it waits for the next decision, as any task. */
	if (*cpu < 0)
		return 0;
	__sync_val_compare_and_swap(&urgent_since, 0, bpf_ktime_get_ns());
	kick_cpu(*cpu);
	return 0;
}

/* A task that is not runnable at the switch blocked (or exited). */
static void report_block(bool preempt, struct task_struct *prev, s32 cpu, u64 now)
{
	struct blocked_rec *r;
	u64 start = 0;

	if (cpu >= 0 && cpu < MAX_CPUS)
		start = running_since[cpu & (MAX_CPUS - 1)];
	if (!prev->pid || prev->pid == usersched_tid || prev->__state == 0 /* TASK_RUNNING */)
		return;
	/* A task preempted on its way to sleep is still runnable: it comes back queued. */
	if (preempt)
		return;
	r = bpf_ringbuf_reserve(&blocks, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&nr_blocks_lost, 1);
		return;
	}
	r->pid = prev->pid;
	r->cpu = cpu;
	r->start = start;
	r->stop = now;
	bpf_ringbuf_submit(r, 0);
}

/* The user-space scheduler's preemption of a CPU it chose for a waking task (sched_ext's kick). */
struct kick_arg {
	s32 cpu;
};

SEC("syscall")
int smart_kick(struct kick_arg *arg)
{
	if (arg->cpu < 0 || arg->cpu >= MAX_CPUS)
		return -1;
	preempt_cpu(arg->cpu);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(smart_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	s32 this_cpu = bpf_get_smp_processor_id();
	u32 tid = dispatched_tid;
	u64 now = bpf_ktime_get_ns();

	report_block(preempt, prev, this_cpu, now);
	if (this_cpu >= 0 && this_cpu < MAX_CPUS)
		running_since[this_cpu & (MAX_CPUS - 1)] = now;

	if (urgent_since && prev->pid == usersched_tid) {
		kick_cpu(this_cpu);
		return 0;
	}
	if (!tid)
		return 0;
	if (next->pid == tid) {
		u64 delay = bpf_ktime_get_ns() - dispatched_at;

		if (__sync_val_compare_and_swap(&dispatched_tid, tid, 0) == tid) {
			__sync_fetch_and_add(&nr_started, 1);
			__sync_fetch_and_add(&start_delay_sum, delay);
			if (delay > start_delay_max)
				start_delay_max = delay;
			if (delay > 1000000)
				__sync_fetch_and_add(&nr_started_late, 1);
		}
		return 0;
	}
	if (bpf_ktime_get_ns() - dispatched_at > 20000000) {
		__sync_val_compare_and_swap(&dispatched_tid, tid, 0);
		return 0;
	}
	/* The scheduler itself and the idle task may run; anything else yields to the task the policy chose. */
	if (next->pid && next->pid != usersched_tid) {
		struct task_struct *p = bpf_task_from_pid(tid);

		if (!p)
			return 0;
		if (scx_bpf_task_cpu(p) == this_cpu)
			kick_cpu(this_cpu);
		bpf_task_release(p);
	}
	return 0;
}
