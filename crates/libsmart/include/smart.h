/*
 * smart.h: the application interface of SMART (Nieh 1999, ch. 3 §3.4) for the scx_smart scheduler.
 *
 * An application registers once per process, then each thread may
 *   - set a time constraint on the block of code it is about to run: an absolute deadline, an estimate
 *     of the CPU time it needs, and a notify time after which the scheduler tells it if the deadline
 *     will not be met (smart_set_time_constraint); clear it afterwards (smart_clear_time_constraint);
 *   - receive notifications: a real-time signal (SIGRTMIN+4 by default) sent to that very thread with
 *     the deadline in si_value, handled by libsmart (smart_on_notify adds your own callback), and a
 *     counter read by smart_take_notification (works without any handler);
 *   - read its availability: the CPU share it consumes and the share its priority and share entitle
 *     it to (smart_get_availability);
 *   - lower its priority or share; raising either above the default needs CAP_SYS_NICE.
 *
 * All times are CLOCK_MONOTONIC nanoseconds (smart_now()). Setting or clearing a constraint is a few
 * stores to memory shared with the scheduler: no system call after the thread's first call.
 *
 * Every function returns 0 (or a count) on success and a negative errno on failure, and also sets
 * errno. Errors: -ENOTCONN not registered; -ECONNREFUSED/-ENOENT no scheduler at the socket
 * ($SMART_SOCKET, default /run/smart/scx_smart.sock); -EPERM raising priority/share without
 * CAP_SYS_NICE; -EINVAL bad argument; -ENOSPC no free thread slot; -EBUSY the notification signal
 * already has a handler; -EAGAIN availability not yet known. None of these functions may be called
 * from a signal handler.
 *
 * Link: cc app.c -I crates/libsmart/include -L target/release -llibsmart        (shared)
 *   or: cc app.c ... target/release/liblibsmart.a -lpthread -ldl -lm -lrt -lgcc_s (static)
 */
#ifndef SMART_H
#define SMART_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* notify_time meaning "never notify" (the default of SMART §3.4.2). */
#define SMART_NEVER UINT64_MAX
/* The default priority and share; above them needs CAP_SYS_NICE. */
#define SMART_DEFAULT_PRIORITY 0
#define SMART_DEFAULT_SHARE 1

/* Register this process with default options: socket $SMART_SOCKET or /run/smart/scx_smart.sock,
 * 256 thread slots, notifications with SIGRTMIN+4. Calling it again does nothing. */
int smart_register(void);

/* Register with options: socket NULL = default; signal -1 = default, 0 = no signal (poll
 * smart_take_notification), else a signal in SIGRTMIN..SIGRTMAX; slots 0 = default. */
int smart_register_opts(const char *socket, int signal, unsigned slots);

/* Set the calling thread's time constraint. deadline: absolute ns. cpu_estimate: ns, 0 = none (the
 * scheduler assumes all the time until the deadline). notify_time: absolute ns after which a predicted
 * miss is notified; 0 = as soon as it is seen; deadline = only once it passed; SMART_NEVER = never. */
int smart_set_time_constraint(uint64_t deadline, uint64_t cpu_estimate, uint64_t notify_time);

/* The same, for periodic work: period in ns (0 = aperiodic) lets the scheduler count the thread's
 * future demand (cpu_estimate / period) when it decides what can be met. */
int smart_set_periodic_constraint(uint64_t deadline, uint64_t cpu_estimate, uint64_t notify_time,
                                  uint64_t period);

/* Clear the calling thread's time constraint. */
int smart_clear_time_constraint(void);

/* The calling thread's availability, in percent of one CPU. -EAGAIN until the scheduler wrote it. */
int smart_get_availability(double *consumption_rate, double *allocation_rate);

/* Priority: larger is more important; 0 is the default. Share: 1 is the default, 0 runs only when
 * nothing with a share wants the CPU. Above the defaults: -EPERM without CAP_SYS_NICE. */
int smart_set_priority(int priority);
int smart_set_share(unsigned share);

/* 1 and *deadline if a notification is pending for the calling thread (then it is consumed), 0 if
 * none. */
int smart_take_notification(uint64_t *deadline);

/* Call handler(deadline) in signal context on each notification signal; NULL removes it. The handler
 * must be async-signal-safe (set a flag, write to a pipe). */
