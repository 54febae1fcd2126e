/* A C application of libsmart, driven by tests/c_api.rs: registers with the test scheduler named by
 * $SMART_SOCKET, sets a constraint, reports its tid, waits for the parent (which notifies it), then
 * reports what it received. Each line is "key value". */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smart.h"

/* Every offset of the layout, checked by the compiler against the numbers layout.rs asserts. */
_Static_assert(offsetof(struct smart_header, magic) == 0, "");
_Static_assert(offsetof(struct smart_header, version) == 8, "");
_Static_assert(offsetof(struct smart_header, header_size) == 12, "");
_Static_assert(offsetof(struct smart_header, slot_size) == 16, "");
_Static_assert(offsetof(struct smart_header, nslots) == 20, "");
_Static_assert(offsetof(struct smart_header, signal) == 24, "");
_Static_assert(offsetof(struct smart_header, pid) == 28, "");
_Static_assert(offsetof(struct smart_slot, seq) == 0, "");
_Static_assert(offsetof(struct smart_slot, tid) == 4, "");
_Static_assert(offsetof(struct smart_slot, generation) == 8, "");
_Static_assert(offsetof(struct smart_slot, flags) == 12, "");
_Static_assert(offsetof(struct smart_slot, cpu_estimate) == 24, "");
_Static_assert(offsetof(struct smart_slot, notify_time) == 32, "");
_Static_assert(offsetof(struct smart_slot, period) == 40, "");
_Static_assert(offsetof(struct smart_slot, share) == 52, "");
_Static_assert(offsetof(struct smart_slot, last_notified_deadline) == 72, "");
_Static_assert(offsetof(struct smart_slot, rates.allocation_rate) == 84, "");

static volatile sig_atomic_t handled;
static volatile uint64_t handled_deadline;

static void on_notify(uint64_t deadline)
{
	handled_deadline = deadline;
	handled = 1;
}

int main(int argc, char **argv)
{
	char line[64];
	uint64_t deadline, got = 0;
	int r;

	alarm(5); /* watchdog */
	if (argc != 2)
		return 2;
	deadline = strtoull(argv[1], NULL, 10);
	if (smart_set_time_constraint(deadline, 1, 0) != -ENOTCONN)
		return 3; /* must refuse before registration */
	r = smart_register();
	printf("register %d\n", r);
	if (r)
		return 1;
	printf("on_notify %d\n", smart_on_notify(on_notify));
	printf("constraint %d\n", smart_set_time_constraint(deadline, 5000000, 0));
	printf("tid %d\n", gettid());
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin)) /* the parent notifies us, then writes a line */
		return 4;
	r = smart_take_notification(&got);
	printf("take %d\n", r);
	printf("deadline_match %d\n", got == deadline);
	printf("handled %d\n", handled && handled_deadline == deadline);
	printf("take_again %d\n", smart_take_notification(&got));
	printf("share %d\n", smart_set_share(0));
	printf("clear %d\n", smart_clear_time_constraint());
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 5;
	return 0;
}
