// Package rtio is how the emulator's packet threads wait: on OS threads
// of their own, with high priority when the process may have it, in
// epoll rather than in Go's network poller. A wake-up then takes
// microseconds even on a busy machine, where the ordinary scheduler and
// Go's millisecond timers would add milliseconds.
package rtio
