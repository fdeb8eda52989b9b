package io.wheelbeat.netty.loop;

import io.wheelbeat.core.ExecutorDrivenWheel;

/**
 * An event loop that keeps its scheduled tasks on a wheel of its own: {@code EventLoopWheels}
 * hands wheelbeat's handlers that same wheel, so the loop has one wheel whoever schedules.
 * The loops of {@link WheelIoEventLoopGroup} are such loops. Free of Netty 4.2 types, so that
 * checking for it works on Netty 4.1 too.
 *
 * <p>Thread rules: {@link #wheel()} from any thread; the wheel's own rules apply to its use.
 */
public interface LoopWheelOwner {

    /** The loop's wheel. */
    ExecutorDrivenWheel wheel();
}
