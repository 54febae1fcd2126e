/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_smart's wake-up preemption: the one thing scx_rustland_core's BPF half does not do.
 *
 * A user-space scheduler learns of a wake-up only when a CPU next enters the kernel's dispatch path,
 * that is when the running task's slice ends or it blocks: it cannot preempt. SMART must: a real-time
 * request that arrives is put into the working schedule at once (dissertation §4.2, §5.3). So for the
 * threads scx_smart lists in `urgent` (those that hold a libsmart time constraint), a wake-up kicks the
 * CPU the thread was placed on with SCX_KICK_PREEMPT: the running task's slice ends now, the CPU
 * enters dispatch, runs the user-space scheduler (the woken thread is queued to it), and the policy
 * decides, as if the kernel had preempted. The policy may still let the preempted task go on.
 *
 * The kick may find the user-space scheduler unable to run at once: it is itself on the CPU (past
 * reading its queue), or asleep. So until it acknowledges the wake-up (it clears urgent_since before
 * reading its queue), the CPU it leaves is kicked again, and so is its own wake-up.
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
	__type(value, u32);	/* unused */
} urgent SEC(".maps");

/* The user-space scheduler's thread id, and whether to kick at all (set before loading; without
 * kicks the program only measures the latency below, to show what preemption buys). */
const volatile u32 usersched_tid;
const volatile bool kick_enabled = true;

/* Wake-ups of listed threads, and kicks sent. */
u64 nr_wakeups;
u64 nr_kicks;
/*
 * When the first listed thread's wake-up that the user-space scheduler has not acknowledged happened
 * (bpf_ktime_get_ns), 0 if none. User space swaps it with 0 before it reads its queue.
 */
u64 urgent_since;

static void kick_cpu(s32 cpu)
{
	if (cpu < 0 || !kick_enabled)
		return;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	__sync_fetch_and_add(&nr_kicks, 1);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(smart_wakeup, struct task_struct *p)
{
	u32 tid = p->pid;

	if (tid == usersched_tid) {
		if (urgent_since)
			kick_cpu(scx_bpf_task_cpu(p));
		return 0;
	}
	if (!bpf_map_lookup_elem(&urgent, &tid))
		return 0;
	__sync_fetch_and_add(&nr_wakeups, 1);
	__sync_val_compare_and_swap(&urgent_since, 0, bpf_ktime_get_ns());
	kick_cpu(scx_bpf_task_cpu(p));
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(smart_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (urgent_since && prev->pid == usersched_tid)
		kick_cpu(bpf_get_smp_processor_id());
	return 0;
}
