package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.List;

/**
 * The server loops' counters at one moment, summed over the loops.
 *
 * @param loopScheduledTasks calls to {@code schedule(...)} on the server loops: Netty's
 *     {@code IdleStateHandler} makes one per channel when it starts and one each time its timer
 *     task runs (it re-arms for the time left, or for a full period after firing); a shared
 *     wheel makes one each time it re-aims its single driving task; on a {@code WheelIoEventLoopGroup},
 *     the timers scheduled on the loops' own wheels, which every {@code schedule(...)} lands on
 * @param channelsActive server channels that became active
 * @param channelsClosed server channels that became inactive
 * @param messages {@code channelRead} calls of the server pipelines (the local transport, like
 *     TCP, may coalesce small buffers that queue up together into one read)
 * @param readBatches read batches ({@code channelReadComplete}) that reached the idle handler:
 *     each is one chance for it to push a deadline back, i.e. one re-arm
 * @param firstIdleEvents first reader-idle events of an idle period
 * @param repeatIdleEvents later reader-idle events of the same idle period
 * @param wheelScheduled timers ever placed on the loops' shared wheels (0 without a wheel)
 * @param wheelCancelled timers cancelled on the shared wheels
 * @param wheelExpired timers that fired on the shared wheels
 * @param wheelPending timers pending on the shared wheels now
 * @param largestWheelRuns per loop, in the group's order, the most work one run of the task
 *     driving the wheel the arm uses on it did (timers fired plus moved): the wheel handler's, or
 *     the {@code WheelIoEventLoopGroup} loop's own; empty where the arm uses no wheel
 */
record LoopSnapshot(
        long loopScheduledTasks,
        long channelsActive,
        long channelsClosed,
        long messages,
        long readBatches,
        long firstIdleEvents,
        long repeatIdleEvents,
        long wheelScheduled,
        long wheelCancelled,
        long wheelExpired,
        long wheelPending,
        List<Integer> largestWheelRuns) {

    static final LoopSnapshot ZERO = new LoopSnapshot(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, List.of());

    LoopSnapshot {
        largestWheelRuns = List.copyOf(largestWheelRuns);
    }

    LoopSnapshot plus(LoopSnapshot o) {
        return new LoopSnapshot(
                loopScheduledTasks + o.loopScheduledTasks,
                channelsActive + o.channelsActive,
                channelsClosed + o.channelsClosed,
                messages + o.messages,
                readBatches + o.readBatches,
                firstIdleEvents + o.firstIdleEvents,
                repeatIdleEvents + o.repeatIdleEvents,
                wheelScheduled + o.wheelScheduled,
                wheelCancelled + o.wheelCancelled,
                wheelExpired + o.wheelExpired,
                wheelPending + o.wheelPending,
                concat(largestWheelRuns, o.largestWheelRuns));
    }

    /** The largest run over the loops, or -1 where the arm uses no wheel. */
    int largestWheelRun() {
        return largestWheelRuns.stream().mapToInt(Integer::intValue).max().orElse(-1);
    }

    private static List<Integer> concat(List<Integer> a, List<Integer> b) {
        List<Integer> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
