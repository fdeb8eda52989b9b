package io.wheelbeat.loadtest;

/** Which idle handler the server pipeline carries; everything else in the pipeline is the same. */
enum IdleHandlerKind {
    /** wheelbeat's {@code WheelIdleStateHandler} on the event loop's shared wheel. */
    WHEEL("wheel"),
    /** Netty's {@code IdleStateHandler}, one task in the event loop's priority queue per timer. */
    NETTY("netty"),
    /** No idle handler: the baseline that shows what the idle machinery itself costs. */
    NONE("none");

    private final String id;

    IdleHandlerKind(String id) {
        this.id = id;
    }

    String id() {
        return id;
    }

    boolean hasHandler() {
        return this != NONE;
    }

    @Override
    public String toString() {
        return id;
    }
}
