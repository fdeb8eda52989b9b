/**
 * Timers on a hierarchical timing wheel, without Netty: O(1) schedule, cancel and re-arm.
 * {@link io.wheelbeat.core.TimerNode} is an allocation-free timer its owner holds;
 * {@link io.wheelbeat.core.ExecutorDrivenWheel} runs nodes on a single-threaded executor (in
 * wheelbeat-netty, one per event loop); {@link io.wheelbeat.core.WheelTimer} has a thread of its own
 * (the role of Netty's {@code HashedWheelTimer}); {@link io.wheelbeat.core.TimerWheel} is the engine
 * for code that owns a thread and a clock.
 */
package io.wheelbeat.core;
