/**
 * JMH benchmarks of wheelbeat's timers against the peers (Netty HashedWheelTimer, Netty event-loop
 * scheduling, the JDK's ScheduledThreadPoolExecutor, Agrona's DeadlineTimerWheel, Kafka's
 * SystemTimer) and the suite runner that turns one run into ratios.
 *
 * <p>Every contender is driven through the same thin {@link io.wheelbeat.bench.TimerAdapter}: same
 * tick (2^20 ns where the timer has one), same span (4096 ticks), handles in a preallocated array.
 * Claims of speed are made only from these benchmarks, as ratios measured in the same run; see
 * {@code docs/benchmarks.md}. Not a library: nothing here is API.
 */
package io.wheelbeat.bench;
