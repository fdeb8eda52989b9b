package io.wheelbeat.loadtest;

/**
 * Turns the server loops' counters into timer operations, handler by handler, so that the
 * progress lines and the report count the same things. What each number counts:
 * <ul>
 *   <li>wheel: schedules, cancels and expirations are the shared wheels' own counters; re-arms
 *       are read batches that reached the handler.</li>
 *   <li>Netty: its timers are tasks in the event loop's priority queue, so schedules are the
 *       {@code schedule(...)} calls on the server loops (one per channel at start, one each time
 *       its task runs); cancels are channels closed while it was active (closing cancels its one
 *       pending task); expirations are task runs, i.e. schedules minus the initial one per
 *       channel; re-arms are read batches that reached it (it stamps a time on each).</li>
 *   <li>none: no timers; zero throughout (the loops' scheduled-task count shows what else
 *       schedules on the server loops: nothing, in these pipelines).</li>
 * </ul>
 */
final class TimerAccounting {

    static final String WHEEL_NOTE = "schedules, cancels, expirations: the shared wheels' counters; "
            + "re-arms: read batches that reached the handler; loop tasks: schedule() calls on the server loops "
            + "(the wheels' driving task)";
    static final String NETTY_NOTE = "schedules: schedule() calls on the server loops (one per channel at start, "
            + "one per task run); cancels: channels closed while the handler was active (each cancels its pending "
            + "task); expirations: task runs (schedules minus one initial schedule per channel); re-arms: read "
            + "batches that reached the handler (it stamps a time on each)";
    /** The work {@code ExecutorDrivenWheel} promises one run of its driving task never exceeds. */
    static final int WHEEL_RUN_BOUND = 4096;

    static final String NONE_NOTE =
            "no idle handler, no timers; loop tasks shows what else schedules on the server loops";

    private TimerAccounting() {}

    /** Timer operations counted as described above. */
    record Counts(long schedules, long cancels, long reArms, long expirations, long pending) {}

    static Counts counts(IdleHandlerKind kind, LoopSnapshot s) {
        switch (kind) {
            case WHEEL:
                return new Counts(
                        s.wheelScheduled(), s.wheelCancelled(), s.readBatches(), s.wheelExpired(), s.wheelPending());
            case NETTY:
                return new Counts(
                        s.loopScheduledTasks(),
                        s.channelsClosed(),
                        s.readBatches(),
                        Math.max(0, s.loopScheduledTasks() - s.channelsActive()),
                        s.channelsActive() - s.channelsClosed());
            default:
                return new Counts(0, 0, 0, 0, 0);
        }
    }

    static RunResult.Timers report(IdleHandlerKind kind, LoopSnapshot s, double seconds) {
        Counts c = counts(kind, s);
        String source;
        String note;
        switch (kind) {
            case WHEEL:
                source = "shared wheels' counters";
                note = WHEEL_NOTE;
                break;
            case NETTY:
                source = "server event loops' schedule() calls and channel closes";
                note = NETTY_NOTE;
                break;
            default:
                source = "none";
                note = NONE_NOTE;
                break;
        }
        return new RunResult.Timers(
                source,
                c.schedules(),
                c.cancels(),
                c.reArms(),
                c.expirations(),
                s.loopScheduledTasks(),
                c.pending(),
                c.schedules() / seconds,
                c.cancels() / seconds,
                c.reArms() / seconds,
                c.expirations() / seconds,
                s.loopScheduledTasks() / seconds,
                s.largestWheelRun(),
                s.largestWheelRuns(),
                note);
    }
}
