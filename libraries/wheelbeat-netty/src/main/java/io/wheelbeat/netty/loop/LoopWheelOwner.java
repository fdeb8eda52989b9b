package io.wheelbeat.netty.loop;

import io.wheelbeat.core.ExecutorDrivenWheel;

/**
 * An event loop that keeps its scheduled tasks on a wheel which {@code EventLoopWheels} also
 * hands wheelbeat's handlers: one wheel per loop. Free of Netty 4.2 types, so checking for it
 * works on Netty 4.1. {@link #wheel()} from any thread.
 */
public interface LoopWheelOwner {

    /**
     * Returns the loop's wheel.
     *
     * @return the wheel
     */
    ExecutorDrivenWheel wheel();
}
