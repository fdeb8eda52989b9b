package io.wheelbeat.loadtest;

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
 */
record LoopSnapshot(long loopScheduledTasks, long channelsActive, long channelsClosed, long messages,
                    long readBatches, long firstIdleEvents, long repeatIdleEvents,
                    long wheelScheduled, long wheelCancelled, long wheelExpired, long wheelPending) {

    static final LoopSnapshot ZERO = new LoopSnapshot(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    LoopSnapshot plus(LoopSnapshot o) {
        return new LoopSnapshot(loopScheduledTasks + o.loopScheduledTasks, channelsActive + o.channelsActive,
                channelsClosed + o.channelsClosed, messages + o.messages, readBatches + o.readBatches,
                firstIdleEvents + o.firstIdleEvents, repeatIdleEvents + o.repeatIdleEvents,
                wheelScheduled + o.wheelScheduled, wheelCancelled + o.wheelCancelled,
                wheelExpired + o.wheelExpired, wheelPending + o.wheelPending);
    }
}
