package io.wheelbeat.loadtest;

import java.util.Locale;

/** Whose event loops the server runs on; the idle handler under test is chosen separately. */
enum EventLoopKind {
    /** Netty's {@code MultiThreadIoEventLoopGroup}: scheduled tasks in each loop's binary heap. */
    NETTY,
    /** wheelbeat's {@code WheelIoEventLoopGroup}: scheduled tasks on each loop's timing wheel. */
    WHEEL;

    /** The option's value and the reports' name: the constant's name in lower case. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return id();
    }
}