int smart_on_notify(void (*handler)(uint64_t deadline));

/* CLOCK_MONOTONIC now, in nanoseconds. */
uint64_t smart_now(void);

/* ---- The shared-memory layout (for tools and debuggers; applications use the calls above) ------------
 * A region is one struct smart_header followed by nslots struct smart_slot. Every field is accessed
 * atomically by both sides. Slot bytes 0..63 are written by the owning thread under the seqlock `seq`
 * (odd while writing); bytes 64..127 by the scheduler. Must match crates/libsmart/src/layout.rs. */

#define SMART_MAGIC 0x4d48535452414d53ULL /* "SMARTSHM" little-endian */
#define SMART_LAYOUT_VERSION 1u
#define SMART_TID_CLAIMING 0x80000000u /* in tid while a thread claims the slot: treat as free */
#define SMART_FLAG_CONSTRAINT 1u
#define SMART_FLAG_PRIORITY 2u
#define SMART_FLAG_SHARE 4u

#ifdef __cplusplus
#define SMART_STATIC_ASSERT static_assert
#else
#define SMART_STATIC_ASSERT _Static_assert
#endif

struct smart_header {
	uint64_t magic;        /*  0 SMART_MAGIC */
	uint32_t version;      /*  8 SMART_LAYOUT_VERSION */
	uint32_t header_size;  /* 12 128 */
	uint32_t slot_size;    /* 16 128 */
	uint32_t nslots;       /* 20 */
	uint32_t signal;       /* 24 notification signal, 0 = none */
	uint32_t pid;          /* 28 as the application sees it (informative) */
	uint32_t claims;       /* 32 bumped when a slot changes owner */
	uint32_t privileged;   /* 36 written by the scheduler: may raise priority/share */
	uint32_t reserved[22]; /* 40 */
} __attribute__((aligned(64)));

struct smart_slot {
	/* written by the owning thread (seqlock) */
	uint32_t seq;          /*  0 odd while writing */
	uint32_t tid;          /*  4 owner, 0 = free (| SMART_TID_CLAIMING while claiming) */
	uint32_t generation;   /*  8 bumped per new owner */
	uint32_t flags;        /* 12 SMART_FLAG_* */
	uint64_t deadline;     /* 16 absolute ns */
	uint64_t cpu_estimate; /* 24 ns, 0 = none */
	uint64_t notify_time;  /* 32 absolute ns, SMART_NEVER = never */
	uint64_t period;       /* 40 ns, 0 = aperiodic */
	int32_t priority;      /* 48 */
	uint32_t share;        /* 52 */
	uint64_t taken;        /* 56 application-private: notifications consumed */
	/* written by the scheduler */
	uint64_t notifications;          /* 64 count */
	uint64_t last_notified_deadline; /* 72 */
	union {
		uint64_t availability; /* 80 UINT64_MAX = not yet written */
		struct {
			float consumption_rate; /* 80 percent of one CPU */
			float allocation_rate;  /* 84 */
		} rates;
	};
	uint32_t seen_seq;     /* 88 the seq the scheduler last read */
	uint32_t last_passed;  /* 92 1 = the last notification came after the deadline */
	uint64_t reserved[4];  /* 96 */
} __attribute__((aligned(64)));

SMART_STATIC_ASSERT(sizeof(struct smart_header) == 128, "smart_header size");
SMART_STATIC_ASSERT(sizeof(struct smart_slot) == 128, "smart_slot size");
SMART_STATIC_ASSERT(offsetof(struct smart_header, claims) == 32, "smart_header.claims");
SMART_STATIC_ASSERT(offsetof(struct smart_header, privileged) == 36, "smart_header.privileged");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, deadline) == 16, "smart_slot.deadline");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, priority) == 48, "smart_slot.priority");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, taken) == 56, "smart_slot.taken");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, notifications) == 64, "smart_slot.notifications");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, availability) == 80, "smart_slot.availability");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, seen_seq) == 88, "smart_slot.seen_seq");
SMART_STATIC_ASSERT(offsetof(struct smart_slot, last_passed) == 92, "smart_slot.last_passed");

#ifdef __cplusplus
}
#endif

#endif /* SMART_H */
