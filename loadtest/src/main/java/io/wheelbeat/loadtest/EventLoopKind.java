package io.wheelbeat.loadtest;

/** Whose event loops the server runs on; the idle handler under test is chosen separately. */
enum EventLoopKind {
    /** Netty's {@code MultiThreadIoEventLoopGroup}: scheduled tasks in each loop's binary heap. */
    NETTY("netty"),
    /** wheelbeat's {@code WheelIoEventLoopGroup}: scheduled tasks on each loop's timing wheel. */
    WHEEL("wheel");

    private final String id;

    EventLoopKind(String id) {
        this.id = id;
    }

    String id() {
        return id;
    }

    @Override
    public String toString() {
        return id;
    }
}
