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
 * If the user-space scheduler itself is asleep at that moment (it naps briefly while a task it
 * dispatched has not started), the kick finds nothing to run it for; so its own wake-up is kicked
 * too while an urgent wake-up waits for it.
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

/* The user-space scheduler's thread id (set before loading). */
const volatile u32 usersched_tid;

/* Wake-ups of listed threads, and kicks sent (for them and for the scheduler's own wake-ups). */
u64 nr_wakeups;
u64 nr_kicks;
/*
 * From a listed thread's wake-up to the next time the user-space scheduler runs: count, sum, max (ns).
 * waiting_since is that wake-up's time while the scheduler has not run since, else 0.
 */
u64 nr_latency, latency_sum_ns, latency_max_ns;
u64 waiting_since;

static void kick(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);

	if (cpu < 0)
		return;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	__sync_fetch_and_add(&nr_kicks, 1);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(smart_wakeup, struct task_struct *p)
{
	u32 tid = p->pid;

	if (tid == usersched_tid) {
		if (waiting_since)
			kick(p);
		return 0;
	}
	if (!bpf_map_lookup_elem(&urgent, &tid))
		return 0;
	__sync_fetch_and_add(&nr_wakeups, 1);
	if (!waiting_since)
		waiting_since = bpf_ktime_get_ns();
	kick(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(smart_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u64 since = waiting_since, d;

	if (!since || next->pid != usersched_tid)
		return 0;
	waiting_since = 0;
	d = bpf_ktime_get_ns() - since;
	__sync_fetch_and_add(&nr_latency, 1);
	__sync_fetch_and_add(&latency_sum_ns, d);
	if (d > latency_max_ns)
		latency_max_ns = d;
	return 0;
}
